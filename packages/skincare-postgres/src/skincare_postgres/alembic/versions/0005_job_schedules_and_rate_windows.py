"""Periodic schedules' last ticks and rate limits' one-second windows.

Two new tables; no existing row changes, so jobs stored under 0004 are kept as they are.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create job_schedules and job_rate_windows."""
    op.create_table(
        "job_schedules",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("cron", sa.Text(), nullable=False),
        sa.Column("timezone", sa.Text(), nullable=False),
        sa.Column("job_type", sa.Text(), nullable=False),
        sa.Column("last_tick", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_job_schedules")),
    )
    op.create_table(
        "job_rate_windows",
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used", sa.Integer(), nullable=False),
        sa.CheckConstraint("used >= 0", name=op.f("ck_job_rate_windows_used_not_negative")),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_job_rate_windows")),
    )


def downgrade() -> None:
    """Drop both tables (schedules then start again at their next tick)."""
    op.drop_table("job_rate_windows")
    op.drop_table("job_schedules")
