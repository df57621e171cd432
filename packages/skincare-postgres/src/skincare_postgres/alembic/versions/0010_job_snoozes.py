"""Snoozes per job: a handler's `Snooze` runs the job again later without spending an attempt,
and the count of snoozes bounds how often it may.

One new column with a default; no existing row changes meaning. Going back drops the counts:
a snoozing job then starts its bound over.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add jobs.snoozes."""
    op.add_column(
        "jobs",
        sa.Column("snoozes", sa.Integer(), server_default=sa.text("0"), nullable=False),
    )


def downgrade() -> None:
    """Drop jobs.snoozes."""
    op.drop_column("jobs", "snoozes")
