"""Failures the CLI reports as one line on stderr and an exit code, never a traceback.

Exit codes: 0 done; 1 the answer is no (no such dead job, nothing to cancel, more dead jobs than
--max); 2 bad usage, settings or input; 3 a backing service (database, SQS) is unavailable.
"""

from __future__ import annotations

NO = 1
USAGE = 2
UNAVAILABLE = 3


class CliError(Exception):
    """A failure to print as `skincare: <message>` and exit with `code`."""

    def __init__(self, message: str, code: int = USAGE) -> None:
        super().__init__(one_line(message))
        self.code = code


def one_line(text: str) -> str:
    """The first non-blank line of `text` (drivers append details and links on more lines)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
