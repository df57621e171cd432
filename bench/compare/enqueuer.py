"""An enqueuer in its own process (as an API process would be), batches of 10, paced or flat out."""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio

from bench.compare.systems import Variant, open_system

BATCH = 10


class EnqueuerProcess:
    """A spawned process enqueuing for `seconds` once `go()` is called; `enqueued()` at the end."""

    def __init__(self, variant: Variant, url: str, seconds: float, rate: float | None) -> None:
        context = multiprocessing.get_context("spawn")
        self._ready = context.Event()
        self._go = context.Event()
        self._results: multiprocessing.Queue[int] = context.Queue()
        args = (variant, url, seconds, rate, self._ready, self._go, self._results)
        self._process = context.Process(target=_main, args=args, daemon=True)

    async def start(self) -> None:
        """Start the process and wait until it has connected."""
        self._process.start()
        await anyio.to_thread.run_sync(self._ready.wait, 60.0)

    def go(self) -> None:
        """Start enqueuing now."""
        self._go.set()

    async def enqueued(self) -> int:
        """Wait for the process to finish; how many jobs it enqueued."""
        count = await anyio.to_thread.run_sync(self._results.get, True, 120.0)
        await anyio.to_thread.run_sync(self._process.join, 30.0)
        return count

    def kill(self) -> None:
        """Stop the process if it is still running (the scenario failed midway)."""
        if self._process.is_alive():
            self._process.kill()


@contextmanager
def running(process: EnqueuerProcess) -> Iterator[EnqueuerProcess]:
    """The process, killed on the way out if still alive."""
    try:
        yield process
    finally:
        process.kill()


def _main(
    variant: Variant,
    url: str,
    seconds: float,
    rate: float | None,
    ready: multiprocessing.synchronize.Event,
    go: multiprocessing.synchronize.Event,
    results: multiprocessing.Queue[int],
) -> None:
    results.put(anyio.run(_enqueue, variant, url, seconds, rate, ready, go))


async def _enqueue(
    variant: Variant, url: str, seconds: float, rate: float | None, *events: Any
) -> int:
    ready, go = events
    count = 0
    async with open_system(variant, url) as system:
        ready.set()
        await anyio.to_thread.run_sync(go.wait)
        start = time.perf_counter()
        while (now := time.perf_counter()) - start < seconds:
            if rate is not None:
                await anyio.sleep(max(0.0, start + count / rate - now))
            await system.enqueue([{"n": str(count + i)} for i in range(BATCH)])
            count += BATCH
    return count
