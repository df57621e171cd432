"""The Postgres queue in the backend shape, and the SQS backend's job ledger and outbox.

Both take an engine they do not own (the caller disposes of it) and close the connections they
open themselves on exit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.caps import NO_CAPS, ConcurrencyCaps
from skincare_core.jobs.routing import DEFAULT_QUEUE
from skincare_postgres.jobs.dead_letters import PostgresDeadLetters
from skincare_postgres.jobs.history import PostgresJobHistory
from skincare_postgres.jobs.job_ledger import PostgresJobLedger
from skincare_postgres.jobs.minutes import PostgresMinuteStore
from skincare_postgres.jobs.notifier import PostgresNotifier
from skincare_postgres.jobs.outcomes import PostgresJobOutcomes
from skincare_postgres.jobs.queue import PostgresQueue
from skincare_postgres.jobs.rate_limits import PostgresRateLimiter
from skincare_postgres.jobs.schedules import PostgresScheduleStore
from skincare_postgres.jobs.sink import PostgresSink
from skincare_postgres.jobs.stats import PostgresQueueStats
from skincare_postgres.jobs.steering import PostgresJobActions, PostgresPauses


@asynccontextmanager
async def postgres_backend(
    engine: AsyncEngine,
    *,
    queues: Iterable[str] = (DEFAULT_QUEUE,),
    visibility_timeout: timedelta = timedelta(seconds=30),
    poll_interval: timedelta = timedelta(seconds=1),
    notifier: PostgresNotifier | None = None,
    caps: ConcurrencyCaps = NO_CAPS,
    history: bool = True,
) -> AsyncIterator[Backend]:
    """The jobs table as one `PostgresQueue` per named queue in `queues`, and the dead letters,
    the sink, the stats and the finished jobs (job_outcomes) of every queue, the pauses
    (job_pauses, honoured by every queue's claims) and the actions on one job. `caps`: the
    concurrency caps every queue's claims honour, counted across every process.

    No relay runs: the unit of work's outbox row is the queue row, so `outbox` is None. A queue
    opens its connections (two, and one to LISTEN) when it is first used. Every enqueue wakes
    its queue through `notifier` (None: one shared by this backend) after its commit. With
    `history` the queues keep every job's timeline (job_history) and `history` reads it.
    """
    notifier = PostgresNotifier(engine) if notifier is None else notifier
    pauses = PostgresPauses(engine)
    async with AsyncExitStack() as stack:
        served = {}
        for name in queues:
            queue = PostgresQueue(
                engine,
                name=name,
                visibility_timeout=visibility_timeout,
                poll_interval=poll_interval,
                notifier=notifier,
                caps=caps,
                pauses=pauses,
                history=history,
            )
            served[name] = await stack.enter_async_context(queue)
        yield Backend(
            queues=served,
            dead_letters=PostgresDeadLetters(engine),
            sink=PostgresSink(engine, notifier=notifier),
            outbox=None,
            stats=PostgresQueueStats(engine),
            schedules=PostgresScheduleStore(engine),
            rate_limiter=PostgresRateLimiter(engine),
            outcomes=PostgresJobOutcomes(engine),
            pauses=pauses,
            actions=PostgresJobActions(engine, history=history),
            minutes=PostgresMinuteStore(engine),
            history=PostgresJobHistory(engine) if history else None,
        )


@asynccontextmanager
async def postgres_job_ledger(
    engine: AsyncEngine, *, window: timedelta, history: bool = True
) -> AsyncIterator[PostgresJobLedger]:
    """The outbox rows of every named queue, for a relay that forwards them to SQS when they are
    due within `window`, and the ledger that keeps each job's row until it ends (and, with
    `history`, its timeline after)."""
    yield PostgresJobLedger(engine, window=window, history=history)
