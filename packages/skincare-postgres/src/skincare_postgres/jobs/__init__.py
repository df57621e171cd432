"""The job engine's adapters on PostgreSQL: the queue (claims, leases, wake-ups), its dead
letters, stats and outcomes, the outbox writer and sink, the SQS backend's outbox storage and
job ledger, periodic schedules and rate limits, and the SQL each of them runs."""

from skincare_postgres.jobs.backend import postgres_backend, postgres_job_ledger
from skincare_postgres.jobs.dead_letters import PostgresDeadLetters
from skincare_postgres.jobs.job_ledger import PostgresJobLedger
from skincare_postgres.jobs.minutes import PostgresMinuteStore
from skincare_postgres.jobs.notifier import PostgresNotifier
from skincare_postgres.jobs.outbox_storage import PostgresOutboxStorage
from skincare_postgres.jobs.outbox_writer import TransactionConnection, enqueue_in_transaction
from skincare_postgres.jobs.outcomes import PostgresJobOutcomes
from skincare_postgres.jobs.queue import PostgresQueue
from skincare_postgres.jobs.rate_limits import PostgresRateLimiter
from skincare_postgres.jobs.schedules import PostgresScheduleStore
from skincare_postgres.jobs.sink import PostgresSink
from skincare_postgres.jobs.stats import PostgresQueueStats
from skincare_postgres.jobs.steering import PostgresJobActions, PostgresPauses

__all__ = [
    "PostgresDeadLetters",
    "PostgresJobActions",
    "PostgresJobLedger",
    "PostgresJobOutcomes",
    "PostgresMinuteStore",
    "PostgresNotifier",
    "PostgresOutboxStorage",
    "PostgresPauses",
    "PostgresQueue",
    "PostgresQueueStats",
    "PostgresRateLimiter",
    "PostgresScheduleStore",
    "PostgresSink",
    "TransactionConnection",
    "enqueue_in_transaction",
    "postgres_backend",
    "postgres_job_ledger",
]
