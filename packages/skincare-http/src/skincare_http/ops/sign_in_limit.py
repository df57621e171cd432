"""A limit on guessing the operator's credential: failed sign-ins are counted per client
address, and an address with `FAILURE_LIMIT` failures within `LOCKOUT` is refused (429) until
the oldest of them is `LOCKOUT` old, whatever it sends.

The counts live in the ops app (one process); behind a proxy every client shares its address.
"""

from __future__ import annotations

import math
from collections import deque
from datetime import datetime, timedelta

from litestar.exceptions import TooManyRequestsException

from skincare_core.shop.ports import Clock

FAILURE_LIMIT = 10
LOCKOUT = timedelta(minutes=5)
# Addresses remembered at once; past this the one failing longest ago is forgotten first.
ADDRESSES = 10_000


class SignInLimit:
    """Failed sign-ins per client address over the last `lockout`, by `clock`."""

    def __init__(
        self, clock: Clock, *, limit: int = FAILURE_LIMIT, lockout: timedelta = LOCKOUT
    ) -> None:
        self._clock = clock
        self._limit = limit
        self._lockout = lockout
        self._failures: dict[str, deque[datetime]] = {}

    def check(self, address: str) -> None:
        """Raise 429 (with Retry-After) while `address` is locked out."""
        recent = self._recent(address)
        if len(recent) >= self._limit:
            wait = recent[0] + self._lockout - self._clock.now()
            retry_after = str(max(1, math.ceil(wait.total_seconds())))
            raise TooManyRequestsException(
                "too many failed sign-ins: try again later", headers={"Retry-After": retry_after}
            )

    def failed(self, address: str) -> None:
        """Count a failed sign-in from `address`."""
        recent = self._recent(address)
        recent.append(self._clock.now())
        self._failures.pop(address, None)
        self._failures[address] = recent
        if len(self._failures) > ADDRESSES:
            del self._failures[next(iter(self._failures))]

    def _recent(self, address: str) -> deque[datetime]:
        recent = self._failures.get(address, deque(maxlen=self._limit))
        since = self._clock.now() - self._lockout
        while recent and recent[0] <= since:
            recent.popleft()
        return recent
