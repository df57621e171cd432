"""Concurrency caps: at most N jobs running at once of a job type, of a named queue, or of the
job types that share a key (one SMTP relay, one payment provider), across every worker process.

A cap is enforced where jobs are claimed: a claim leases a job only while every cap the job
falls under has room, counting the live leases of every process (on Postgres in the database,
in the in-memory kit across its queues). A job held back is not leased, so it spends no
attempt; a crashed worker's jobs stop counting when their leases expire.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from attrs import field, frozen

TYPE, QUEUE, KEY = "type", "queue", "key"
"""The kinds of cap, the first part of a cap's name (`type:send_confirmation_email`)."""


def _limits(value: Mapping[str, int]) -> Mapping[str, int]:
    for name, limit in value.items():
        if not name:
            raise ValueError("a capped name must be a non-empty string")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"the cap of {name!r} must be a whole number >= 1, got {limit!r}")
    return dict(value)


def _shared(value: Mapping[str, str]) -> Mapping[str, str]:
    return dict(value)


@frozen
class ConcurrencyCaps:
    """`types` (job type -> most running at once), `queues` (named queue -> most running at
    once) and `keys` (key -> most running at once among the job types `shared` gives it:
    job type -> key). A job falls under its type's, its queue's and its key's cap, where each
    is given, and starts only while all of them have room."""

    types: Mapping[str, int] = field(factory=dict, converter=_limits)
    queues: Mapping[str, int] = field(factory=dict, converter=_limits)
    keys: Mapping[str, int] = field(factory=dict, converter=_limits)
    shared: Mapping[str, str] = field(factory=dict, converter=_shared)

    def __attrs_post_init__(self) -> None:
        unknown = sorted({k for k in self.shared.values() if k not in self.keys})
        if unknown:
            raise ValueError(f"job types share a key with no cap: {', '.join(unknown)}")

    def __bool__(self) -> bool:
        return bool(self.types or self.queues or self.keys)

    @property
    def limits(self) -> dict[str, int]:
        """Every cap by name (`type:T`, `queue:Q`, `key:K`) and its limit."""
        named = [(TYPE, self.types), (QUEUE, self.queues), (KEY, self.keys)]
        return {f"{kind}:{name}": n for kind, caps in named for name, n in caps.items()}

    def caps_of(self, queue: str, job_type: str) -> tuple[str, ...]:
        """The names of the caps a job of `job_type` in `queue` falls under."""
        caps = []
        if job_type in self.types:
            caps.append(f"{TYPE}:{job_type}")
        if queue in self.queues:
            caps.append(f"{QUEUE}:{queue}")
        if (key := self.shared.get(job_type)) is not None:
            caps.append(f"{KEY}:{key}")
        return tuple(caps)

    def relevant_to(self, queue: str) -> tuple[str, ...]:
        """The caps a claim of `queue` may meet, sorted (the order to lock them in): the
        queue's own and every type's and key's (a job of any type may be in any queue)."""
        limits = self.limits
        return tuple(
            sorted(c for c in limits if not c.startswith(f"{QUEUE}:") or c == f"{QUEUE}:{queue}")
        )

    @property
    def capped_types(self) -> tuple[str, ...]:
        """The job types a type or key cap counts, sorted: outside a capped queue, a job of
        any other type falls under no cap."""
        return tuple(sorted({*self.types, *self.shared}))

    def types_under(self, cap: str) -> tuple[str, ...]:
        """The job types a type or key cap counts (none for a queue cap)."""
        kind, _, name = cap.partition(":")
        if kind == TYPE:
            return (name,)
        return tuple(t for t, key in self.shared.items() if kind == KEY and key == name)


NO_CAPS = ConcurrencyCaps()
"""No cap at all: every claim takes what is due."""


class CapRoom:
    """The room left under each cap for one claim, given how many jobs run under each now;
    `take` books a slot of every cap a job falls under, or none if one of them is full."""

    def __init__(self, caps: ConcurrencyCaps, running: Mapping[str, int]) -> None:
        self._caps = caps
        self._room = {cap: limit - running.get(cap, 0) for cap, limit in caps.limits.items()}
        self.held_back = False

    def take(self, queue: str, job_type: str) -> bool:
        """Book the job's caps if all have room; False (and nothing booked) otherwise."""
        caps = self._caps.caps_of(queue, job_type)
        if any(self._room[cap] <= 0 for cap in caps):
            self.held_back = True
            return False
        for cap in caps:
            self._room[cap] -= 1
        return True

    def queue_full(self, queue: str) -> bool:
        """Whether the queue's own cap has no room (nothing of it may start)."""
        return self._room.get(f"{QUEUE}:{queue}", 1) <= 0

    def full_types(self) -> list[str]:
        """The job types a full type or key cap holds back: a claim need not look at them."""
        full = [cap for cap, room in self._room.items() if room <= 0]
        return sorted({t for cap in full for t in self._caps.types_under(cap)})


def running_by_cap(caps: ConcurrencyCaps, jobs: Iterable[tuple[str, str]]) -> dict[str, int]:
    """How many of the running `jobs` (queue, job type) fall under each cap."""
    counts: dict[str, int] = {}
    for queue, job_type in jobs:
        for cap in caps.caps_of(queue, job_type):
            counts[cap] = counts.get(cap, 0) + 1
    return counts
