"""Paused named queues and job types (job_pauses), honoured by every worker's claims.

One new table; no existing row changes. Going back resumes everything that was paused.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create job_pauses."""
    op.create_table(
        "job_pauses",
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column(
            "paused_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint("kind IN ('queue', 'type')", name=op.f("ck_job_pauses_kind_allowed")),
        sa.PrimaryKeyConstraint("kind", "name", name=op.f("pk_job_pauses")),
    )


def downgrade() -> None:
    """Drop job_pauses (every pause is lifted)."""
    op.drop_table("job_pauses")
