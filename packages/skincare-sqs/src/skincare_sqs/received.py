"""The bodies this process received, per receipt, until their delivery is settled.

Dead-lettering forwards a body exactly as SQS delivered it, never a re-encoding of the decoded
job: the DLQ keeps what the sender wrote, however the codec would have written it.
"""

from __future__ import annotations

from collections import OrderedDict

# Far above any worker's in-flight jobs; only receipts nobody settles ever reach it.
_MAX_KEPT = 10_000


class ReceivedBodies:
    """receipt -> body of the message it leased, oldest dropped first past a bound."""

    def __init__(self, limit: int = _MAX_KEPT) -> None:
        self._limit = limit
        self._bodies: OrderedDict[str, str] = OrderedDict()

    def keep(self, receipt: str, body: str) -> None:
        """Remember the body delivered under this receipt."""
        self._bodies[receipt] = body
        while len(self._bodies) > self._limit:
            self._bodies.popitem(last=False)

    def pop(self, receipt: str) -> str | None:
        """The body delivered under this receipt, forgotten from now on (None if unknown)."""
        return self._bodies.pop(receipt, None)
