"""Named queues: which queue each job type goes to, so slow bulk work never delays urgent jobs."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from attrs import field, frozen

from skincare_core.jobs.priority import DEFAULT_PRIORITY, checked_priorities

DEFAULT_QUEUE = "default"
"""The queue of every job type that no route names."""

# Queue names become parts of identifiers (a NOTIFY channel, an SQS queue name): keep them short
# and plain.
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")


def check_queue_name(name: str) -> str:
    """`name` if it is a valid queue name (lowercase letter first, then a-z 0-9 _ -, up to 40)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"invalid queue name {name!r}: a lowercase letter, then up to 39 of a-z 0-9 _ -"
        )
    return name


def _checked_routes(routes: Mapping[str, str]) -> Mapping[str, str]:
    for job_type, queue in routes.items():
        if not job_type:
            raise ValueError("a routed job type must be a non-empty string")
        check_queue_name(queue)
    return dict(routes)


@frozen
class QueueRoutes:
    """Job type -> named queue; a type no route names goes to `default`. `priorities` gives
    a job type its priority inside its queue (1 most urgent .. 4; unnamed: 2)."""

    routes: Mapping[str, str] = field(factory=dict, converter=_checked_routes)
    default: str = field(default=DEFAULT_QUEUE, validator=lambda _s, _a, v: check_queue_name(v))
    priorities: Mapping[str, int] = field(factory=dict, converter=checked_priorities, kw_only=True)

    def queue_of(self, job_type: str) -> str:
        """The named queue of `job_type`."""
        return self.routes.get(job_type, self.default)

    def priority_of(self, job_type: str) -> int:
        """The priority a job of `job_type` is enqueued with when its enqueue names none."""
        return self.priorities.get(job_type, DEFAULT_PRIORITY)

    def with_priorities(self, priorities: Mapping[str, int]) -> QueueRoutes:
        """These routes, with these job types' priorities (replacing any they had)."""
        merged = {**self.priorities, **priorities}
        return QueueRoutes(self.routes, self.default, priorities=merged)

    def with_types(self, routes: Mapping[str, str]) -> QueueRoutes:
        """These routes and another team's; a type routed to two different queues: ValueError."""
        clashes = sorted(t for t, q in routes.items() if self.routes.get(t, q) != q)
        if clashes:
            raise ValueError(f"job types already routed to another queue: {', '.join(clashes)}")
        return QueueRoutes({**self.routes, **routes}, self.default, priorities=self.priorities)

    @property
    def names(self) -> tuple[str, ...]:
        """Every queue these routes can send a job to, the default first."""
        return _unique([self.default, *self.routes.values()])


def _unique(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))
