"""The receipts this process was handed, to spot a stale one before it reaches SQS.

SQS (and moto) may still accept an older receipt of a message that was received again, so
the adapter remembers the newest receipt per message id it saw and ignores older ones.
"""

from __future__ import annotations

from collections import OrderedDict

_MAX_REMEMBERED = 100_000


class Leases:
    """message id <-> newest receipt, for receipts this process received (bounded)."""

    def __init__(self, limit: int = _MAX_REMEMBERED) -> None:
        self._limit = limit
        self._message_of: OrderedDict[str, str] = OrderedDict()
        self._newest: dict[str, str] = {}

    def received(self, message_id: str, receipt: str) -> None:
        """A message came with this receipt: older receipts of it are stale from now on."""
        self._message_of[receipt] = message_id
        self._newest[message_id] = receipt
        while len(self._message_of) > self._limit:
            old_receipt, old_id = self._message_of.popitem(last=False)
            if self._newest.get(old_id) == old_receipt:
                del self._newest[old_id]

    def is_stale(self, receipt: str) -> bool:
        """True if this process later received the same message under a newer receipt."""
        message_id = self._message_of.get(receipt)
        return message_id is not None and self._newest.get(message_id) != receipt

    def message_id(self, receipt: str) -> str | None:
        """The message id a receipt was received with, if this process received it."""
        return self._message_of.get(receipt)

    def forget(self, receipt: str) -> None:
        """The message is gone (deleted): drop what was remembered of this receipt."""
        message_id = self._message_of.pop(receipt, None)
        if message_id is not None and self._newest.get(message_id) == receipt:
            del self._newest[message_id]
