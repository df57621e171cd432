"""Named queues, unique keys and expired orders.

jobs gains `queue` (existing rows, and rows written by code that predates it, go to `default`)
and `unique_key`; the claim index leads with the queue; a partial unique index keeps one live
job per key. orders may be `expired`.

Both steps keep every job row: an upgrade while jobs wait (or run) loses none of them. The
indexes are built inside the migration's transaction, which locks the jobs table for writes
while they build: the table holds only live and dead jobs, so this takes moments.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-08
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_READY = sa.text("status = 'ready'")
_STATUSES_BEFORE = "status IN ('pending', 'paid', 'cancelled')"
_STATUSES_AFTER = "status IN ('pending', 'paid', 'cancelled', 'expired')"


def upgrade() -> None:
    """Add the columns and indexes; allow expired orders."""
    # A constant default fills existing rows without rewriting the table.
    op.add_column("jobs", sa.Column("queue", sa.Text(), server_default="default", nullable=False))
    op.add_column("jobs", sa.Column("unique_key", sa.Text(), nullable=True))
    op.drop_index("ix_jobs_claim", table_name="jobs", postgresql_where=_READY)
    op.create_index(
        "ix_jobs_claim", "jobs", ["queue", "available_at"], unique=False, postgresql_where=_READY
    )
    op.create_index(
        "uq_jobs_unique_key",
        "jobs",
        ["unique_key"],
        unique=True,
        postgresql_where=sa.text("status = 'ready' AND unique_key IS NOT NULL"),
    )
    _order_statuses(_STATUSES_AFTER)


def downgrade() -> None:
    """Back to one queue without keys; an expired order becomes cancelled."""
    op.execute("UPDATE orders SET status = 'cancelled' WHERE status = 'expired'")
    _order_statuses(_STATUSES_BEFORE)
    op.drop_index("uq_jobs_unique_key", table_name="jobs")
    op.drop_index("ix_jobs_claim", table_name="jobs", postgresql_where=_READY)
    op.create_index(
        "ix_jobs_claim", "jobs", ["available_at"], unique=False, postgresql_where=_READY
    )
    op.drop_column("jobs", "unique_key")
    op.drop_column("jobs", "queue")


def _order_statuses(allowed: str) -> None:
    op.drop_constraint(op.f("ck_orders_status_allowed"), "orders", type_="check")
    op.create_check_constraint(op.f("ck_orders_status_allowed"), "orders", allowed)
