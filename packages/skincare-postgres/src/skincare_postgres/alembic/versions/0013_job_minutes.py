"""Per job type and minute: done, retried, failed, run-time and pickup histograms (job_minutes),
for the ops page's hour of trends and percentiles.

One new table; no existing row changes. It holds counts only: going back loses no job.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create job_minutes."""
    op.create_table(
        "job_minutes",
        sa.Column("queue", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("minute", sa.DateTime(timezone=True), nullable=False),
        sa.Column("slot", sa.SmallInteger(), nullable=False),
        sa.Column("done", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("retried", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("failed", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("durations", postgresql.ARRAY(sa.BigInteger()), nullable=False),
        sa.Column("pickups", postgresql.ARRAY(sa.BigInteger()), nullable=False),
        sa.PrimaryKeyConstraint("queue", "type", "minute", "slot", name=op.f("pk_job_minutes")),
    )
    op.create_index(op.f("ix_job_minutes_minute"), "job_minutes", ["minute"])


def downgrade() -> None:
    """Drop job_minutes."""
    op.drop_index(op.f("ix_job_minutes_minute"), table_name="job_minutes")
    op.drop_table("job_minutes")
