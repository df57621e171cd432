"""The worker process's periodic schedules and rate limits, on what its backend provides."""

from __future__ import annotations

from collections.abc import Callable

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.ports import RateLimiter
from skincare_core.jobs.rate_limit import RateLimit, Throttle, throttled
from skincare_core.jobs.router import Handler, Router
from skincare_core.jobs.scheduler import Scheduler, Schedules
from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_core.shop.periodic import add_daily_sales_summary
from skincare_services.settings import Settings


class NotSupportedHere(ValueError):
    """The configured backend lacks what a setting or a schedule needs; one line, exit 2."""


def process_schedules(settings: Settings, schedules: Schedules | None) -> Schedules:
    """A team's `schedules`, after the shop's daily sales summary when SKINCARE_ADMIN_EMAIL is
    set (there is no one to send it to otherwise); a name in both is a ValueError."""
    merged = Schedules()
    if settings.admin_email:
        add_daily_sales_summary(merged)
    for schedule in () if schedules is None else schedules.all:
        merged.add(
            schedule.name,
            schedule.cron,
            schedule.job_type,
            schedule.payload,
            timezone=schedule.timezone,
        )
    return merged


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
    return Throttle(_limiter(backend), RateLimit(queue, per_second))


def throttle_job_types(*, settings: Settings, backend: Backend, router: Router) -> None:
    """Limit each job type SKINCARE_RATE_LIMITS names (a name that is no named queue) in
    `router`; a name that is neither a queue nor a routed job type is NotSupportedHere."""
    queues = {*settings.worker_queues, *SHOP_ROUTES.names}
    for name, per_second in settings.rate_limits.items():
        if name in queues:
            continue
        if name not in router.job_types:
            raise NotSupportedHere(
                f"SKINCARE_RATE_LIMITS: {name!r} is neither a named queue nor a job type"
            )
        throttle = Throttle(_limiter(backend), RateLimit(f"type:{name}", per_second))
        router.wrap(name, _limited_by(throttle))


def _limited_by(throttle: Throttle) -> Callable[[Handler], Handler]:
    return lambda handler: throttled(handler, throttle)


def _limiter(backend: Backend) -> RateLimiter:
    if backend.rate_limiter is None:
        raise NotSupportedHere(
            "this queue backend has no rate limiter: SKINCARE_RATE_LIMITS needs one"
        )
    return backend.rate_limiter
