"""The queue backends installed here, and the one SKINCARE_QUEUE names.

A backend registers a `QueueBackend` under the `skincare.queue_backends` entry-point group; this
registry is the only code that looks a backend up by name. Each process enters the chosen one
with a `BackendContext`, so no caller ever asks which backend it got.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

from attrs import frozen

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from skincare_core.jobs.backend import Backend
    from skincare_postgres import PostgresNotifier
    from skincare_services.settings import Settings

GROUP = "skincare.queue_backends"
"""The entry-point group a queue backend registers under; the entry's name is SKINCARE_QUEUE."""


@frozen
class BackendContext:
    """What a process hands the backend it enters.

    `settings` are the process's settings (a backend reads its own fields there); `engine` is the
    process's database, where the units of work write their outbox rows and where a backend may
    keep what its broker cannot (a job ledger, schedules, rate windows); `notifier` wakes the
    process's queues after each enqueue commits. `queues` are the named queues to serve (empty:
    none, for a command that only reads the dead letters and stats); `known_queues` are every
    named queue a job may be routed to. A broker that moves a message aside by itself must wait
    for `max_receives` receives, so the worker dead-letters each job itself, with its reason.
    """

    settings: Settings
    engine: AsyncEngine
    notifier: PostgresNotifier
    queues: tuple[str, ...]
    known_queues: tuple[str, ...]
    max_receives: int

    @property
    def visibility_timeout(self) -> timedelta:
        """How long a received job stays hidden from other workers."""
        return self.settings.visibility_timeout


OpenBackend = Callable[[BackendContext], AbstractAsyncContextManager["Backend"]]
"""Enter a backend for a process: yields the `Backend` and closes what it opened on exit."""


@frozen
class QueueBackend:
    """A registered queue backend: how to open it, the settings fields it cannot start without
    (names of `Settings` fields, each named to the operator as its variable), and whether its
    queues order jobs by priority (if not, the unit of work's outbox refuses a priority)."""

    open: OpenBackend
    required_settings: tuple[str, ...] = ()
    ordered: bool = True


class UnknownBackend(LookupError):
    """SKINCARE_QUEUE names no registered backend; the message lists the registered ones."""


def registered_names() -> tuple[str, ...]:
    """The names of the installed backends, sorted."""
    return tuple(sorted({entry.name for entry in _entries()}))


def queue_backend(name: str) -> QueueBackend:
    """The backend registered as `name`; UnknownBackend naming the registered ones otherwise."""
    chosen: EntryPoint | None = next((e for e in _entries() if e.name == name), None)
    if chosen is None:
        raise UnknownBackend(f"expected one of {', '.join(registered_names())}, got {name!r}")
    backend = chosen.load()
    if not isinstance(backend, QueueBackend):
        raise TypeError(f"entry point {chosen.value} ({GROUP}) is not a QueueBackend")
    return backend


def _entries() -> tuple[EntryPoint, ...]:
    return tuple(entry_points(group=GROUP))
