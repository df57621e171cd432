"""`skincare migrate`, `skincare token`, `skincare webhook sign`."""

from __future__ import annotations

import argparse
import json
import time
from datetime import timedelta
from typing import Any

from skincare_http import issue_token, sign_webhook
from skincare_postgres import upgrade
from skincare_services.startup import settings_or_exit

Commands = Any  # argparse's private _SubParsersAction


def register(commands: Commands) -> None:
    """Add the commands to the `skincare` parser."""
    migrate = commands.add_parser("migrate", help="apply database migrations up to head")
    migrate.set_defaults(run=run_migrate)
    token = commands.add_parser("token", help="print a signed JWT for a user (for testing)")
    token.add_argument("--user-id", type=int, required=True)
    token.add_argument("--ttl-minutes", type=int, default=60)
    token.set_defaults(run=run_token)
    webhook = commands.add_parser("webhook", help="payment webhook helpers")
    actions = webhook.add_subparsers(dest="action", required=True)
    sign = actions.add_parser("sign", help="print the headers that sign a webhook body")
    sign.add_argument("body", help="the exact JSON body the gateway will send")
    sign.add_argument("--timestamp", type=int, help="unix seconds (default: now)")
    sign.set_defaults(run=run_sign)


def run_migrate(args: argparse.Namespace) -> int:
    """Upgrade the database schema."""
    settings = settings_or_exit("cli")
    upgrade(settings.database_url)
    print("database migrated to head")
    return 0


def run_token(args: argparse.Namespace) -> int:
    """Print a bearer token."""
    settings = settings_or_exit("cli")
    ttl = timedelta(minutes=args.ttl_minutes)
    print(issue_token(settings.jwt_secret, settings.jwt_issuer, args.user_id, ttl))
    return 0


def run_sign(args: argparse.Namespace) -> int:
    """Print X-Timestamp and X-Signature for the body."""
    settings = settings_or_exit("cli")
    json.loads(args.body)
    timestamp = args.timestamp or int(time.time())
    print(f"X-Timestamp: {timestamp}")
    print(f"X-Signature: {sign_webhook(settings.webhook_secret, timestamp, args.body.encode())}")
    return 0
