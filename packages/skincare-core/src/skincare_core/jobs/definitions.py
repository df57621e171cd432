"""Typed job definitions: a job type declared once, with its arguments, handler and options.

```python
@frozen
class SyncStock:
    product_id: int

async def sync_stock(args: SyncStock) -> None: ...

SYNC_STOCK = JobDefinition("sync_stock", SyncStock, sync_stock, queue="bulk")

await enqueue(queue, SYNC_STOCK.job(SyncStock(product_id=42)))
await uow.outbox.add(SYNC_STOCK.job(SyncStock(product_id=42), delay=timedelta(minutes=5)))

worker = Worker(queue=queue, definitions=Definitions(SYNC_STOCK))
```

The arguments are an attrs class (`skincare_core.jobs.arguments` lists the field types); the
definition is generic in it, so mypy (strict) refuses a handler or arguments of another class.
What types cannot tell (a naive datetime, a bool where an int belongs) is a `ValueError`
naming the field when the job is built, before any I/O. A worker structures each payload back
into the class: a job whose payload does not fit (a field missing, extra or mistyped; a third
party's message) is `InvalidJob` naming the field, dead-lettered at once, never retried.

**Handlers.** An `async def handler(args)` runs on the worker's event loop. A plain
`def handler(args)` runs in a worker thread, at most the worker's `sync_threads` at a time, so
blocking libraries do not stall the loop. A thread cannot be cancelled: when a sync handler
outlives its timeout, the attempt counts as timed out (retried under the retry policy, its slot
freed for the next job) while the thread runs on to its end unobserved, outside the limit. A
sync handler that may hang should bound its own waits (socket and client timeouts).

**Options.** `queue` (the named queue, default `default`), `retry` (a `RetryPolicy`; None: the
worker's default), `timeout` (how long one attempt may run; None: the worker's), `unique` (the
unique key derived from the arguments: no second job with the same key is added while one is
live), `upgrade` (rewrites payloads written by an older release before they are structured,
such as `legacy_digits("order_id")` for integers once sent as strings), `priority` (1 most
urgent .. 4, default 2: its order among its queue's due jobs; see `skincare_core.jobs.priority`).

**Snooze.** A handler raises `Snooze(delay)` to run again after `delay` without spending an
attempt, at most the worker's `max_snoozes` times per job (then it is dead-lettered, saying so).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from datetime import datetime, timedelta
from typing import Generic, Protocol, TypeGuard, TypeVar

import anyio
import attrs
from attrs import field, frozen

from skincare_core.jobs.arguments import ArgumentError, Upgrade, structure, unstructure
from skincare_core.jobs.envelope import Envelope
from skincare_core.jobs.errors import InvalidJob
from skincare_core.jobs.job import Job, new_job_id
from skincare_core.jobs.priority import DEFAULT_PRIORITY, check_priority
from skincare_core.jobs.retry import RetryPolicies, RetryPolicy
from skincare_core.jobs.router import Handler, Router
from skincare_core.jobs.routing import DEFAULT_QUEUE, QueueRoutes, check_queue_name

A = TypeVar("A")
AsyncHandler = Callable[[A], Awaitable[None]]
SyncHandler = Callable[[A], None]


def _is_async(handler: AsyncHandler[A] | SyncHandler[A]) -> TypeGuard[AsyncHandler[A]]:
    """Whether `handler` is an `async def` function, or an object whose `__call__` is one."""
    call = getattr(handler, "__call__", None)  # noqa: B004 - an instance's async __call__
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call)


def _check_name(_: object, __: object, name: str) -> None:
    if not name or not isinstance(name, str):
        raise ValueError("a job definition's name must be a non-empty string")


def _check_args(_: object, __: object, kind: type) -> None:
    if not attrs.has(kind):
        raise TypeError(f"a job's arguments must be an attrs class, got {kind!r}")


def _check_timeout(_: object, __: object, timeout: timedelta | None) -> None:
    if timeout is not None and timeout <= timedelta(0):
        raise ValueError(f"a job timeout must be positive, got {timeout}")


@frozen
class JobDefinition(Generic[A]):
    """One job type: its `name` (the job's type on the wire), its arguments' attrs class
    `args`, its `handler` (async, or sync run in a thread) and its options (see the module).

    A handler that needs what only the worker's process builds (a database, a client) can be
    bound there: declare the type without one (enough to enqueue it) and serve
    `definition.with_handler(handler)`."""

    name: str = field(validator=_check_name)
    args: type[A] = field(validator=_check_args)
    handler: AsyncHandler[A] | SyncHandler[A] | None = None
    queue: str = field(default=DEFAULT_QUEUE, validator=lambda _s, _a, v: check_queue_name(v))
    retry: RetryPolicy | None = None
    timeout: timedelta | None = field(default=None, validator=_check_timeout)
    unique: Callable[[A], str] | None = None
    upgrade: Upgrade | None = None
    priority: int = field(default=DEFAULT_PRIORITY, validator=lambda _s, _a, v: check_priority(v))

    def job(
        self,
        args: A,
        *,
        delay: timedelta | None = None,
        not_before: datetime | None = None,
        unique_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        priority: int | None = None,
    ) -> Envelope:
        """A job of this type with `args`, addressed to the definition's queue, ready for
        `enqueue(queue, envelope)` or `outbox.add(envelope)`. `unique_key` overrides the key
        `unique` derives, `priority` the definition's. ValueError naming the field for
        arguments that cannot travel, and for a bad schedule, key or priority; JobTooLarge past
        the size limit; all before any I/O."""
        try:
            payload = unstructure(args, self.args)
        except ArgumentError as exc:
            raise ValueError(f"invalid arguments for job type {self.name!r}: {exc}") from None
        if unique_key is None and self.unique is not None:
            unique_key = self.unique(args)
        job = Job(new_job_id(), self.name, payload, headers or {})
        urgency = self.priority if priority is None else priority
        return Envelope(job, self.queue, not_before, unique_key, delay=delay, priority=urgency)

    def arguments(self, job: Job) -> A:
        """The arguments `job` carries; InvalidJob naming each field that does not fit."""
        payload = job.payload if self.upgrade is None else self.upgrade(job.payload)
        try:
            return structure(payload, self.args)
        except ArgumentError as exc:
            raise InvalidJob(f"arguments of job type {self.name!r} do not fit: {exc}") from None

    def with_handler(self, handler: AsyncHandler[A] | SyncHandler[A]) -> JobDefinition[A]:
        """This job type served by `handler`."""
        return attrs.evolve(self, handler=handler)

    @property
    def is_async(self) -> bool:
        """Whether the handler runs on the event loop (else in a worker thread)."""
        return self.handler is not None and _is_async(self.handler)

    def runner(self, threads: anyio.CapacityLimiter) -> Handler:
        """A router's handler for this type: structure the payload, then run the handler (a
        sync one in a thread of `threads`, abandoned on cancellation: see the module).
        ValueError for a definition without a handler."""
        handler = self.handler
        if handler is None:
            raise ValueError(f"job type {self.name!r} has no handler: serve .with_handler(...)")
        if _is_async(handler):
            return functools.partial(_run_async, self, handler)
        # Not async, so sync: a TypeGuard narrows only where it holds.
        return functools.partial(_run_sync, self, typing.cast(SyncHandler[A], handler), threads)


_CURRENT: ContextVar[Job] = ContextVar("skincare_current_job")


def current_job() -> Job:
    """The job whose handler is running (its id, type, headers): for a handler that needs
    more than its arguments, such as an idempotency key. LookupError outside a handler."""
    return _CURRENT.get()


async def _run_async(definition: JobDefinition[A], handler: AsyncHandler[A], job: Job) -> None:
    args = definition.arguments(job)
    token = _CURRENT.set(job)
    try:
        await handler(args)
    finally:
        _CURRENT.reset(token)


async def _run_sync(
    definition: JobDefinition[A],
    handler: SyncHandler[A],
    threads: anyio.CapacityLimiter,
    job: Job,
) -> None:
    args = definition.arguments(job)
    token = _CURRENT.set(job)
    try:
        # A thread cannot be cancelled: on a timeout the worker goes on and the thread runs
        # out. The thread runs in a copy of this context: current_job() works there too.
        await anyio.to_thread.run_sync(handler, args, limiter=threads, abandon_on_cancel=True)
    finally:
        _CURRENT.reset(token)


class Definition(Protocol):
    """What a worker needs of a job definition, whatever its arguments' class."""

    @property
    def name(self) -> str:
        """The job type."""

    @property
    def queue(self) -> str:
        """The named queue its jobs go to."""

    @property
    def retry(self) -> RetryPolicy | None:
        """Its retry policy; None for the worker's default."""

    @property
    def timeout(self) -> timedelta | None:
        """How long one attempt may run; None for the worker's default."""

    @property
    def priority(self) -> int:
        """Its jobs' priority inside their queue (1 most urgent .. 4)."""

    def runner(self, threads: anyio.CapacityLimiter) -> Handler:
        """The router's handler of its jobs."""


class Definitions:
    """A team's job definitions, everything a worker takes from them: a `router()`, the
    `routes` of each type to its queue, the `retry_policies` and `timeouts` per type.
    Two definitions of one name are a ValueError."""

    def __init__(self, *definitions: Definition) -> None:
        by_name: dict[str, Definition] = {}
        for definition in definitions:
            if definition.name in by_name:
                raise ValueError(f"job type {definition.name!r} is defined twice")
            by_name[definition.name] = definition
        self._by_name = by_name

    def __iter__(self) -> Iterator[Definition]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def __getitem__(self, name: str) -> Definition:
        return self._by_name[name]

    def __add__(self, other: Definitions) -> Definitions:
        """These definitions and `other`'s; a name in both is a ValueError."""
        return Definitions(*self, *other)

    @property
    def names(self) -> frozenset[str]:
        """Every defined job type."""
        return frozenset(self._by_name)

    @property
    def routes(self) -> QueueRoutes:
        """Each job type to its named queue."""
        priorities = {d.name: d.priority for d in self if d.priority != DEFAULT_PRIORITY}
        return QueueRoutes({d.name: d.queue for d in self}, priorities=priorities)

    @property
    def queues(self) -> tuple[str, ...]:
        """The named queues the definitions use, each once, in the order first named."""
        return tuple(dict.fromkeys(d.queue for d in self))

    @property
    def retry_policies(self) -> RetryPolicies:
        """The retry policy of each job type that has one."""
        return {d.name: d.retry for d in self if d.retry is not None}

    @property
    def timeouts(self) -> Mapping[str, timedelta]:
        """The timeout of each job type that has one."""
        return {d.name: d.timeout for d in self if d.timeout is not None}

    def router(
        self, threads: anyio.CapacityLimiter | None = None, *, into: Router | None = None
    ) -> Router:
        """A router running every definition's handler (sync ones in threads of `threads`,
        by default a limiter of 8), registered `into` an existing router or a new one."""
        router = Router() if into is None else into
        limiter = anyio.CapacityLimiter(8) if threads is None else threads
        for definition in self:
            router.register(definition.name, definition.runner(limiter))
        return router
