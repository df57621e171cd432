"""The shop's tables as SQLAlchemy Core `Table`s; migrations create exactly these.

This metadata serves Alembic (and tests and seeding that insert rows); the adapters' statements
are plain SQL beside the code that runs them (`jobs/queue_sql.py`, the shop repositories).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

from skincare_core.shop.models import NotificationType, OrderStatus, PaymentStatus

JOBS_CHANNEL = "skincare_jobs"
"""The prefix of the NOTIFY channels a committed enqueue signals on, one per named queue."""


def queue_channel(channel: str, queue: str) -> str:
    """The NOTIFY channel of one named queue: a bulk backlog never wakes a critical worker."""
    return f"{channel}.{queue}"


JOB_STATUSES = ("ready", "sent", "running", "cancelled", "dead")
"""A job row is waiting, scheduled or leased (`ready`) or a dead letter (`dead`); acked and
cancelled rows are deleted. With SQS as the queue a row sent on stays as the job's ledger entry:
`sent` (in SQS), `running` (received) or `cancelled` (a tombstone its worker acks unrun)."""


metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def _one_of(column: str, values: tuple[str, ...]) -> CheckConstraint:
    allowed = ", ".join(f"'{v}'" for v in values)
    return CheckConstraint(f"{column} IN ({allowed})", name=f"{column}_allowed")


def _now() -> Column[object]:
    return Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now())


def _id() -> Column[int]:
    return Column("id", BigInteger, Identity(always=True), primary_key=True)


users = Table(
    "users",
    metadata,
    _id(),
    Column("email", Text, nullable=False, unique=True),
    Column("language", Text, nullable=False, server_default="id"),
    _now(),
)

products = Table(
    "products",
    metadata,
    _id(),
    Column("sku", Text, nullable=False, unique=True),
    Column("name", Text, nullable=False),
    Column("price_rupiah", BigInteger, nullable=False),
    Column("stock", Integer, nullable=False),
    CheckConstraint("price_rupiah >= 0", name="price_not_negative"),
    CheckConstraint("stock >= 0", name="stock_not_negative"),
)

cart_items = Table(
    "cart_items",
    metadata,
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("product_id", BigInteger, ForeignKey("products.id"), nullable=False),
    Column("quantity", Integer, nullable=False),
    PrimaryKeyConstraint("user_id", "product_id"),
    CheckConstraint("quantity > 0", name="quantity_positive"),
)

orders = Table(
    "orders",
    metadata,
    _id(),
    Column("order_number", Text, nullable=False, unique=True),
    Column("user_id", BigInteger, ForeignKey("users.id"), nullable=False),
    Column("status", Text, nullable=False),
    Column("payment_status", Text, nullable=False),
    Column("total_rupiah", BigInteger, nullable=False),
    Column("idempotency_key", Text, nullable=False),
    _now(),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    UniqueConstraint("user_id", "idempotency_key"),
    _one_of("status", tuple(OrderStatus)),
    _one_of("payment_status", tuple(PaymentStatus)),
    CheckConstraint("total_rupiah >= 0", name="total_not_negative"),
)

order_items = Table(
    "order_items",
    metadata,
    _id(),
    Column(
        "order_id",
        BigInteger,
        ForeignKey("orders.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("product_id", BigInteger, ForeignKey("products.id"), nullable=False),
    Column("name", Text, nullable=False),
    Column("quantity", Integer, nullable=False),
    Column("unit_price_rupiah", BigInteger, nullable=False),
    CheckConstraint("quantity > 0", name="quantity_positive"),
    CheckConstraint("unit_price_rupiah >= 0", name="price_not_negative"),
)

payments = Table(
    "payments",
    metadata,
    _id(),
    Column("event_id", Text, nullable=True),
    Column("order_id", BigInteger, ForeignKey("orders.id"), nullable=False, index=True),
    Column("status", Text, nullable=False),
    Column("amount_rupiah", BigInteger, nullable=False),
    Column("paid_at", DateTime(timezone=True), nullable=True),
    _now(),
    _one_of("status", tuple(PaymentStatus)),
    CheckConstraint("amount_rupiah > 0", name="amount_positive"),
    # The daily sales summary reads one day's applied payments.
    Index("ix_payments_paid_at", "paid_at", postgresql_where=text("paid_at IS NOT NULL")),
    # The gateway's event id is the idempotency key of webhook intake (index payments_event_id_idx).
    Index(
        "payments_event_id_idx",
        "event_id",
        unique=True,
        postgresql_where=text("event_id IS NOT NULL"),
    ),
)

order_notifications = Table(
    "order_notifications",
    metadata,
    _id(),
    Column("order_id", BigInteger, ForeignKey("orders.id", ondelete="CASCADE"), nullable=False),
    Column("notification_type", Text, nullable=False),
    # NULL while a run holds the send's claim (claim_token until claimed_until) and is sending.
    Column("sent_at", DateTime(timezone=True), nullable=True, server_default=func.now()),
    Column("claim_token", Text, nullable=True),
    Column("claimed_until", DateTime(timezone=True), nullable=True),
    UniqueConstraint("order_id", "notification_type"),
    _one_of("notification_type", tuple(NotificationType)),
    CheckConstraint(
        "sent_at IS NOT NULL OR (claim_token IS NOT NULL AND claimed_until IS NOT NULL)",
        name="sent_or_claimed",
    ),
)

# Reports e-mailed to the shop (the daily sales summary), one per key, with the same send
# claims as order_notifications.
report_notifications = Table(
    "report_notifications",
    metadata,
    Column("report_key", Text, primary_key=True),
    Column("sent_at", DateTime(timezone=True), nullable=True),
    Column("claim_token", Text, nullable=True),
    Column("claimed_until", DateTime(timezone=True), nullable=True),
    CheckConstraint(
        "sent_at IS NOT NULL OR (claim_token IS NOT NULL AND claimed_until IS NOT NULL)",
        name="sent_or_claimed",
    ),
)

invoices = Table(
    "invoices",
    metadata,
    Column(
        "order_id",
        BigInteger,
        ForeignKey("orders.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("storage_key", Text, nullable=False),
    _now(),
)

jobs = Table(
    "jobs",
    metadata,
    Column("id", Text, primary_key=True),
    Column("type", Text, nullable=False),
    Column(
        "body", Text, nullable=False, comment="the job as skincare_core.codec.encode_job wrote it"
    ),
    Column("status", Text, nullable=False, server_default="ready"),
    Column("attempts", Integer, nullable=False, server_default="0"),
    # A delay, a retry's backoff and a lease all push available_at forward, so one index
    # serves fresh, scheduled and retried jobs and expired leases.
    Column("available_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("receipt", UUID(as_uuid=False), nullable=True),
    Column("lease_expires_at", DateTime(timezone=True), nullable=True),
    Column("last_error", Text, nullable=True),
    Column("dead_at", DateTime(timezone=True), nullable=True),
    _now(),
    # The named queue; a row inserted without one lands on `default`.
    Column("queue", Text, nullable=False, server_default="default"),
    # While the job is live (ready, scheduled or running) no other live job has this key.
    Column("unique_key", Text, nullable=True),
    # Within its queue: 1 is claimed first, 4 last (skincare_core.jobs.priority).
    Column("priority", SmallInteger, nullable=False, server_default=text("2")),
    # How often a handler asked to run later (Snooze); those runs spent no attempt.
    Column("snoozes", Integer, nullable=False, server_default="0"),
    # The history's (job_history below): when the current (or last) attempt started, set by the
    # claim, and the attempts settled before it ({start, end, worker, error} each), appended by
    # a retry or a dead-letter.
    Column("started_at", DateTime(timezone=True), nullable=True),
    Column("attempt_log", JSONB, nullable=True),
    _one_of("status", JOB_STATUSES),
    CheckConstraint("attempts >= 0", name="attempts_not_negative"),
    CheckConstraint("priority BETWEEN 1 AND 4", name="priority_in_range"),
    # The claim's index: one queue's ready rows by priority, each in due order, so a claim
    # reads only its queue, and each priority's due rows from the claim floor on.
    Index(
        "ix_jobs_claim",
        "queue",
        "priority",
        "available_at",
        postgresql_where=text("status = 'ready'"),
    ),
    Index("ix_jobs_dead", "dead_at", postgresql_where=text("status = 'dead'")),
    Index(
        "uq_jobs_unique_key",
        "unique_key",
        unique=True,
        postgresql_where=text("status IN ('ready', 'sent', 'running') AND unique_key IS NOT NULL"),
    ),
)

# One row per periodic schedule: the last tick enqueued. A claim moves it forward only to a
# later tick, so of all scheduler processes one enqueues each tick.
job_schedules = Table(
    "job_schedules",
    metadata,
    Column("name", Text, primary_key=True),
    # The rule as the code that last ran it declared it: the CLI tells the next run from it.
    Column("cron", Text, nullable=False),
    Column("timezone", Text, nullable=False),
    Column("job_type", Text, nullable=False),
    Column("last_tick", DateTime(timezone=True), nullable=False),
)

# One row per rate-limited key: the current one-second window and the starts granted in it.
job_rate_windows = Table(
    "job_rate_windows",
    metadata,
    Column("key", Text, primary_key=True),
    Column("window_start", DateTime(timezone=True), nullable=False),
    Column("used", Integer, nullable=False),
    CheckConstraint("used >= 0", name="used_not_negative"),
)

# Jobs finished per named queue and wall-clock minute: the statement that acks a batch (or
# dead-letters a job) adds to its minute's row, so a settle costs one row update, not a row per
# job. Each connection has a row of its own (`slot`, of its backend pid), so concurrent acks do
# not wait on one lock; readers sum them. Rows older than an hour are pruned now and then
# (`outcomes_sql.PRUNE`).
job_outcomes = Table(
    "job_outcomes",
    metadata,
    Column("queue", Text, nullable=False),
    Column("minute", DateTime(timezone=True), nullable=False),
    Column("slot", SmallInteger, nullable=False, server_default=text("0")),
    Column("done", BigInteger, nullable=False, server_default=text("0")),
    Column("failed", BigInteger, nullable=False, server_default=text("0")),
    PrimaryKeyConstraint("queue", "minute", "slot"),
)

# A job claimed under a concurrency cap: its cap and the lease it was claimed with. It counts
# toward the cap while the job's row holds that receipt unexpired (so an ack, a retry, a
# dead letter or an expired lease frees the slot without a write here); the next claim of the
# cap deletes the rows that no longer count (jobs/capped_claims.py).
job_cap_leases = Table(
    "job_cap_leases",
    metadata,
    Column("cap", Text, nullable=False),
    Column("job_id", Text, nullable=False),
    Column("receipt", UUID(as_uuid=False), nullable=False),
    PrimaryKeyConstraint("cap", "job_id"),
)

# What an operator paused: a named queue (`kind` 'queue') or a job type ('type'), by name. Every
# worker reads it at most every half second (skincare_core.jobs.steering.PauseWatch); a row
# stays until it is resumed, through restarts.
job_pauses = Table(
    "job_pauses",
    metadata,
    Column("kind", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("paused_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("kind", "name"),
    _one_of("kind", ("queue", "type")),
)

HISTORY_STATES = ("done", "dead", "cancelled")
"""A finished job's end in job_history: acked, dead-lettered or cancelled before it ran."""

# Finished jobs, kept for a retention (done and cancelled: hours, dead: days) and pruned in
# batches by one process at a time. A row is written by the statement that settles the job (the
# ack's DELETE, the dead-letter's UPDATE, the cancel's DELETE feed an INSERT ... SELECT), so
# history costs no round trip, and each index is one more insert per job: the ack path pays for
# three (id, args, type). A row is one run of a job from its enqueue (or redrive) to its end: a
# redriven job has a row per run, so `id` is not unique. Its last attempt is in the columns
# (`started_at`, `worker`, `finished_at`, `last_error`), the ones before it in `attempt_log`
# (a JSON array of {start, end, worker, error}; NULL when there were none).
job_history = Table(
    "job_history",
    metadata,
    Column("id", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("queue", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("args", JSONB, nullable=False),
    Column("enqueued_at", DateTime(timezone=True), nullable=True),
    Column("started_at", DateTime(timezone=True), nullable=True),
    Column("finished_at", DateTime(timezone=True), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("worker", Text, nullable=True),
    Column("attempt_log", JSONB, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("request_id", Text, nullable=True),
    Column("trace_id", Text, nullable=True),
    _one_of("state", HISTORY_STATES),
    Index("ix_job_history_id", "id"),
    # Argument search: `args @> '{"order_id": "123"}'`.
    Index(
        "ix_job_history_args",
        "args",
        postgresql_using="gin",
        postgresql_ops={"args": "jsonb_path_ops"},
    ),
    # A type's jobs by time; over every type, one walk per type (few): the cleaner's and a
    # search's without a type.
    Index("ix_job_history_type_finished_at", "type", "finished_at"),
    # Dead and cancelled jobs by time (their own retention and searches); a done job, the
    # common end, is not in it.
    Index(
        "ix_job_history_failed_finished_at",
        "finished_at",
        postgresql_where=text("state <> 'done'"),
    ),
)

# Per named queue, job type and minute: jobs done, retried and failed, and histograms of their run
# times and pickup latencies (skincare_core.jobs.minutes.BOUNDS_MS). Each worker process writes
# its own counts every few seconds into its own `slot` (of its backend pid), off the settle path,
# so no two processes wait on one row; the ops page sums the last hour. Rows older than two
# hours are pruned by the writers.
job_minutes = Table(
    "job_minutes",
    metadata,
    Column("queue", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("minute", DateTime(timezone=True), nullable=False),
    Column("slot", SmallInteger, nullable=False),
    Column("done", BigInteger, nullable=False, server_default=text("0")),
    Column("retried", BigInteger, nullable=False, server_default=text("0")),
    Column("failed", BigInteger, nullable=False, server_default=text("0")),
    Column("durations", ARRAY(BigInteger), nullable=False),
    Column("pickups", ARRAY(BigInteger), nullable=False),
    PrimaryKeyConstraint("queue", "type", "minute", "slot"),
    Index("ix_job_minutes_minute", "minute"),
)
