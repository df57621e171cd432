"""The worker process's periodic schedules and rate limits, on what its backend provides."""

from __future__ import annotations

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.rate_limit import RateLimit, Throttle
from skincare_core.jobs.scheduler import Scheduler, Schedules
from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_services.settings import Settings


class NotSupportedHere(ValueError):
    """The configured backend lacks what a setting or a schedule needs; one line, exit 2."""


def scheduler_for(backend: Backend, schedules: Schedules | None) -> Scheduler | None:
    """A scheduler of `schedules` on the backend's store; None without schedules."""
    if schedules is None or not schedules.all:
        return None
    if backend.schedules is None:
        raise NotSupportedHere("this queue backend has no schedule store: periodic jobs need one")
    return Scheduler(schedules=schedules, store=backend.schedules, routes=SHOP_ROUTES)


def throttle_for(*, settings: Settings, backend: Backend, queue: str) -> Throttle | None:
    """The throttle of `queue` if SKINCARE_RATE_LIMITS names it, on the backend's limiter."""
    per_second = settings.rate_limits.get(queue)
    if per_second is None:
        return None
    if backend.rate_limiter is None:
        raise NotSupportedHere(
            "this queue backend has no rate limiter: SKINCARE_RATE_LIMITS needs one"
        )
    return Throttle(backend.rate_limiter, RateLimit(queue, per_second))
