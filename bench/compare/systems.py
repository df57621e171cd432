"""What every compared job system offers the scenarios, and how to open one by name."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from attrs import field, frozen

Payload = Mapping[str, str]
Received = Mapping[str, object]
"""A payload as a worker hands it over: our jobs carry JSON values, not only strings."""
Handler = Callable[[Received], Awaitable[None]]


class System(Protocol):
    """A job system on one database: schema, enqueue, a running worker, what is left."""

    async def install(self) -> None:
        """Create the system's schema in the (fresh) database."""

    async def enqueue(self, payloads: Sequence[Payload]) -> None:
        """Enqueue one job per payload, all in one transaction (one commit)."""

    def work(
        self, handler: Handler, *, batch: int, concurrency: int
    ) -> AbstractAsyncContextManager[None]:
        """Run one worker calling `handler` with each payload while the context is open."""

    async def remaining(self) -> int:
        """Jobs not yet completed (queued or running)."""


Opener = Callable[[str, Mapping[str, Any]], AbstractAsyncContextManager[System]]

# Module of each system's `open_system(url, options)`; imported on use only.
MODULES = {
    "ours": "bench.compare.run_ours",
    "bare": "bench.compare.run_bare",
    "pgqueuer": "bench.compare.run_pgqueuer",
    "procrastinate": "bench.compare.run_procrastinate",
}


@frozen
class Variant:
    """One system with its settings, as a row of a result table."""

    label: str
    system: str
    batch: int = 10
    concurrency: int = 20
    options: Mapping[str, Any] = field(factory=dict)


def open_system(variant: Variant, url: str) -> AbstractAsyncContextManager[System]:
    """Open `variant`'s system on the database at `url` (a libpq URL)."""
    module = importlib.import_module(MODULES[variant.system])
    opener: Opener = module.open_system
    return opener(url, variant.options)
