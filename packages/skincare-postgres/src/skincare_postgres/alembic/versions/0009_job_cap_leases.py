"""Concurrency caps: job_cap_leases holds, for each job claimed under a cap, the cap and the
lease (job id and receipt) it was claimed with. A claim counts the rows whose job still holds
that lease unexpired; rows of finished, retried or expired leases count for nothing and are
deleted by the next claim of their cap.

One new table; no existing row changes. Going back drops it (caps then cannot run).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create job_cap_leases."""
    op.create_table(
        "job_cap_leases",
        sa.Column("cap", sa.Text(), nullable=False),
        sa.Column("job_id", sa.Text(), nullable=False),
        sa.Column("receipt", postgresql.UUID(as_uuid=False), nullable=False),
        sa.PrimaryKeyConstraint("cap", "job_id", name=op.f("pk_job_cap_leases")),
    )


def downgrade() -> None:
    """Drop job_cap_leases."""
    op.drop_table("job_cap_leases")
