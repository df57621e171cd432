"""E-mail adapters: SMTP, maildir for local runs, SES as an optional extra.

`SesEmailService` lives in `skincare_email.ses` and needs the `ses` extra (boto3); it is not
imported here so the package works without it.
"""

from skincare_core.shop.money import format_rupiah
from skincare_email.composer import RenderingEmailService
from skincare_email.errors import EmailRejected, EmailTemporarilyUnavailable
from skincare_email.maildir import MaildirEmailService
from skincare_email.messages import message_id_for, render_email
from skincare_email.smtp import SmtpEmailService
from skincare_email.summary import render_sales_summary

__all__ = [
    "EmailRejected",
    "EmailTemporarilyUnavailable",
    "MaildirEmailService",
    "RenderingEmailService",
    "SmtpEmailService",
    "format_rupiah",
    "message_id_for",
    "render_email",
    "render_sales_summary",
]
