"""`skincare`: run, demo, migrate, tokens, webhook signatures and dead-letter operations."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from skincare_services.cli import dlq, local_commands, tools


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="skincare", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    local_commands.register(commands)
    tools.register(commands)
    dlq.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point."""
    args = build_parser().parse_args(argv)
    raise SystemExit(args.run(args))


if __name__ == "__main__":
    main()
