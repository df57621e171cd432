"""Printing text the CLI did not write (a dead job's id, type, payload, error) safely.

Such text may hold anything a third party sent: control characters that would drive the
terminal, line breaks that would forge lines, lone surrogates that no encoding can write.
"""

from __future__ import annotations

import sys
from typing import TextIO


def printable(text: str) -> str:
    """`text` with every character that is not printable written as a Python escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def say(text: str, stream: TextIO | None = None) -> None:
    """Print one line of `text`: escaped, and what the stream's encoding lacks as \\x.. escapes."""
    out = sys.stdout if stream is None else stream
    encoding = out.encoding or "utf-8"
    print(printable(text).encode(encoding, "backslashreplace").decode(encoding), file=out)
