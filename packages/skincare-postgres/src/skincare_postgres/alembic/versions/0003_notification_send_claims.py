"""Send claims on order_notifications: a row may hold a live claim before it records a send.

`claim_token` and `claimed_until` are the lease a run takes before calling the e-mail provider;
`sent_at` stays NULL until the send is recorded. Existing rows are all sent and keep their
`sent_at`. The downgrade drops unsent claims: their e-mails' jobs then send without a lease.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-09
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLE = "order_notifications"
_CHECK = "ck_order_notifications_sent_or_claimed"


def upgrade() -> None:
    """Add the claim columns and let `sent_at` be NULL while a claim is live."""
    op.add_column(_TABLE, sa.Column("claim_token", sa.Text(), nullable=True))
    op.add_column(_TABLE, sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True))
    op.alter_column(_TABLE, "sent_at", existing_type=sa.DateTime(timezone=True), nullable=True)
    op.create_check_constraint(
        op.f(_CHECK),
        _TABLE,
        "sent_at IS NOT NULL OR (claim_token IS NOT NULL AND claimed_until IS NOT NULL)",
    )


def downgrade() -> None:
    """Forget unsent claims and drop the claim columns."""
    op.execute(sa.text(f"DELETE FROM {_TABLE} WHERE sent_at IS NULL"))
    op.drop_constraint(op.f(_CHECK), _TABLE, type_="check")
    op.alter_column(_TABLE, "sent_at", existing_type=sa.DateTime(timezone=True), nullable=False)
    op.drop_column(_TABLE, "claimed_until")
    op.drop_column(_TABLE, "claim_token")
