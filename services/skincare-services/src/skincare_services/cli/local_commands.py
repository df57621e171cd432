"""`skincare dev` and `skincare demo`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(commands: Any) -> None:
    """Add the local-run commands to the `skincare` parser."""
    dev = commands.add_parser("dev", help="run PostgreSQL, the API and a worker on this machine")
    dev.add_argument("--queue", choices=["postgres", "sqs"], default="postgres")
    dev.add_argument("--home", type=Path, default=Path(".skincare"))
    dev.add_argument("--port", type=int, default=8000, help="where the API listens")
    dev.set_defaults(run=_dev)
    demo = commands.add_parser("demo", help="a scripted walkthrough on a fresh instance")
    demo.set_defaults(run=_demo)


def _dev(args: argparse.Namespace) -> int:
    from skincare_services.dev import run_dev

    return run_dev(queue=args.queue, home=args.home.resolve(), port=args.port)


def _demo(args: argparse.Namespace) -> int:
    from skincare_services.demo import run_demo

    return run_demo()
