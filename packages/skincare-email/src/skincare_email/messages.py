"""The shop's order e-mails, rendered from the package's templates: a pure function of the data.

Each kind and language has a plain-text template (first line: the subject) and an HTML one;
both go into one `multipart/alternative` message so any mail client shows something readable.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Mapping
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, parseaddr
from functools import cache
from importlib.resources import files
from string import Template
from typing import NamedTuple

from skincare_core.shop.models import NotificationType, OrderItem
from skincare_core.shop.money import format_rupiah
from skincare_core.shop.ports import OrderEmail

LANGUAGES = ("id", "en")
DEFAULT_LANGUAGE = "id"
_SAFE_KEY = re.compile(r"[A-Za-z0-9._-]{1,64}")


def render_email(
    kind: NotificationType,
    data: OrderEmail,
    *,
    to: str,
    sender: str,
    sent_at: datetime,
    shop_name: str = "Skincare",
) -> EmailMessage:
    """The complete message for `kind`, in the data's language (Indonesian when unknown)."""
    language = data.language if data.language in LANGUAGES else DEFAULT_LANGUAGE
    subject, text, page = _bodies(kind, language, data, shop_name)
    # Machine-readable: operators (and the end-to-end tests) count mail per order and kind.
    headers = {"X-Skincare-Order": data.order_number, "X-Skincare-Notification": kind.value}
    return assemble(
        Rendered(subject, text, page, language),
        to=to,
        sender=sender,
        sent_at=sent_at,
        idempotency_key=data.idempotency_key,
        headers=headers,
    )


class Rendered(NamedTuple):
    """A message's subject, plain text and HTML, in `language`."""

    subject: str
    text: str
    page: str
    language: str


def assemble(
    rendered: Rendered,
    *,
    to: str,
    sender: str,
    sent_at: datetime,
    idempotency_key: str,
    headers: Mapping[str, str],
) -> EmailMessage:
    """One `multipart/alternative` message of the rendered bodies, with `headers` added."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = rendered.subject
    message["Date"] = format_datetime(sent_at)
    message["Message-ID"] = message_id_for(idempotency_key, sender)
    for name, value in headers.items():
        message[name] = value
    message.set_content(rendered.text)
    message.add_alternative(rendered.page, subtype="html")
    # Set after the parts exist: making a multipart moves Content-* headers into the first part.
    message["Content-Language"] = rendered.language
    message.set_boundary(_boundary(rendered.text, rendered.page))
    return message


def _bodies(
    kind: NotificationType, language: str, data: OrderEmail, shop_name: str
) -> tuple[str, str, str]:
    """Subject, plain text and HTML of one message."""
    fields = {"order_number": data.order_number, "shop_name": shop_name}
    total = format_rupiah(data.total_rupiah)
    rendered = template(kind.value, language, "txt").substitute(
        fields, items=_text_items(data.items), total=total
    )
    subject, text = split_subject(rendered)
    page = template(kind.value, language, "html").substitute(
        {key: html.escape(value) for key, value in fields.items()},
        items=_html_items(data.items),
        total=html.escape(total),
        subject=html.escape(subject),
    )
    return subject, text, page


def message_id_for(idempotency_key: str, sender: str) -> str:
    """A Message-ID that is the same for every send of one job, so a resend is recognisable.

    A safe job id (UUID hex) is used as it is, so the job id can be found in any mailbox;
    anything else is hashed to keep the header valid.
    """
    if _SAFE_KEY.fullmatch(idempotency_key):
        local = idempotency_key
    else:
        local = hashlib.sha256(idempotency_key.encode()).hexdigest()[:40]
    domain = parseaddr(sender)[1].rpartition("@")[2] or "skincare.invalid"
    return f"<{local}@{domain}>"


def _boundary(*bodies: str) -> str:
    # Derived from the content, not random, so one input always renders the same bytes.
    digest = hashlib.sha256("\0".join(bodies).encode()).hexdigest()[:32]
    return f"==skincare-{digest}=="


@cache
def template(name: str, language: str, extension: str) -> Template:
    """The package's template `<name>.<language>.<extension>` (txt: subject line first)."""
    source = files("skincare_email") / "templates" / f"{name}.{language}.{extension}"
    return Template(source.read_text(encoding="utf-8"))


def split_subject(rendered: str) -> tuple[str, str]:
    """The first paragraph (the subject) and the rest of a rendered plain-text template."""
    subject, _, body = rendered.partition("\n\n")
    return subject.strip(), body


def _text_items(items: tuple[OrderItem, ...]) -> str:
    return "\n".join(
        f"- {item.quantity} x {item.name} @ {format_rupiah(item.unit_price_rupiah)}"
        f" = {format_rupiah(item.line_total_rupiah)}"
        for item in items
    )


def _html_items(items: tuple[OrderItem, ...]) -> str:
    cell = '<td align="right">{}</td>'
    return "\n".join(
        f"<tr><td>{html.escape(item.name)}</td>"
        + cell.format(item.quantity)
        + cell.format(html.escape(format_rupiah(item.unit_price_rupiah)))
        + cell.format(html.escape(format_rupiah(item.line_total_rupiah)))
        + "</tr>"
        for item in items
    )
