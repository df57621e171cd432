"""`skincare-worker [--queues NAMES]`: one job worker per named queue (and, where the backend
needs one, the outbox relay; where it keeps a history, its cleaner) in one process, until
SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Mapping, Sequence
from functools import partial

import anyio

from skincare_core.jobs.definitions import Definitions
from skincare_core.jobs.router import Handler
from skincare_core.jobs.scheduler import Schedules
from skincare_services.compose import NO_DEFINITIONS, NO_HANDLERS, worker_process
from skincare_services.scheduling import NotSupportedHere
from skincare_services.setting_values import served_queues
from skincare_services.settings import Settings
from skincare_services.startup import settings_or_exit

logger = logging.getLogger(__name__)


async def stop_on_signal(scope: anyio.CancelScope) -> None:
    """Cancel `scope` on the first SIGTERM or SIGINT: the worker then drains and returns."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            logger.info("worker.signal", extra={"signal": signal.Signals(signum).name})
            scope.cancel()
            return


async def run_worker(
    settings: Settings,
    *,
    handlers: Mapping[str, Handler] = NO_HANDLERS,
    definitions: Definitions = NO_DEFINITIONS,
    queues: Sequence[str] | None = None,
    schedules: Schedules | None = None,
) -> None:
    """Run until a signal arrives; in-flight jobs get the shutdown grace.

    `handlers` (job type -> handler) and `definitions` (typed job types, with their queues,
    retry policies and timeouts) go to `worker_process`, served beside the shop's types;
    `queues` names the subset of `settings.worker_queues` to serve (None: all); `schedules`
    are periodic jobs this process enqueues (with every other worker, each tick once).
    """
    served = served_queues(settings.worker_queues, queues)
    # Blocking adapters (smtplib, boto3) run in threads: allow one per job slot at least.
    slots = sum(settings.worker_queues[name] for name in served)
    limiter = anyio.to_thread.current_default_thread_limiter()
    limiter.total_tokens = max(limiter.total_tokens, slots + 8)
    async with (
        worker_process(
            settings=settings,
            handlers=handlers,
            definitions=definitions,
            queues=served,
            schedules=schedules,
        ) as process,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(stop_on_signal, tg.cancel_scope)
        for worker in process.workers.values():
            tg.start_soon(worker.run)
        if process.relay is not None:
            tg.start_soon(process.relay.run)
        if process.endpoint is not None:
            serve = process.endpoint.serve
            await tg.start(partial(serve, host=settings.metrics_host, port=settings.metrics_port))
        if process.scheduler is not None:
            tg.start_soon(process.scheduler.run)
        if process.minutes is not None:
            tg.start_soon(process.minutes.run)
        if process.cleaner is not None:
            tg.start_soon(process.cleaner.run)
        concurrency = {name: settings.worker_queues[name] for name in served}
        logger.info("worker.started", extra={"queue": settings.queue, "queues": concurrency})
    logger.info("worker.stopped")


def parse_queues(argv: Sequence[str] | None, settings: Settings) -> tuple[str, ...]:
    """The queues `--queues a,b` names, each configured; one line and exit 2 otherwise."""
    parser = argparse.ArgumentParser(prog="skincare-worker", description=__doc__)
    parser.add_argument(
        "--queues",
        help="comma-separated named queues to serve, a subset of SKINCARE_WORKER_QUEUES"
        " (default: all of them)",
    )
    args = parser.parse_args(argv)
    chosen = None if args.queues is None else [q.strip() for q in args.queues.split(",")]
    try:
        return served_queues(settings.worker_queues, chosen)
    except ValueError as exc:
        print(f"skincare-worker: --queues: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point."""
    settings = settings_or_exit("worker")
    queues = parse_queues(argv, settings)
    try:
        anyio.run(lambda: run_worker(settings, queues=queues))
    except NotSupportedHere as exc:
        print(f"skincare-worker: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
