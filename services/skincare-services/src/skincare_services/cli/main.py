"""`skincare`: run, demo, migrate, tokens, webhook signatures, queue stats, periodic schedules,
job cancellation and dead jobs.

Exit codes: 0 done; 1 the answer is no (no such dead job, nothing to cancel, more dead jobs than
--max); 2 bad usage, settings or input; 3 a backing service (database, SQS) is unavailable. Errors
are one line on stderr; logs go to stderr too (warnings and above), so stdout holds only a
command's output.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from cyclopts import App, CycloptsError, Parameter

from skincare_services.cli import dlq, jobs, local_commands, ops, queue, schedule, tools
from skincare_services.cli.errors import USAGE, CliError, one_line
from skincare_services.cli.output import say
from skincare_services.logs import configure_logging

HELP = (
    "The skincare shop's command line: run it locally, migrate, make test tokens and webhook "
    "signatures, look at the queue and the periodic schedules, cancel jobs and work on dead "
    "jobs.\n\n"
    "Exit codes: 0 done; 1 the answer is no (no such dead job, nothing to cancel, more dead "
    "jobs than --max); 2 bad usage, settings or input; 3 the database or SQS is unavailable. "
    "Errors are one line on stderr, and so are logs (warnings and above): stdout holds only a "
    "command's output."
)


def build_app() -> App:
    """The `skincare` app with every command."""
    app = App(
        name="skincare",
        help=HELP,
        version=_version,
        help_format="plaintext",
        default_parameter=Parameter(negative=()),
        result_action="return_value",
        print_error=False,
        exit_on_error=False,
    )
    for commands in (local_commands, tools, queue, jobs, schedule, dlq, ops):
        commands.register(app)
    return app


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point."""
    configure_logging("WARNING", service="cli")
    try:
        code = build_app()(argv)
    except CycloptsError as exc:
        _fail(str(exc), USAGE)
    except CliError as exc:
        _fail(str(exc), exc.code)
    raise SystemExit(code or 0)


def _fail(message: str, code: int) -> None:
    say(f"skincare: {one_line(message)}", sys.stderr)
    raise SystemExit(code)


def _version() -> str:
    from importlib.metadata import version

    return version("skincare-services")


if __name__ == "__main__":
    main()
