"""Priority within a named queue: 1 is the most urgent, 4 the least, 2 unless said otherwise.

A claim takes the most urgent due job first, then the earliest due among equals. There is no
aging: a job of priority 3 waits while priority-1 or -2 jobs are due in its queue, however long.
Priority orders work inside one queue; a job that must not starve behind urgent work belongs in
a named queue of its own (each has its own workers), which bounds its wait by design.
"""

from __future__ import annotations

from collections.abc import Mapping

MOST_URGENT = 1
"""The most urgent priority: claimed before any other due job of its queue."""

LEAST_URGENT = 4
"""The least urgent priority."""

DEFAULT_PRIORITY = 2
"""A job's priority unless its type or its enqueue names one (one level above it is free)."""

PRIORITIES = tuple(range(MOST_URGENT, LEAST_URGENT + 1))
"""Every priority, most urgent first."""


def check_priority(value: int) -> int:
    """`value` if it is a priority (an int from 1, most urgent, to 4); ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value not in PRIORITIES:
        raise ValueError(
            f"invalid priority {value!r}: an integer from {MOST_URGENT} (most urgent)"
            f" to {LEAST_URGENT} (least urgent)"
        )
    return value


def checked_priorities(priorities: Mapping[str, int]) -> Mapping[str, int]:
    """A copy of job type -> priority, each checked (ValueError naming the first bad one)."""
    for job_type, priority in priorities.items():
        if not job_type:
            raise ValueError("a job type given a priority must be a non-empty string")
        check_priority(priority)
    return dict(priorities)
