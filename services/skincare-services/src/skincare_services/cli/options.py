"""Options several commands share, spelled once."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

Json = Annotated[bool, Parameter(name="--json")]
"""`--json`: print JSON for scripts instead of lines for people."""

JobType = Annotated[str | None, Parameter(name="--type")]
"""`--type`: only jobs of this type."""

QueueName = Annotated[str | None, Parameter(name="--queue")]
"""`--queue`: only jobs of this named queue."""
