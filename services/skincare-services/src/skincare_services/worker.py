"""`skincare-worker`: runs the job worker (and, with SQS, the outbox relay) until SIGTERM/SIGINT."""

from __future__ import annotations

import logging
import signal
from collections.abc import Mapping

import anyio

from skincare_core.jobs.router import Handler
from skincare_services.compose import NO_HANDLERS, worker_process
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


async def run_worker(settings: Settings, *, handlers: Mapping[str, Handler] = NO_HANDLERS) -> None:
    """Run until a signal arrives; in-flight jobs get the shutdown grace.

    `handlers` (job type -> handler) go to `worker_process`, served beside the shop's types.
    """
    # Blocking adapters (smtplib, boto3) run in threads: allow one per job slot, not anyio's 40.
    limiter = anyio.to_thread.current_default_thread_limiter()
    limiter.total_tokens = max(limiter.total_tokens, settings.worker_concurrency + 8)
    async with (
        worker_process(settings=settings, handlers=handlers) as process,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(stop_on_signal, tg.cancel_scope)
        tg.start_soon(process.worker.run)
        if process.relay is not None:
            tg.start_soon(process.relay.run)
        logger.info("worker.started", extra={"queue": settings.queue})
    logger.info("worker.stopped")


def main() -> None:
    """Console entry point."""
    anyio.run(run_worker, settings_or_exit("worker"))


if __name__ == "__main__":
    main()
