"""Job rows for the SQS backend outlive the relay: `sent`, `running` and `cancelled`.

With SQS as the queue a jobs row is the outbox entry, then the job's ledger entry while it is in
SQS: `sent` (in SQS, waiting or scheduled), `running` (received), `cancelled` (a tombstone the
receiving worker acks without running). The unique index covers every live status, so a key is
held until the job is acked, dead or cancelled. The Postgres queue keeps using `ready` and `dead`.

The downgrade deletes ledger rows (their jobs stay in SQS) and restores the narrower index.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-10
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CHECK = "ck_jobs_status_allowed"
_INDEX = "uq_jobs_unique_key"


def upgrade() -> None:
    """Allow the ledger statuses; a key is unique over every live status."""
    _statuses("('ready', 'sent', 'running', 'cancelled', 'dead')")
    _unique_key_over("status IN ('ready', 'sent', 'running') AND unique_key IS NOT NULL")


def downgrade() -> None:
    """Drop the ledger rows and statuses."""
    op.execute(sa.text("DELETE FROM jobs WHERE status IN ('sent', 'running', 'cancelled')"))
    _unique_key_over("status = 'ready' AND unique_key IS NOT NULL")
    _statuses("('ready', 'dead')")


def _statuses(allowed: str) -> None:
    op.drop_constraint(op.f(_CHECK), "jobs", type_="check")
    op.create_check_constraint(op.f(_CHECK), "jobs", f"status IN {allowed}")


def _unique_key_over(where: str) -> None:
    op.drop_index(_INDEX, table_name="jobs")
    op.create_index(_INDEX, "jobs", ["unique_key"], unique=True, postgresql_where=sa.text(where))
