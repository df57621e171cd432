"""Rate limits and schedules on a backend: used where it keeps them, refused where it cannot."""

from __future__ import annotations

import math
import time

import attrs
import pytest

from skincare_core.jobs import Job, Router, Schedules, new_job
from skincare_core.testing.jobs import memory_backend
from skincare_services.scheduling import (
    NotSupportedHere,
    scheduler_for,
    throttle_for,
    throttle_job_types,
)
from skincare_services.settings import load_settings

pytestmark = pytest.mark.anyio
_REQUIRED = {
    "SKINCARE_DATABASE_URL": "postgresql+psycopg://u:p@127.0.0.1:9/shop",
    "SKINCARE_WEBHOOK_SECRET": "whsec",
    "SKINCARE_JWT_SECRET": "jwtsec-long-enough-for-32-bytes-0123456789",
    "SKINCARE_RATE_LIMITS": "default=14",
}


async def test_a_queue_named_in_rate_limits_is_throttled_and_others_are_not() -> None:
    settings = load_settings(_REQUIRED)
    async with memory_backend() as backend:
        throttle = throttle_for(settings=settings, backend=backend, queue="default")
        assert throttle is not None
        assert await throttle.take(20) == 14
        assert throttle_for(settings=settings, backend=backend, queue="bulk") is None


async def test_a_backend_without_limiter_or_store_refuses_them() -> None:
    settings = load_settings(_REQUIRED)
    schedules = Schedules()
    schedules.add("nightly", "0 2 * * *", "job")
    async with memory_backend() as full:
        bare = attrs.evolve(full, schedules=None, rate_limiter=None)
        with pytest.raises(NotSupportedHere, match="no rate limiter"):
            throttle_for(settings=settings, backend=bare, queue="default")
        with pytest.raises(NotSupportedHere, match="no schedule store"):
            scheduler_for(bare, schedules)


async def test_a_job_type_named_in_rate_limits_is_limited_in_the_router() -> None:
    settings = load_settings({**_REQUIRED, "SKINCARE_RATE_LIMITS": "default=50,sms=2"})
    started: list[int] = []

    async def send(_job: Job) -> None:
        started.append(math.floor(time.time()))

    router = Router()
    router.register("sms", send)
    async with memory_backend() as backend:
        throttle_job_types(settings=settings, backend=backend, router=router)
        for n in range(3):
            await router.dispatch(new_job("sms", n=str(n)))
    assert started[0] == started[1] < started[2]


async def test_a_rate_limit_naming_neither_a_queue_nor_a_job_type_is_refused() -> None:
    settings = load_settings({**_REQUIRED, "SKINCARE_RATE_LIMITS": "smss=2"})
    router = Router()
    router.register("sms", _nothing)
    async with memory_backend() as backend:
        with pytest.raises(
            NotSupportedHere, match="'smss' is neither a named queue nor a job type"
        ):
            throttle_job_types(settings=settings, backend=backend, router=router)


async def _nothing(_job: Job) -> None:
    return None
