"""PostgreSQL adapters: the job engine's (`skincare_postgres.jobs`: the Postgres queue through
`postgres_backend`; `postgres_job_ledger` for the SQS backend's outbox and ledger;
`enqueue_in_transaction` for a job in the caller's own transaction), the shop's
(`skincare_postgres.shop`: unit of work and repositories), and the plumbing both share
(engine, connections, errors, schema, migrations)."""

from skincare_postgres.engine import create_engine
from skincare_postgres.errors import DatabaseUnavailable
from skincare_postgres.jobs import queue_sql as jobs_sql
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
from skincare_postgres.migrations import downgrade, upgrade
from skincare_postgres.schema import JOBS_CHANNEL, metadata
from skincare_postgres.shop.unit_of_work import PostgresDatabase, PostgresUnitOfWork

__all__ = [
    "JOBS_CHANNEL",
    "DatabaseUnavailable",
    "PostgresDatabase",
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
    "PostgresUnitOfWork",
    "TransactionConnection",
    "create_engine",
    "downgrade",
    "enqueue_in_transaction",
    "jobs_sql",
    "metadata",
    "postgres_backend",
    "postgres_job_ledger",
    "upgrade",
]
