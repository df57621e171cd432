"""Claims that follow a worker's free slots: their size, and how many run at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from skincare_core.jobs.job import Message

_REFILL_WAIT = 0.005
_NEVER = float("inf")
Receive = Callable[[int], Awaitable[list[Message]]]


class Changes:
    """A wake-up for whoever waits until the worker's counts change; firing costs a check."""

    def __init__(self) -> None:
        self._event: anyio.Event | None = None

    def fire(self) -> None:
        """Wake every waiter."""
        if self._event is not None:
            self._event.set()
            self._event = None

    async def wait(self) -> None:
        """Until the next `fire`."""
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()


class Intake:
    """Claimers that keep the free slots filled, a fetch-ahead like graphile-worker's.

    Each claim asks for the slots free at that moment (at most `batch`). While claims come back
    full the queue has a backlog: free slots are claimed at once, and another claim starts as
    soon as `batch` slots are free even if one is in flight, so the jobs claimed at once grow
    with the concurrency. Otherwise one claim at a time, for a batch's worth of free slots.
    """

    def __init__(
        self,
        *,
        receive: Receive,
        deliver: Callable[[list[Message]], None],
        busy: Callable[[], int],
        changes: Changes,
        concurrency: int,
        batch: int,
    ) -> None:
        self._receive = receive
        self._deliver = deliver
        self._busy = busy
        self._changes = changes
        self._concurrency = concurrency
        self._batch = batch
        self._target = min(batch, concurrency)
        self._reserved = 0
        self._claiming = 0
        self._backlog = False
        self._wake_at = _NEVER
        self._duty = anyio.Lock()

    async def run(self) -> None:
        """Forever: one claimer per `batch` slots, taking turns to wait for room."""
        async with anyio.create_task_group() as tg:
            for _ in range(-(-self._concurrency // self._target)):
                tg.start_soon(self._claimer)

    def freed(self) -> None:
        """Slots were freed: wake the waiting claimer once as many as it waits for are free."""
        if self._wake_at != _NEVER and self._free() >= self._wake_at:
            self._changes.fire()

    async def _claimer(self) -> None:
        while True:
            async with self._duty:
                wanted = await self._room()
                self._reserved += wanted
                self._claiming += 1
            try:
                messages = await self._receive(wanted)
            finally:
                self._reserved -= wanted
                self._claiming -= 1
            self._backlog = len(messages) >= wanted
            self._deliver(messages)
            self._changes.fire()

    def _free(self) -> int:
        return self._concurrency - self._busy() - self._reserved

    def _may_claim(self) -> bool:
        if not self._claiming:
            return self._free() > 0
        return self._backlog and self._free() >= self._target

    async def _room(self) -> int:
        while not self._may_claim():
            wake_at = 1 if not self._claiming else self._target if self._backlog else _NEVER
            await self._wait_until_free(wake_at)
        if not (self._claiming or self._backlog) and self._busy() and self._free() < self._target:
            # Without a backlog a claim per freed slot would cost a round trip per job:
            # waiting a moment for a batch's worth of slots makes each claim fetch a batch.
            # With one, the free slots are claimed at once (fetch-ahead) while others run.
            with anyio.move_on_after(_REFILL_WAIT):
                while self._free() < self._target:
                    await self._wait_until_free(self._target)
        return min(self._batch, self._free())

    async def _wait_until_free(self, slots: float) -> None:
        # Frees wake this claimer only at `slots`, not per job; a returning claim always does.
        self._wake_at = slots
        try:
            await self._changes.wait()
        finally:
            self._wake_at = _NEVER
