"""Reports e-mailed to the shop (the daily sales summary) and the claims to send them, and an
index on payments' paid_at for the summary's one-day query.

One new table and an index; no existing row changes.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create report_notifications and ix_payments_paid_at."""
    op.create_table(
        "report_notifications",
        sa.Column("report_key", sa.Text(), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("claim_token", sa.Text(), nullable=True),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "sent_at IS NOT NULL OR (claim_token IS NOT NULL AND claimed_until IS NOT NULL)",
            name=op.f("ck_report_notifications_sent_or_claimed"),
        ),
        sa.PrimaryKeyConstraint("report_key", name=op.f("pk_report_notifications")),
    )
    op.create_index(
        op.f("ix_payments_paid_at"),
        "payments",
        ["paid_at"],
        postgresql_where=sa.text("paid_at IS NOT NULL"),
    )


def downgrade() -> None:
    """Drop both (a summary whose send was recorded may then be sent again)."""
    op.drop_index(op.f("ix_payments_paid_at"), table_name="payments")
    op.drop_table("report_notifications")
