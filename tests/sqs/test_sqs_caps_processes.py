"""A concurrency cap across real worker processes on SQS (moto), counted in the ledger's
database: four processes of four slots each, a cap of three, 200 jobs of 200 ms. The handlers'
own start and end times show at most three running at once, and the drain takes no less than
200 x 0.2 / 3 s, and less than twice that: moto answers each request in milliseconds to tens of
them on a loaded machine, and a slot freed in another process is taken within CAP_WAIT."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from skincare_core.jobs import Envelope, new_job
from skincare_postgres import PostgresJobLedger
from skincare_sqs import ensure_queues, sqs_backend
from tests.capped_spans import most_at_once, spans_of_workers
from tests.sqs.capped_worker import QUEUES, VISIBILITY, WORK

pytestmark = pytest.mark.anyio
_JOBS, _CAP, _PROCESSES = 200, 3, 4
_IDEAL = _JOBS * WORK / _CAP
# How long the workers run: the start of four processes and the drain, on a loaded machine.
_RUNNING = _IDEAL * 4 + 30


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
    print(f"cap {_CAP}: most at once {most_at_once(spans)}, drain {drain:.2f} s ({_IDEAL:.2f})")
    assert _IDEAL <= drain < _IDEAL * 2, drain
