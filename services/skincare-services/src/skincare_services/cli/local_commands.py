"""`skincare dev` and `skincare demo`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from cyclopts import App

LocalQueue = Literal["postgres", "sqs"]
"""The queue backends `skincare dev` runs on this machine: the embedded PostgreSQL's jobs table,
or SQS on a moto server it starts beside it."""


def register(app: App) -> None:
    """Add the local-run commands to the `skincare` app."""
    app.command(dev)
    app.command(demo)


def dev(
    *,
    queue: LocalQueue = "postgres",
    home: Path = Path(".skincare"),
    port: int = 8000,
) -> int:
    """Run PostgreSQL, the API and a worker on this machine until Ctrl-C.

    Parameters
    ----------
    queue
        The job queue: PostgreSQL's jobs table, or SQS on a local moto server.
    home
        Where the database, the mail, the invoices and the logs are kept.
    port
        Where the API listens.
    """
    from skincare_services.dev import run_dev

    return run_dev(queue=queue, home=home.resolve(), port=port)


def demo() -> int:
    """Run a scripted walkthrough on a fresh instance; exit 0 only if every step held."""
    from skincare_services.demo import run_demo

    return run_demo()
