"""Helpers of the worker tests: run a Worker in a task group, wait for a condition."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta

import anyio

from skincare_core.jobs.job import Message
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_core.testing.jobs import InMemoryQueue

NO_BACKOFF: Callable[[int], timedelta] = lambda _attempts: timedelta(0)  # noqa: E731


def fast_queue(visibility: float = 5.0) -> InMemoryQueue:
    """An in-memory queue that long-polls for 20 ms."""
    return InMemoryQueue(
        visibility_timeout=timedelta(seconds=visibility), wait=timedelta(seconds=0.02)
    )


def worker_on(queue: InMemoryQueue, router: Router, **options: object) -> Worker:
    """A Worker with short timings unless told otherwise."""
    settings: dict[str, object] = {
        "visibility_timeout": timedelta(seconds=5),
        "shutdown_grace": timedelta(seconds=2),
        "backoff": NO_BACKOFF,
        **options,
    }
    return Worker(queue=queue, router=router, **settings)  # type: ignore[arg-type]


@asynccontextmanager
async def running(worker: Worker) -> AsyncIterator[None]:
    """Run the worker for the body of the block, then cancel it and wait for its drain."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(worker.run)
        yield
        tg.cancel_scope.cancel()


async def eventually(condition: Callable[[], bool], within: float = 5.0) -> None:
    """Wait until `condition()` holds, failing after `within` seconds."""
    with anyio.fail_after(within):
        for _ in iter(int, 1):
            if condition():
                return
            await anyio.sleep(0.005)


class RecordingQueue(InMemoryQueue):
    """An InMemoryQueue that remembers each receive's max_messages and each heartbeat's size,
    and can fail receives."""

    def __init__(self, **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.asked: list[tuple[int, int]] = []
        self.extended: list[int] = []
        self.worker: Worker | None = None
        self.receive_failures = 0

    async def receive(self, max_messages: int = 1) -> list[Message]:
        in_flight = 0 if self.worker is None else self.worker.in_flight
        self.asked.append((max_messages, in_flight))
        if self.receive_failures:
            self.receive_failures -= 1
            raise ConnectionError("queue unreachable")
        return await super().receive(max_messages)

    async def extend_many(self, messages: Sequence[Message], visibility: timedelta) -> None:
        self.extended.append(len(messages))
        await super().extend_many(messages, visibility)
