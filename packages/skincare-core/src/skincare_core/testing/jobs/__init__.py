"""The engine's test kit: an in-memory queue with real leases, delays, attempts and dead letters.

`memory_backend` yields it in the `Backend` shape every queue adapter yields. The queue contract
suite every adapter runs is `skincare_core.testing.jobs.contract`.
"""

from skincare_core.testing.jobs.memory_backend import memory_backend
from skincare_core.testing.jobs.memory_queue import InMemoryQueue

__all__ = ["InMemoryQueue", "memory_backend"]
