"""Jobs finished per named queue and minute (done, failed), for the ops page's last minutes.

One new table; no existing row changes. It holds counts only, so going back loses nothing a
job needs.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create job_outcomes."""
    op.create_table(
        "job_outcomes",
        sa.Column("queue", sa.Text(), nullable=False),
        sa.Column("minute", sa.DateTime(timezone=True), nullable=False),
        sa.Column("slot", sa.SmallInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("done", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("failed", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.PrimaryKeyConstraint("queue", "minute", "slot", name=op.f("pk_job_outcomes")),
    )


def downgrade() -> None:
    """Drop job_outcomes."""
    op.drop_table("job_outcomes")
