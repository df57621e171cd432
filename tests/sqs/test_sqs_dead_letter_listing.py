"""Reading the SQS DLQ: what a dead letter shows is fixed when it died, however often it is read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from skincare_core.jobs.envelope import enqueue
from skincare_core.jobs.job import new_job
from skincare_sqs import SqsQueue
from skincare_sqs.wire import INVALID_BODY_TYPE

pytestmark = pytest.mark.anyio
Provision = Callable[..., Any]


def _queue(client: Any, urls: Any) -> SqsQueue:
    return SqsQueue(client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, wait_time_seconds=1)


async def _deliver_until_the_policy_moves_it(queue: SqsQueue, deliveries: int) -> None:
    for _ in range(deliveries):
        with anyio.fail_after(5):
            while not await queue.receive(1):
                pass
        await anyio.sleep(1.2)  # the lease of 1 s runs out: a crash, as SQS sees it
    assert await queue.receive(10) == []


async def test_attempts_of_a_job_the_redrive_policy_moved_stay_as_they_were(
    sqs_client: Any, fresh_queues: Provision
) -> None:
    queue = _queue(sqs_client, fresh_queues(max_receive_count=2, visibility_timeout=1))
    job = new_job("crashes")
    await enqueue(queue, job)
    await _deliver_until_the_policy_moves_it(queue, deliveries=2)
    seen = [await queue.dead_letters.list() for _ in range(3)]
    assert [[(d.job, d.attempts) for d in dead] for dead in seen] == [[(job, 2)]] * 3
    assert seen[0] == seen[1] == seen[2]
    got = await queue.dead_letters.get(job.id)
    assert got == seen[0][0]
    assert "maxReceiveCount" in got.error
    assert await queue.dead_letters.count() == 1
    assert (await queue.dead_letters.list())[0].attempts == 2


async def test_a_message_the_policy_moved_with_a_body_that_is_no_job_is_listed(
    sqs_client: Any, fresh_queues: Provision
) -> None:
    urls = fresh_queues(max_receive_count=1, visibility_timeout=1)
    queue = _queue(sqs_client, urls)
    body = '{"id": "\\ud800", "type": "t"}'
    await anyio.to_thread.run_sync(
        lambda: sqs_client.send_message(QueueUrl=urls.queue_url, MessageBody=body)
    )
    # A plain consumer, not the adapter: the body stays in the source queue until the policy.
    await anyio.to_thread.run_sync(
        lambda: sqs_client.receive_message(QueueUrl=urls.queue_url, VisibilityTimeout=0)
    )
    assert await queue.receive(10) == []
    first, second = await queue.dead_letters.list(), await queue.dead_letters.list()
    assert first == second
    [dead] = first
    assert (dead.job.type, dead.job.payload, dead.attempts) == (
        INVALID_BODY_TYPE,
        {"body": body},
        1,
    )


async def test_odd_attributes_on_a_dead_message_do_not_break_the_listing(
    sqs_client: Any, fresh_queues: Provision
) -> None:
    urls = fresh_queues()
    queue = _queue(sqs_client, urls)
    job = new_job("odd")
    odd = {
        "attempts": {"DataType": "Number", "StringValue": "1e400"},
        "dead_at": {"DataType": "String", "StringValue": "yesterday"},
        "job_id": {"DataType": "Binary", "BinaryValue": b"\x00\xff"},
        "reason": {"DataType": "String", "StringValue": "given by a third party"},
    }
    await anyio.to_thread.run_sync(
        lambda: sqs_client.send_message(
            QueueUrl=urls.dlq_url,
            MessageBody=f'{{"id": "{job.id}", "type": "odd"}}',
            MessageAttributes=odd,
        )
    )
    [dead] = await queue.dead_letters.list()
    assert dead.job == job
    assert (await queue.dead_letters.get(job.id)) == dead
    assert await queue.dead_letters.list() == [dead]
