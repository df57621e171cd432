"""A concurrency cap across real worker processes: four processes of four slots each, a cap of
three, 200 jobs of 200 ms. The handlers' own start and end times show at most three running at
once, a drain of no less than 200 x 0.2 / 3 s, and a slot a job frees taken again soon: a
claim a cap held back looks again within 10 ms, so the median freed slot stays empty well
under a quarter of the 1 s poll a worker waits when nothing wakes it. The drain's length is not
asserted: beside the whole suite on a slower machine it took 1.39 times the ideal."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from skincare_core.jobs import Envelope, new_job
from skincare_postgres import postgres_backend
from tests.capped_spans import most_at_once, refill_gaps, spans_of_workers
from tests.postgres.capped_worker import WORK

pytestmark = pytest.mark.anyio
_JOBS, _CAP, _PROCESSES = 200, 3, 4
_IDEAL = _JOBS * WORK / _CAP
_FREED_SLOT_EMPTY = 0.25


def test_most_at_once_counts_overlaps() -> None:
    assert most_at_once([(0, 1), (1, 2), (0.5, 1.5)]) == 2
    assert most_at_once([]) == 0


@pytest.mark.slow
async def test_a_cap_of_three_holds_across_four_worker_processes(
    engine: AsyncEngine, shop_url: str, tmp_path: Path
) -> None:
    async with postgres_backend(engine) as backend:
        jobs = [Envelope(new_job("capped", n=str(n))) for n in range(_JOBS)]
        assert await backend.sink.enqueue_many(jobs) == _JOBS
    outs = [tmp_path / f"worker-{n}.txt" for n in range(_PROCESSES)]
    seconds = _IDEAL * 3 + 20
    caps = f"type:capped={_CAP}"

    def argv(out: Path) -> list[str]:
        return ["tests.postgres.capped_worker", shop_url, str(out), caps, str(seconds)]

    spans = spans_of_workers(argv, outs, _JOBS, within=seconds)
    drain = max(end for _, end in spans) - min(start for start, _ in spans)
    assert most_at_once(spans) == _CAP
    assert sum(bool(out.read_text()) for out in outs) > 1, "one process ran every job"
    # The measured figures, for docs/performance.md (pytest -s shows them).
    gap = statistics.median(refill_gaps(spans))
    print(f"cap {_CAP}: most at once {most_at_once(spans)}, drain {drain:.2f} s ({_IDEAL:.2f})")
    print(f"a freed slot empty for {gap * 1000:.0f} ms (median)")
    assert drain >= _IDEAL
    assert gap < _FREED_SLOT_EMPTY
