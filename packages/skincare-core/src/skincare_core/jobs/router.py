"""Routes a job to the handler registered for its type; an unknown type is an error."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from skincare_core.jobs.errors import UnknownJobType
from skincare_core.jobs.job import Job

Handler = Callable[[Job], Awaitable[None]]


class Router:
    """Job type -> handler. Other teams register handlers for their own types."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def register(self, job_type: str, handler: Handler) -> None:
        """Route `job_type` to `handler`; registering a type twice is a mistake."""
        if job_type in self._handlers:
            raise ValueError(f"a handler for {job_type!r} is already registered")
        self._handlers[job_type] = handler

    def wrap(self, job_type: str, decorate: Callable[[Handler], Handler]) -> None:
        """Replace `job_type`'s handler with `decorate(handler)`; KeyError if it has none."""
        self._handlers[job_type] = decorate(self._handlers[job_type])

    def copy(self) -> Router:
        """A router with the same handlers, to register more in without touching this one."""
        copied = Router()
        copied._handlers = dict(self._handlers)
        return copied

    @property
    def job_types(self) -> frozenset[str]:
        """The types that have a handler."""
        return frozenset(self._handlers)

    async def dispatch(self, job: Job) -> None:
        """Run the job's handler; UnknownJobType (permanent) if there is none."""
        handler = self._handlers.get(job.type)
        if handler is None:
            raise UnknownJobType(job.type)
        await handler(job)
