"""A third queue backend, registered from outside the project's packages as `toy`.

Its distribution is this directory (the `.dist-info` beside this module declares the entry
point), so a process with the directory on PYTHONPATH finds it the way it finds an installed
package. The queues are core's in-memory ones: they live and die with one process. On opening,
it puts one job of a type no handler serves on each served queue, so a worker has something to
settle; on closing, it logs how many jobs ended in its dead letters.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from skincare_core.jobs import Backend, Envelope, new_job
from skincare_core.testing.jobs import InMemoryQueues, memory_backend
from skincare_services.queue_backends import BackendContext, QueueBackend

GREETING = "toy.greeting"
"""The job type the backend seeds its queues with: unserved, so the worker dead-letters it."""

logger = logging.getLogger(__name__)


@asynccontextmanager
async def _open(context: BackendContext) -> AsyncIterator[Backend]:
    queues = InMemoryQueues()
    async with memory_backend(queues, names=context.queues) as backend:
        seeds = [Envelope(new_job(GREETING), name) for name in context.queues]
        await backend.sink.enqueue_many(seeds)
        logger.info("toy_backend.opened", extra={"queues": list(context.queues)})
        yield backend
        logger.info("toy_backend.closed", extra={"dead_letters": await queues.count()})


TOY = QueueBackend(open=_open)
"""The entry point's object: in-memory queues for one process."""
