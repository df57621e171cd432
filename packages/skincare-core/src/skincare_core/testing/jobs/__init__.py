"""The engine's test kit: in-memory named queues with real leases, delays, unique keys, cancel,
attempts and dead letters.

`memory_backend` yields them in the `Backend` shape every queue adapter yields. The queue contract
suite every adapter runs is `skincare_core.testing.jobs.contract`.
"""

from skincare_core.testing.jobs.memory_backend import InMemoryQueues, memory_backend
from skincare_core.testing.jobs.memory_history import InMemoryHistory
from skincare_core.testing.jobs.memory_queue import InMemoryQueue
from skincare_core.testing.jobs.memory_schedules import InMemoryRateLimiter, InMemoryScheduleStore

__all__ = [
    "InMemoryHistory",
    "InMemoryQueue",
    "InMemoryQueues",
    "InMemoryRateLimiter",
    "InMemoryScheduleStore",
    "memory_backend",
]
