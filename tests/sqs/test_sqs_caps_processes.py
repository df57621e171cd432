"""A concurrency cap across real worker processes on SQS (moto), counted in the ledger's
database: four processes of four slots each, a cap of three, 200 jobs of 200 ms. The handlers'
own start and end times show at most three running at once, a drain of no less than
200 x 0.2 / 3 s, and a slot a job frees taken again within about CAP_WAIT (a retry in another
process) plus moto's requests: the median freed slot stays empty less than three CAP_WAITs,
short of the 1 s a job held back with SQS's shortest delay would wait. The drain's length is
not asserted: under the suite's load moto's requests take tens of milliseconds each."""

from __future__ import annotations

import statistics
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs import Envelope, new_job
from skincare_postgres import PostgresJobLedger
from skincare_sqs import ensure_queues, sqs_backend
from skincare_sqs.caps import CAP_WAIT
from tests.capped_spans import most_at_once, refill_gaps, spans_of_workers
from tests.sqs.capped_worker import QUEUES, VISIBILITY, WORK

pytestmark = pytest.mark.anyio
_JOBS, _CAP, _PROCESSES = 200, 3, 4
_IDEAL = _JOBS * WORK / _CAP
# How long the workers run: the start of four processes and the drain, on a loaded machine.
_RUNNING = _IDEAL * 4 + 30


def test_refill_gaps_pair_each_freed_slot_with_the_next_start() -> None:
    # Two slots: the first frees at 1 and is taken at 1.25, the second frees at 2, taken at 2.5;
    # the last two ends have no start after them.
    assert refill_gaps([(0, 1), (0, 2), (1.25, 3), (2.5, 4)]) == [0.25, 0.5]
    assert refill_gaps([]) == []


@given(st.lists(st.tuples(st.integers(1, 100), st.integers(0, 100)), max_size=30))
def test_one_slot_s_refill_gaps_are_the_waits_between_its_jobs(
    jobs: list[tuple[int, int]],
) -> None:
    spans, at = [], 0
    for took, wait in jobs:
        spans.append((at, at + took))
        at += took + wait
    assert refill_gaps(spans) == [wait for _, wait in jobs[:-1]]


@pytest.mark.slow
async def test_a_cap_of_three_holds_across_four_sqs_worker_processes(
    sqs_client: Any, ledger: PostgresJobLedger, database_url: str, tmp_path: Path
) -> None:
    prefix = f"capped-{uuid.uuid4().hex[:12]}"
    visibility = int(VISIBILITY.total_seconds())
    urls = ensure_queues(sqs_client, prefix, QUEUES, visibility_timeout=visibility)
    async with sqs_backend(sqs_client, urls=urls, ledger=ledger, queues=QUEUES) as backend:
        jobs = [Envelope(new_job("capped", n=str(n))) for n in range(_JOBS)]
        assert await backend.sink.enqueue_many(jobs) == _JOBS
    outs = [tmp_path / f"worker-{n}.txt" for n in range(_PROCESSES)]
    caps = f"type:capped={_CAP}"

    def argv(out: Path) -> list[str]:
        return ["tests.sqs.capped_worker", database_url, prefix, str(out), caps, str(_RUNNING)]

    spans = spans_of_workers(argv, outs, _JOBS, within=_RUNNING)
    drain = max(end for _, end in spans) - min(start for start, _ in spans)
    assert most_at_once(spans) == _CAP
    assert sum(bool(out.read_text()) for out in outs) > 1, "one process ran every job"
    # The measured figures, for docs/performance.md (pytest -s shows them).
    gap = statistics.median(refill_gaps(spans))
    print(f"cap {_CAP}: most at once {most_at_once(spans)}, drain {drain:.2f} s ({_IDEAL:.2f})")
    print(f"a freed slot empty for {gap * 1000:.0f} ms (median)")
    assert drain >= _IDEAL
    assert gap < 3 * CAP_WAIT.total_seconds()
