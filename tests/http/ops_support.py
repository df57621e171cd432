"""An ops app over in-memory queues holding poison jobs, and the tokens that reach it."""

from __future__ import annotations

from datetime import timedelta

from litestar import Litestar

from skincare_core.jobs import enqueue
from skincare_core.jobs.job import Job
from skincare_core.jobs.ops import OpsService
from skincare_core.jobs.ports import Burial
from skincare_core.shop.ports import Clock
from skincare_core.testing.jobs import InMemoryQueues
from skincare_http.auth import issue_token
from skincare_http.ops import OpsSettings, create_ops_app
from tests.http.http_support import JWT_ISSUER, JWT_SECRET

OPS_TOKEN = "ops-token-for-tests-at-least-32-bytes"
NAMES = ("critical", "default", "bulk")
SETTINGS = OpsSettings(
    jwt_secret=JWT_SECRET, jwt_issuer=JWT_ISSUER, ops_token=OPS_TOKEN, csrf_secret="csrf-secret"
)


def token(role: str | None) -> str:
    """A JWT for user 7, with `role` if given."""
    return issue_token(JWT_SECRET, JWT_ISSUER, 7, timedelta(minutes=5), role=role)


async def kill(queues: InMemoryQueues, job: Job, error: str, queue: str = "default") -> None:
    """Enqueue `job` on `queue` and dead-letter it with `error`."""
    await enqueue(queues.queue(queue), job)
    (message,) = await queues.queue(queue).receive()
    await queues.queue(queue).dead_letter_many([Burial(message, error)])


def ops_app(queues: InMemoryQueues, clock: Clock | None = None) -> Litestar:
    """The ops app over `queues` (named critical, default and bulk), its sign-in limit on
    `clock` (None: the system's)."""
    ops = OpsService(
        dead_letters=queues,
        stats=queues,
        queue_names=NAMES,
        outcomes=queues,
        pauses=queues.pauses,
        actions=queues,
        history=queues.history,
        minutes=queues.minutes,
    )
    return create_ops_app(ops=ops, settings=SETTINGS, clock=clock)
