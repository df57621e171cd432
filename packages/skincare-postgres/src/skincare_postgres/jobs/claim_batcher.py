"""Group claims: receives that wait while one claim runs share the next claim statement."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import anyio
from attrs import define, field

T = TypeVar("T")


@define
class _Request(Generic[T]):
    limit: int
    rows: list[T] = field(factory=list)
    served: bool = False


class ClaimBatcher(Generic[T]):
    """`claim(limit)` returns up to `limit` rows; the limits of callers that queued up while a
    claim ran add up into the next one, so the rows claimed at once follow the callers' demand.
    """

    def __init__(self, run: Callable[[int], Awaitable[list[T]]]) -> None:
        self._run = run
        self._waiting: list[_Request[T]] = []
        self._turn = anyio.Lock()

    async def claim(self, limit: int) -> list[T]:
        """Up to `limit` rows, claimed by this call or by the one before it in line."""
        # A free turn is taken without the yield of acquire(): most claims find it free.
        request: _Request[T] = _Request(limit)
        self._waiting.append(request)
        try:
            self._turn.acquire_nowait()
        except anyio.WouldBlock:
            try:
                await self._turn.acquire()
            except BaseException:
                # Cancelled in line: no later claim should take rows for this caller.
                if request in self._waiting:
                    self._waiting.remove(request)
                raise
        try:
            if not request.served:
                await self._serve(request)
        finally:
            self._turn.release()
        return request.rows

    async def _serve(self, mine: _Request[T]) -> None:
        batch, self._waiting = self._waiting, []
        try:
            rows = await self._run(sum(request.limit for request in batch))
        except BaseException:
            # The others keep their place in line and claim for themselves on their turn.
            self._waiting[:0] = [request for request in batch if request is not mine]
            raise
        start = 0
        for request in batch:
            request.rows = rows[start : start + request.limit]
            request.served = True
            start += request.limit
