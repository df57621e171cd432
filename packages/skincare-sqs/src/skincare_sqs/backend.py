"""The SQS backend: one SQS queue and DLQ per named queue, and the job ledger beside them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.caps import NO_CAPS, ConcurrencyCaps
from skincare_core.jobs.history import JobHistory
from skincare_core.jobs.minutes import MinuteStore
from skincare_core.jobs.ports import RateLimiter, ScheduleStore
from skincare_core.jobs.steering import Pauses
from skincare_sqs.client import Sender
from skincare_sqs.dead_letters import EveryDeadLetter
from skincare_sqs.ledger import JobLedger, RelayedOutbox, SqsJobActions, SqsSink
from skincare_sqs.provisioning import QueueUrls
from skincare_sqs.queue import SqsQueue
from skincare_sqs.stats import SqsQueueStats

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient


@asynccontextmanager
async def sqs_backend(
    client: SQSClient,
    *,
    urls: Mapping[str, QueueUrls],
    ledger: JobLedger,
    queues: Iterable[str],
    wait_time_seconds: int = 20,
    schedules: ScheduleStore | None = None,
    rate_limiter: RateLimiter | None = None,
    caps: ConcurrencyCaps = NO_CAPS,
    cap_lease: timedelta = timedelta(seconds=30),
    pauses: Pauses | None = None,
    minutes: MinuteStore | None = None,
    history: JobHistory | None = None,
) -> AsyncIterator[Backend]:
    """A `SqsQueue` per named queue in `queues`; the dead letters, sink and stats of every named
    queue in `urls` (the SQS queue and DLQ of each, see `ensure_queues`).

    `ledger` is the database's outbox and job ledger (entered by the caller): the business
    transaction's jobs wait there, a relay (the backend's `outbox`) sends them when they are due
    within 15 minutes, and each job's row keeps its unique key and its cancellation until it
    ends (`skincare_sqs.ledger`), and counts the jobs that ended (the backend's `outcomes`). The
    boto3 client is the caller's; nothing here needs closing.
    A queue of `queues` missing from `urls` is a ValueError.

    SQS keeps neither periodic schedules nor rate windows nor a history: `schedules`,
    `rate_limiter` and `history` come from the ledger's database
    (`skincare_postgres.PostgresScheduleStore` writes a tick's job as a ledger row, which the
    relay sends like any other; `PostgresJobLedger.history` reads the timelines the ledger
    keeps), or stay None when there are none.

    Concurrency caps are enforced through the ledger's database: a received job starts only
    while every cap it falls under has room, counting every process's running jobs there
    (`job_cap_leases`, as on Postgres); its slot is held for `cap_lease` (give the workers'
    visibility timeout) and extended with its lease, so a crashed worker's slots come back
    when that ends. A job held back is sent again as a new message, unrun: it spends no
    attempt and no receive of the redrive policy (`skincare_sqs.caps`); a freed slot is taken
    at once in the process that freed it, within `CAP_WAIT` (0.25 s) in another. A queue no
    cap touches receives as without caps. (A priority other than the default is
    `PriorityUnsupported` at enqueue.)

    Nor does SQS keep pauses: `pauses` (`skincare_postgres.PostgresPauses`, in the ledger's
    database) stop each queue's receives, and the ledger holds a paused job unsent. The
    backend's `actions` run or cancel a job through its ledger row. `minutes` (in the same
    database) keeps the workers' per-minute counts of each job type.
    """
    missing = sorted(set(queues) - set(urls))
    if missing:
        raise ValueError(f"no SQS queue for the named queue(s) {', '.join(missing)}")
    every = {
        name: SqsQueue(
            client,
            queue_url=pair.queue_url,
            dlq_url=pair.dlq_url,
            wait_time_seconds=wait_time_seconds,
            name=name,
            ledger=ledger,
            pauses=pauses,
            caps=caps,
            cap_lease=cap_lease,
        )
        for name, pair in urls.items()
    }
    dead_letters = EveryDeadLetter({n: q.dead_letters for n, q in every.items()})
    outbox = RelayedOutbox(ledger)
    senders = {name: Sender(client, pair.queue_url) for name, pair in urls.items()}
    pairs = {name: (pair.queue_url, pair.dlq_url) for name, pair in urls.items()}
    yield Backend(
        queues={name: every[name] for name in queues},
        dead_letters=dead_letters,
        sink=SqsSink(senders, ledger=ledger, outbox=outbox),
        outbox=outbox,
        stats=SqsQueueStats(client, pairs),
        schedules=schedules,
        rate_limiter=rate_limiter,
        outcomes=ledger,
        pauses=pauses,
        actions=SqsJobActions(ledger, dead_letters),
        minutes=minutes,
        history=history,
    )
