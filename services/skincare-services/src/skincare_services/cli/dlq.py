"""`skincare dlq list|show|redrive|purge`: the same commands for the Postgres and SQS queues."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio

from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.ports import DeadLetter, DeadLetters
from skincare_services.cli.output import say
from skincare_services.startup import settings_or_exit

Action = Callable[[DeadLetters, argparse.Namespace], Awaitable[int]]


def register(commands: Any) -> None:
    """Add `dlq` and its actions to the `skincare` parser."""
    dlq = commands.add_parser("dlq", help="inspect, redrive and purge dead jobs")
    actions = dlq.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="list dead jobs")
    listing.add_argument("--type", dest="job_type")
    listing.add_argument("--group-by", choices=["error", "type"])
    listing.add_argument("--limit", type=int, default=100)
    listing.set_defaults(run=_runner(_list))
    show = actions.add_parser("show", help="show one dead job in full")
    show.add_argument("job_id")
    show.set_defaults(run=_runner(_show))
    redrive = actions.add_parser("redrive", help="send dead jobs back to the queue")
    which = redrive.add_mutually_exclusive_group(required=True)
    which.add_argument("job_id", nargs="?")
    which.add_argument("--type", dest="job_type")
    which.add_argument("--all", action="store_true")
    redrive.add_argument("--dry-run", action="store_true", help="say what would be redriven")
    redrive.set_defaults(run=_runner(_redrive))
    purge = actions.add_parser("purge", help="delete every dead job")
    purge.add_argument("--yes", action="store_true", required=True, help="confirm the purge")
    purge.set_defaults(run=_runner(_purge))


def _runner(action: Action) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        return anyio.run(_with_dead_letters, action, args)

    return run


async def _with_dead_letters(action: Action, args: argparse.Namespace) -> int:
    # The adapters load only when a dlq command runs, not for every `skincare` command.
    from skincare_services.compose import database_engine, job_backend

    settings = settings_or_exit("cli")
    try:
        async with AsyncExitStack() as stack:
            engine = await stack.enter_async_context(database_engine(settings=settings))
            backend = await stack.enter_async_context(job_backend(settings=settings, engine=engine))
            return await action(backend.dead_letters, args)
    except Unavailable as exc:
        say(f"skincare: {exc}", sys.stderr)
        return 3


def _line(dead: DeadLetter) -> str:
    # Dead jobs hold whatever was sent; `say` escapes what cannot be printed.
    when = dead.dead_at.isoformat(timespec="seconds")
    return f"{dead.job.id}  {dead.job.type:<28} attempts={dead.attempts}  {when}  {dead.error}"


async def _list(dlq: DeadLetters, args: argparse.Namespace) -> int:
    dead = await dlq.list(job_type=args.job_type, limit=args.limit)
    if args.group_by:
        key = (lambda d: d.error) if args.group_by == "error" else (lambda d: d.job.type)
        for value, count in Counter(map(key, dead)).most_common():
            say(f"{count:>6}  {value}")
    else:
        for item in dead:
            say(_line(item))
    print(f"{await dlq.count()} dead job(s)")
    return 0


async def _show(dlq: DeadLetters, args: argparse.Namespace) -> int:
    item = await dlq.get(args.job_id)
    if item is None:
        say(f"no dead job {args.job_id}")
        return 1
    body = {"id": item.job.id, "type": item.job.type, "payload": dict(item.job.payload)}
    # JSON's ASCII escapes keep it printable on any terminal, lone surrogates included.
    print(json.dumps({**body, "attempts": item.attempts, "error": item.error}, indent=2))
    return 0


async def _redrive(dlq: DeadLetters, args: argparse.Namespace) -> int:
    if args.dry_run:
        dead = await dlq.list(job_type=args.job_type, limit=10_000)
        chosen = [d for d in dead if args.job_id in (None, d.job.id)]
        print(f"would redrive {len(chosen)} job(s)")
        return 0
    if args.job_id:
        found = await dlq.redrive(args.job_id)
        say("redriven 1 job" if found else f"no dead job {args.job_id}")
        return 0 if found else 1
    print(f"redriven {await dlq.redrive_all(job_type=args.job_type)} job(s)")
    return 0


async def _purge(dlq: DeadLetters, args: argparse.Namespace) -> int:
    print(f"purged {await dlq.purge()} dead job(s)")
    return 0
