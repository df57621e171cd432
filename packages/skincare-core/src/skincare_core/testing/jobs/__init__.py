"""The engine's test kit: an in-memory queue with real leases, delays, attempts and dead letters.

The queue contract suite every adapter runs is `skincare_core.testing.jobs.contract`.
"""

from skincare_core.testing.jobs.memory_queue import InMemoryQueue

__all__ = ["InMemoryQueue"]
