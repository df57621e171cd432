"""PostgreSQL adapters: schema, migrations, unit of work, repositories and the Postgres queue
(`postgres_backend`; `postgres_job_ledger` for the SQS backend's outbox and ledger)."""

from skincare_postgres.backend import postgres_backend, postgres_job_ledger
from skincare_postgres.engine import create_engine
from skincare_postgres.errors import DatabaseUnavailable
from skincare_postgres.job_ledger import PostgresJobLedger
from skincare_postgres.migrations import downgrade, upgrade
from skincare_postgres.notifier import PostgresNotifier
from skincare_postgres.outbox_storage import PostgresOutboxStorage
from skincare_postgres.periodic import PostgresRateLimiter, PostgresScheduleStore
from skincare_postgres.queue import PostgresQueue
from skincare_postgres.schema import JOBS_CHANNEL, metadata
from skincare_postgres.sink import PostgresSink
from skincare_postgres.unit_of_work import PostgresDatabase, PostgresUnitOfWork

__all__ = [
    "JOBS_CHANNEL",
    "DatabaseUnavailable",
    "PostgresDatabase",
    "PostgresJobLedger",
    "PostgresNotifier",
    "PostgresOutboxStorage",
    "PostgresQueue",
    "PostgresRateLimiter",
    "PostgresScheduleStore",
    "PostgresSink",
    "PostgresUnitOfWork",
    "create_engine",
    "downgrade",
    "metadata",
    "postgres_backend",
    "postgres_job_ledger",
    "upgrade",
]
