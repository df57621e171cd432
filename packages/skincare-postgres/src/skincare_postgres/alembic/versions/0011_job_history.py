"""Job history: finished jobs kept for a retention (job_history), and what the jobs table keeps
of a live job's attempts (started_at, attempt_log).

The jobs table gains two nullable columns (no rewrite). The dead jobs already stored are copied
into job_history, so a search finds them; their attempts before this revision are not known.
The downgrade drops the table and the columns: the history is lost, no job is.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BACKFILL_DEAD = """
INSERT INTO job_history (id, type, queue, state, args, enqueued_at, finished_at, attempts,
    last_error)
SELECT id, type, queue, 'dead',
    CASE WHEN pg_input_is_valid(body, 'jsonb') THEN COALESCE(body::jsonb -> 'payload', '{}')
        ELSE '{}' END,
    created_at, COALESCE(dead_at, now()), attempts, last_error
FROM jobs WHERE status = 'dead'
"""


def upgrade() -> None:
    """Add the attempt columns to jobs, create job_history and copy the dead jobs into it."""
    op.add_column("jobs", sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("jobs", sa.Column("attempt_log", postgresql.JSONB(), nullable=True))
    op.create_table(
        "job_history",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("queue", sa.Text(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("args", postgresql.JSONB(), nullable=False),
        sa.Column("enqueued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("worker", sa.Text(), nullable=True),
        sa.Column("attempt_log", postgresql.JSONB(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("request_id", sa.Text(), nullable=True),
        sa.Column("trace_id", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "state IN ('done', 'dead', 'cancelled')", name=op.f("ck_job_history_state_allowed")
        ),
    )
    op.create_index("ix_job_history_id", "job_history", ["id"])
    op.create_index(
        "ix_job_history_args",
        "job_history",
        ["args"],
        postgresql_using="gin",
        postgresql_ops={"args": "jsonb_path_ops"},
    )
    op.create_index("ix_job_history_type_finished_at", "job_history", ["type", "finished_at"])
    op.create_index(
        "ix_job_history_failed_finished_at",
        "job_history",
        ["finished_at"],
        postgresql_where=sa.text("state <> 'done'"),
    )
    op.execute(sa.text(_BACKFILL_DEAD))


def downgrade() -> None:
    """Drop job_history and the attempt columns."""
    op.drop_table("job_history")
    op.drop_column("jobs", "attempt_log")
    op.drop_column("jobs", "started_at")
