"""Per job type and minute: jobs done, retried and failed, and how long they ran and waited.

The worker counts them in memory as it runs jobs (`MinuteRecorder`, a `JobMetrics`, so nothing
is added to a settle), and a `MinuteFlusher` writes what it counted to a `MinuteStore` every few
seconds: one row per queue, type and minute per process. Durations and pickup latencies are kept
as histograms over fixed buckets (`BOUNDS_MS`), which add up across processes and minutes, so
the ops page shows an hour of trends and p50/p95 per type from a few hundred rows, whatever the
job rate or the size of the job history.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

import anyio
from attrs import frozen

from skincare_core.jobs.errors import Unavailable
from skincare_core.jobs.metrics import JobMetrics, Outcome

logger = logging.getLogger(__name__)

BOUNDS_MS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000)
"""Each bucket's upper bound in milliseconds; a last bucket holds everything slower."""
BUCKETS = len(BOUNDS_MS) + 1
EMPTY = (0,) * BUCKETS
HOUR = timedelta(hours=1)
FLUSH_EVERY = 5.0


def bucket_of(seconds: float) -> int:
    """The histogram bucket a duration falls in."""
    return bisect.bisect_left(BOUNDS_MS, seconds * 1000)


def _added(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    return tuple(x + y for x, y in zip(a, b, strict=True))


@frozen
class TypeMinute:
    """One job type's jobs on one queue in one wall-clock minute: done, retried and failed
    (dead-lettered), and the histograms of their run times and pickup latencies."""

    queue: str
    job_type: str
    minute: datetime
    done: int = 0
    retried: int = 0
    failed: int = 0
    durations: tuple[int, ...] = EMPTY
    pickups: tuple[int, ...] = EMPTY

    @property
    def key(self) -> tuple[str, str, datetime]:
        """What rows of the same minute are added up by."""
        return (self.queue, self.job_type, self.minute)

    def plus(self, other: TypeMinute) -> TypeMinute:
        """This minute's counts and the other's added up."""
        return TypeMinute(
            self.queue,
            self.job_type,
            self.minute,
            self.done + other.done,
            self.retried + other.retried,
            self.failed + other.failed,
            _added(self.durations, other.durations),
            _added(self.pickups, other.pickups),
        )


def merged(rows: Iterable[TypeMinute]) -> list[TypeMinute]:
    """Rows of the same queue, type and minute added up, in no particular order."""
    by_key: dict[tuple[str, str, datetime], TypeMinute] = {}
    for row in rows:
        kept = by_key.get(row.key)
        by_key[row.key] = row if kept is None else kept.plus(row)
    return list(by_key.values())


def percentile_ms(histogram: Sequence[int], share: float) -> float | None:
    """The upper bound (ms) of the bucket holding the `share` quantile; None without data,
    infinity when it lies beyond the last bound."""
    total = sum(histogram)
    if not total:
        return None
    wanted, seen = share * total, 0
    for index, count in enumerate(histogram):
        seen += count
        if seen >= wanted and count:
            return float(BOUNDS_MS[index]) if index < len(BOUNDS_MS) else float("inf")
    return float("inf")


class MinuteStore(Protocol):
    """Where the workers' per-minute counts go, summed by whoever reads them."""

    async def add(self, rows: Sequence[TypeMinute]) -> None:
        """Add these counts to what is stored for each row's queue, type and minute."""

    async def since(self, start: datetime) -> list[TypeMinute]:
        """Every queue's and type's minutes from `start` on, each minute summed."""


def _minute(now: datetime) -> datetime:
    return now.replace(second=0, microsecond=0)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class MinuteRecorder:
    """A `JobMetrics` that counts, in memory, per queue, type and minute; `take` hands the
    counts over and starts again. Only additions on the hot path."""

    def __init__(self, clock: Callable[[], datetime] = _utc_now) -> None:
        self._clock = clock
        self._rows: dict[tuple[str, str, datetime], TypeMinute] = {}

    def _add(self, row: TypeMinute) -> None:
        kept = self._rows.get(row.key)
        self._rows[row.key] = row if kept is None else kept.plus(row)

    def received(self, queue: str, count: int) -> None:
        """Not counted here."""

    def receive_failed(self, queue: str) -> None:
        """Not counted here."""

    def started(self, queue: str, job_type: str, pickup_latency: float | None) -> None:
        """A first delivery's wait goes into its minute's pickup histogram."""
        if pickup_latency is not None:
            pickups = tuple(int(i == bucket_of(pickup_latency)) for i in range(BUCKETS))
            self._add(TypeMinute(queue, job_type, _minute(self._clock()), pickups=pickups))

    def finished(self, queue: str, job_type: str, outcome: Outcome, duration: float) -> None:
        """Done, retried or failed (a job a shutdown stopped is none), with its run time."""
        if outcome == "cancelled":
            return
        durations = tuple(int(i == bucket_of(duration)) for i in range(BUCKETS))
        self._add(
            TypeMinute(
                queue,
                job_type,
                _minute(self._clock()),
                done=int(outcome == "done"),
                retried=int(outcome == "retried"),
                failed=int(outcome == "dead_lettered"),
                durations=durations,
            )
        )

    def settle_failed(self, queue: str) -> None:
        """Not counted here."""

    def take(self) -> list[TypeMinute]:
        """The counts so far; the recorder starts from nothing."""
        rows, self._rows = list(self._rows.values()), {}
        return rows

    def put_back(self, rows: Iterable[TypeMinute]) -> None:
        """Counts a store could not take: kept for the next flush."""
        for row in rows:
            self._add(row)


class TeeMetrics:
    """One `JobMetrics` that reports every call to each of several."""

    def __init__(self, *metrics: JobMetrics) -> None:
        self._all = metrics

    def received(self, queue: str, count: int) -> None:
        """To each."""
        for metrics in self._all:
            metrics.received(queue, count)

    def receive_failed(self, queue: str) -> None:
        """To each."""
        for metrics in self._all:
            metrics.receive_failed(queue)

    def started(self, queue: str, job_type: str, pickup_latency: float | None) -> None:
        """To each."""
        for metrics in self._all:
            metrics.started(queue, job_type, pickup_latency)

    def finished(self, queue: str, job_type: str, outcome: Outcome, duration: float) -> None:
        """To each."""
        for metrics in self._all:
            metrics.finished(queue, job_type, outcome, duration)

    def settle_failed(self, queue: str) -> None:
        """To each."""
        for metrics in self._all:
            metrics.settle_failed(queue)


class MinuteFlusher:
    """Writes a recorder's counts to a store every `every` seconds (and once more when
    stopped); counts the store cannot take now wait for the next round."""

    def __init__(
        self, recorder: MinuteRecorder, store: MinuteStore, *, every: float = FLUSH_EVERY
    ) -> None:
        self._recorder = recorder
        self._store = store
        self._every = every

    async def run(self) -> None:
        """Flush until cancelled, then flush what is left."""
        try:
            while True:
                await anyio.sleep(self._every)
                await self.flush()
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(self._every):
                await self.flush()

    async def flush(self) -> None:
        """Write what was counted since the last flush."""
        rows = self._recorder.take()
        if not rows:
            return
        try:
            await self._store.add(rows)
        except Unavailable as error:
            self._recorder.put_back(rows)
            logger.warning("minutes.flush_failed", extra={"error": repr(error)})


@frozen
class Trend:
    """An hour of one queue's (or one type's) jobs per minute, oldest first, 60 minutes from
    `start` (a minute without jobs counts zeros), and the p50/p95 of its run times and pickup
    latencies (ms)."""

    name: str
    start: datetime
    done: tuple[int, ...]
    retried: tuple[int, ...]
    failed: tuple[int, ...]
    duration_p50: float | None
    duration_p95: float | None
    pickup_p50: float | None
    pickup_p95: float | None

    @property
    def peak(self) -> int:
        """The most jobs that ended in one minute (for a chart's scale; at least 1)."""
        return max(
            1, *(d + r + f for d, r, f in zip(self.done, self.retried, self.failed, strict=True))
        )


def trends(
    rows: Iterable[TypeMinute], now: datetime, key: Callable[[TypeMinute], str]
) -> tuple[Trend, ...]:
    """One trend per `key` (the queue or the job type) over the hour up to `now`'s minute, by
    name; rows outside that hour are left out."""
    start = _minute(now) - timedelta(minutes=59)
    sums: dict[str, tuple[list[int], list[int], list[int], list[int], list[int]]] = {}
    for row in rows:
        index = int((row.minute - start).total_seconds() // 60)
        if not 0 <= index < 60:
            continue
        done, retried, failed, durations, pickups = sums.setdefault(
            key(row), ([0] * 60, [0] * 60, [0] * 60, [0] * BUCKETS, [0] * BUCKETS)
        )
        done[index] += row.done
        retried[index] += row.retried
        failed[index] += row.failed
        for bucket, count in enumerate(row.durations):
            durations[bucket] += count
        for bucket, count in enumerate(row.pickups):
            pickups[bucket] += count
    return tuple(_trend(name, start, *sums[name]) for name in sorted(sums))


def _trend(
    name: str,
    start: datetime,
    done: list[int],
    retried: list[int],
    failed: list[int],
    durations: list[int],
    pickups: list[int],
) -> Trend:
    return Trend(
        name,
        start,
        tuple(done),
        tuple(retried),
        tuple(failed),
        percentile_ms(durations, 0.5),
        percentile_ms(durations, 0.95),
        percentile_ms(pickups, 0.5),
        percentile_ms(pickups, 0.95),
    )
