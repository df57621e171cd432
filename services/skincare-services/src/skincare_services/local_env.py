"""The environment `skincare dev` and `skincare demo` give their child processes."""

from __future__ import annotations

from pathlib import Path

DEV_JWT_SECRET = "dev-only-jwt-secret-never-use-in-production"
DEV_WEBHOOK_SECRET = "dev-only-webhook-secret-never-use-in-production"


def local_env(
    *,
    database_url: str,
    home: Path,
    port: int,
    sqs: tuple[str, str, str] | None = None,
) -> dict[str, str]:
    """SKINCARE_* (and, for SQS on moto, AWS_*) variables for a local API and worker."""
    env = {
        "SKINCARE_DATABASE_URL": database_url,
        "SKINCARE_JWT_SECRET": DEV_JWT_SECRET,
        "SKINCARE_WEBHOOK_SECRET": DEV_WEBHOOK_SECRET,
        "SKINCARE_MAILDIR": str(home / "mail"),
        "SKINCARE_INVOICE_DIR": str(home / "invoices"),
        "SKINCARE_API_PORT": str(port),
        "SKINCARE_QUEUE": "postgres",
    }
    if sqs is not None:
        endpoint, queue_url, dlq_url = sqs
        env |= {
            "SKINCARE_QUEUE": "sqs",
            "SKINCARE_SQS_QUEUE_URL": queue_url,
            "SKINCARE_SQS_DLQ_URL": dlq_url,
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    return env
