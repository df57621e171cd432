"""Job priorities within a named queue: jobs gains `priority` (1 most urgent .. 4, default 2)
and the claim index leads with it after the queue, so a claim reads each priority's due rows in
due order, most urgent first.

A constant default fills existing rows without rewriting the table; every waiting job keeps its
place (priority 2, as each job had before). The index is rebuilt inside the migration's
transaction, which locks the jobs table for writes while it builds: the table holds only live
and dead jobs, so this takes moments. Going back drops the column: the order returns to due time.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_READY = sa.text("status = 'ready'")


def upgrade() -> None:
    """Add jobs.priority and lead the claim index with it after the queue."""
    op.add_column(
        "jobs",
        sa.Column("priority", sa.SmallInteger(), server_default=sa.text("2"), nullable=False),
    )
    op.create_check_constraint(
        op.f("ck_jobs_priority_in_range"), "jobs", "priority BETWEEN 1 AND 4"
    )
    op.drop_index("ix_jobs_claim", table_name="jobs", postgresql_where=_READY)
    op.create_index(
        "ix_jobs_claim", "jobs", ["queue", "priority", "available_at"], postgresql_where=_READY
    )


def downgrade() -> None:
    """Back to one order by due time."""
    op.drop_index("ix_jobs_claim", table_name="jobs", postgresql_where=_READY)
    op.create_index("ix_jobs_claim", "jobs", ["queue", "available_at"], postgresql_where=_READY)
    op.drop_constraint(op.f("ck_jobs_priority_in_range"), "jobs", type_="check")
    op.drop_column("jobs", "priority")
