"""What the SQS backend counts as done and failed for the ops page: a body that is no job is a
failure of its queue when it reaches the DLQ, and only a message SQS deleted is done (an entry
it refused is not: its job comes back and is counted when it ends). moto's HTTP server and the
embedded PostgreSQL; the DeleteMessageBatch rule also as a property."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.outcomes import OutcomeCounts
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_postgres import PostgresJobLedger
from skincare_sqs import QueueUrls, sqs_backend
from skincare_sqs.client import STALE_RECEIPT_CODES
from skincare_sqs.queue import answered
from tests.sqs.conftest import ProvisionNamed

pytestmark = pytest.mark.anyio


@pytest.fixture
def urls(fresh_named_queues: ProvisionNamed) -> dict[str, QueueUrls]:
    return fresh_named_queues(["default"])


@pytest.fixture
async def backend(
    sqs_client: Any, urls: dict[str, QueueUrls], ledger: PostgresJobLedger
) -> AsyncIterator[Backend]:
    async with sqs_backend(
        sqs_client, urls=urls, ledger=ledger, queues=urls, wait_time_seconds=0
    ) as opened:
        yield opened


async def _run_until(backend: Backend, router: Router, done: OutcomeCounts) -> OutcomeCounts:
    """Run a real worker on the default queue until the outcomes read `done` (within 5 s)."""
    assert backend.outcomes is not None
    counts = OutcomeCounts(0, 0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(Worker(queue=backend.queue("default"), router=router).run)
        with anyio.fail_after(5):
            while counts != done:
                await anyio.sleep(0.1)
                counts = (await backend.outcomes.recent()).get("default", OutcomeCounts(0, 0))
        tg.cancel_scope.cancel()
    return counts


async def test_a_body_that_is_no_job_counts_as_failed_and_a_job_as_done(
    sqs_client: Any, urls: dict[str, QueueUrls], backend: Backend
) -> None:
    # A third party's message, sent as it would send it.
    url = urls["default"].queue_url
    await anyio.to_thread.run_sync(
        lambda: sqs_client.send_message(QueueUrl=url, MessageBody="{not a job")
    )
    await enqueue(backend.queue("default"), new_job("t"))
    ran: list[Job] = []

    async def record(job: Job) -> None:
        ran.append(job)

    router = Router()
    router.register("t", record)
    assert await _run_until(backend, router, OutcomeCounts(1, 1)) == OutcomeCounts(1, 1)
    assert [job.type for job in ran] == ["t"]
    assert await backend.dead_letters.count() == 1


_CODES = st.sampled_from([*sorted(STALE_RECEIPT_CODES), "InternalError", "ServiceUnavailable"])


@given(st.lists(st.one_of(st.none(), _CODES), max_size=10))
def test_only_the_entries_sqs_deleted_are_done_and_only_other_refusals_are_retried(
    codes: list[str | None],
) -> None:
    entries = [(str(n), f"receipt-{n}") for n in range(len(codes))]
    result: Any = {
        "Successful": [{"Id": str(n)} for n, code in enumerate(codes) if code is None],
        "Failed": [
            {"Id": str(n), "Code": code, "SenderFault": True, "Message": ""}
            for n, code in enumerate(codes)
            if code is not None
        ],
    }
    sorted_out = answered(entries, result)
    assert sorted_out.deleted == [f"receipt-{n}" for n, c in enumerate(codes) if c is None]
    stale = [f"receipt-{n}" for n, c in enumerate(codes) if c in STALE_RECEIPT_CODES]
    assert sorted(sorted_out.stale) == sorted(stale)
    others = {f"receipt-{n}" for n, c in enumerate(codes) if c is not None} - set(stale)
    assert set(sorted_out.refused) == others
