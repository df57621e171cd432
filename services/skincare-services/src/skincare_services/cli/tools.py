"""`skincare migrate`, `skincare token`, `skincare webhook sign`: each needs only its settings."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from functools import partial
from typing import Annotated

from cyclopts import App, Parameter, validators

from skincare_services.cli.errors import UNAVAILABLE, CliError


def register(app: App) -> None:
    """Add the commands to the `skincare` app."""
    app.command(migrate)
    app.command(token)
    webhook = App(name="webhook", help="Payment webhook helpers.")
    webhook.command(sign)
    app.command(webhook)


def migrate() -> int:
    """Apply the database migrations up to head (needs SKINCARE_DATABASE_URL only)."""
    from skincare_core.jobs.errors import Unavailable
    from skincare_postgres.errors import unavailable_as_error
    from skincare_postgres.migrations import upgrade
    from skincare_services.settings import DatabaseSettings, load_fields
    from skincare_services.startup import loaded_or_exit

    settings = loaded_or_exit(partial(load_fields, DatabaseSettings))
    try:
        with unavailable_as_error():
            upgrade(settings.database_url)
    except Unavailable as exc:
        raise CliError(str(exc), UNAVAILABLE) from None
    print("database migrated to head")
    return 0


def token(
    *,
    user_id: Annotated[int, Parameter(validator=validators.Number(gt=0))],
    ttl_minutes: Annotated[int, Parameter(validator=validators.Number(gt=0))] = 60,
    role: str | None = None,
) -> int:
    """Print a signed JWT for a user, to try the API (needs SKINCARE_JWT_SECRET only).

    Parameters
    ----------
    user_id
        The id of the user the token signs in as.
    ttl_minutes
        Minutes until the token expires.
    role
        A role claim: `admin` makes the token an operator's, for `skincare ops`.
    """
    from skincare_http.auth import issue_token
    from skincare_services.settings import TokenSettings, load_fields
    from skincare_services.startup import loaded_or_exit

    settings = loaded_or_exit(partial(load_fields, TokenSettings))
    ttl = timedelta(minutes=ttl_minutes)
    print(issue_token(settings.jwt_secret, settings.jwt_issuer, user_id, ttl, role=role))
    return 0


def sign(body: str, /, *, timestamp: int | None = None) -> int:
    """Print the X-Timestamp and X-Signature headers that sign a webhook body (needs
    SKINCARE_WEBHOOK_SECRET only).

    Parameters
    ----------
    body
        The exact JSON body the gateway will send.
    timestamp
        The Unix time in seconds to sign at (default: now).
    """
    try:
        json.loads(body)
    except ValueError as exc:
        raise CliError(f"the webhook body is not JSON: {exc}") from None
    from skincare_http.webhook_signature import sign_webhook
    from skincare_services.settings import WebhookSettings, load_fields
    from skincare_services.startup import loaded_or_exit

    settings = loaded_or_exit(partial(load_fields, WebhookSettings))
    stamp = int(time.time()) if timestamp is None else timestamp
    print(f"X-Timestamp: {stamp}")
    print(f"X-Signature: {sign_webhook(settings.webhook_secret, stamp, body.encode())}")
    return 0
