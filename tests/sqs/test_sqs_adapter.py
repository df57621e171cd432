"""SqsQueue beyond the contract: redrive policy, bad bodies, provisioning, request cost, outages."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import boto3
import pytest
from attrs import evolve
from botocore.config import Config
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.envelope import Envelope, enqueue
from skincare_core.jobs.errors import JobTooLarge, Unavailable
from skincare_core.jobs.job import Message, new_job
from skincare_core.jobs.ports import Burial, Retry
from skincare_sqs import SqsQueue, SqsUnavailable, ensure_queue
from skincare_sqs.wire import INVALID_BODY_TYPE, MAX_VISIBILITY_SECONDS, visibility_seconds

pytestmark = pytest.mark.anyio
Provision = Callable[..., Any]


def _queue(client: Any, urls: Any, wait: int = 1) -> SqsQueue:
    return SqsQueue(client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, wait_time_seconds=wait)


@contextmanager
def counting(client: Any) -> Iterator[list[str]]:
    """The names of the SQS requests the client sends inside the block."""
    sent: list[str] = []

    def count(event_name: str, **_: Any) -> None:
        sent.append(event_name.rsplit(".", 1)[-1])

    client.meta.events.register("before-send.sqs", count)
    try:
        yield sent
    finally:
        client.meta.events.unregister("before-send.sqs", count)


async def test_redrive_policy_moves_a_job_received_max_receive_count_times(
    sqs_client: Any, fresh_queues: Provision
) -> None:
    queue = _queue(sqs_client, fresh_queues(max_receive_count=2, visibility_timeout=1))
    job = new_job("policy")
    await enqueue(queue, job)
    for attempt in (1, 2):
        with anyio.fail_after(5):
            while not (got := await queue.receive(1)):
                pass
        assert (got[0].job, got[0].attempts) == (job, attempt)
        await anyio.sleep(1.2)
    assert await queue.receive(10) == []
    [dead] = await queue.dead_letters.list()
    assert dead.job == job
    assert "maxReceiveCount" in dead.error
    assert dead.attempts == 2
    assert await queue.dead_letters.redrive(job.id) is True
    assert (await queue.receive(1))[0].attempts == 1


async def test_a_body_that_is_not_a_job_goes_to_the_dlq_with_the_reason(
    sqs_client: Any, fresh_queues: Provision
) -> None:
    urls = fresh_queues()
    queue = _queue(sqs_client, urls)
    await anyio.to_thread.run_sync(
        lambda: sqs_client.send_message(QueueUrl=urls.queue_url, MessageBody="{not json")
    )
    assert await queue.receive(10) == []
    assert await queue.dead_letters.count() == 1
    [dead] = await queue.dead_letters.list()
    assert dead.job.type == INVALID_BODY_TYPE
    assert dead.job.payload == {"body": "{not json"}
    assert "not a valid job" in dead.error
    assert dead.attempts == 1
    assert await queue.receive(10) == []


def test_ensure_queues_is_idempotent_and_converges(sqs_client: Any) -> None:
    first = ensure_queue(sqs_client, "provisioned", max_receive_count=3, visibility_timeout=7)
    again = ensure_queue(sqs_client, "provisioned", max_receive_count=4, visibility_timeout=9)
    assert again == first
    assert first.dlq_url.endswith("provisioned-dlq")
    attrs = sqs_client.get_queue_attributes(QueueUrl=first.queue_url, AttributeNames=["All"])
    policy = json.loads(attrs["Attributes"]["RedrivePolicy"])
    assert int(policy["maxReceiveCount"]) == 4
    assert policy["deadLetterTargetArn"].endswith(":provisioned-dlq")
    assert attrs["Attributes"]["VisibilityTimeout"] == "9"


@pytest.mark.slow
async def test_draining_at_batch_10_costs_at_most_a_quarter_request_per_job(
    moto_endpoint: str, fresh_queues: Provision
) -> None:
    client = boto3.client("sqs", endpoint_url=moto_endpoint, region_name="us-east-1")
    queue = _queue(client, fresh_queues(visibility_timeout=30), wait=0)
    # 200, not 1,000: moto's receive costs time linear in the queue's length (the per-job
    # request count does not depend on it).
    jobs = [new_job("cost", n=str(n)) for n in range(200)]
    with counting(client) as enqueued:
        assert await queue.enqueue_many([Envelope(job) for job in jobs]) == len(jobs)
    with counting(client) as drained:
        seen: set[str] = set()
        while batch := await queue.receive(10):
            await queue.ack_many(batch)
            seen |= {m.job.id for m in batch}
        drain_requests = len(drained) - 1  # the final empty receive is not part of the drain
    per_job = drain_requests / len(jobs)
    print(f"\nSQS requests per job: enqueue {len(enqueued) / len(jobs):.2f}, drain {per_job:.2f}")
    assert seen == {job.id for job in jobs}
    assert len(enqueued) == len(jobs) // 10
    assert set(drained) == {"ReceiveMessage", "DeleteMessageBatch"}
    assert per_job <= 0.25


async def test_a_too_large_job_in_a_batch_is_refused_before_any_request(
    sqs_client: Any, fresh_queues: Provision
) -> None:
    queue = _queue(sqs_client, fresh_queues())
    big = new_job("big", blob="x" * (256 * 1024))
    with counting(sqs_client) as sent, pytest.raises(JobTooLarge):
        await queue.enqueue_many([Envelope(new_job("ok")), Envelope(big)])
    assert sent == []


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_unreachable_endpoint_raises_sqs_unavailable(closed_port: int) -> None:
    client = boto3.client(
        "sqs",
        endpoint_url=f"http://127.0.0.1:{closed_port}",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(connect_timeout=1, retries={"max_attempts": 1}),
    )
    url = f"http://127.0.0.1:{closed_port}/000000000000/gone"
    queue = SqsQueue(client, queue_url=url, dlq_url=url + "-dlq", wait_time_seconds=0)
    with pytest.raises(SqsUnavailable, match="send_message"):
        await enqueue(queue, new_job("down"))
    with pytest.raises(SqsUnavailable):
        await queue.receive(1)
    with pytest.raises(SqsUnavailable):
        await queue.ack_many([Message(receipt="r", job=new_job("down"), attempts=1)])
    with pytest.raises(SqsUnavailable):
        await queue.dead_letters.count()
    with pytest.raises(SqsUnavailable):
        ensure_queue(client, "gone")
    # The HTTP edge answers 503 for core's Unavailable without knowing this adapter.
    with pytest.raises(Unavailable):
        await queue.dead_letters.count()


async def test_a_missing_queue_raises_sqs_unavailable(sqs_client: Any) -> None:
    url = sqs_client.meta.endpoint_url + "/123456789012/no-such-queue"
    queue = SqsQueue(sqs_client, queue_url=url, dlq_url=url, wait_time_seconds=0)
    with pytest.raises(SqsUnavailable, match=r"NonExistentQueue|QueueDoesNotExist"):
        await enqueue(queue, new_job("nowhere"))


@given(st.timedeltas(min_value=timedelta(days=-2), max_value=timedelta(days=2)))
def test_visibility_seconds_are_whole_rounded_up_and_within_sqs_range(delay: timedelta) -> None:
    seconds = visibility_seconds(delay)
    assert 0 <= seconds <= MAX_VISIBILITY_SECONDS
    if timedelta(0) <= delay <= timedelta(seconds=MAX_VISIBILITY_SECONDS):
        assert seconds - 1 < delay.total_seconds() <= seconds


async def test_receipts_sqs_rejects_are_ignored_and_move_nothing(
    sqs_client: Any, fresh_queues: Provision
) -> None:
    queue = _queue(sqs_client, fresh_queues(visibility_timeout=30))
    job = new_job("kept")
    await enqueue(queue, job)
    [live] = await queue.receive(1)
    unknown = Message(receipt="not-a-receipt-sqs-ever-gave", job=job, attempts=1)
    await queue.ack_many([unknown])
    await queue.retry_many([Retry(unknown, timedelta(0))])
    await queue.extend_many([unknown], timedelta(seconds=5))
    await queue.dead_letter_many([Burial(unknown, "unknown receipt")])
    assert await queue.dead_letters.count() == 0
    assert await queue.receive(10) == []
    await queue.retry_many([Retry(live, timedelta(0))])
    assert (await queue.receive(1))[0].job == job


def test_a_long_poll_as_long_as_the_read_timeout_is_refused(moto_endpoint: str) -> None:
    # Every empty poll would end in a read timeout, retried and logged as a failure.
    client = boto3.client("sqs", endpoint_url=moto_endpoint, config=Config(read_timeout=5))
    with pytest.raises(ValueError, match=r"wait_time_seconds \(5\) must be below .* \(5 s\)"):
        SqsQueue(client, queue_url="q", dlq_url="d", wait_time_seconds=5)
    assert SqsQueue(client, queue_url="q", dlq_url="d", wait_time_seconds=4)


async def test_a_received_job_carries_when_sqs_took_it(
    sqs_client: Any, fresh_queues: Provision
) -> None:
    queue = _queue(sqs_client, fresh_queues())
    before = datetime.now(UTC) - timedelta(seconds=1)
    await enqueue(queue, new_job("stamped"))
    with anyio.fail_after(5):
        while not (got := await queue.receive(1)):
            pass
    sent = got[0].enqueued_at
    assert sent is not None
    assert before <= sent <= datetime.now(UTC)


async def test_a_traced_job_names_its_trace_in_a_message_attribute(
    sqs_client: Any, fresh_queues: Provision
) -> None:
    urls = fresh_queues()
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    job = evolve(new_job("traced"), headers={"traceparent": parent})
    await _queue(sqs_client, urls).enqueue_many([Envelope(job)])
    raw = sqs_client.receive_message(
        QueueUrl=urls.queue_url, MessageAttributeNames=["All"], WaitTimeSeconds=1
    )["Messages"][0]
    assert raw["MessageAttributes"]["traceparent"]["StringValue"] == parent


async def _receive(queue: SqsQueue, count: int) -> list[Message]:
    got: list[Message] = []
    with anyio.fail_after(10):
        while len(got) < count:
            got += await queue.receive(10)
    return got


async def test_batches_larger_than_ten_entries_settle_every_message(
    sqs_client: Any, fresh_queues: Provision
) -> None:
    # SQS takes at most ten entries a batch request: a larger batch goes in several.
    queue = _queue(sqs_client, fresh_queues(visibility_timeout=30), wait=0)
    jobs = [new_job("many", n=str(n)) for n in range(24)]
    await queue.enqueue_many([Envelope(job) for job in jobs])
    leased = await _receive(queue, 24)
    await queue.extend_many(leased, timedelta(seconds=60))
    await queue.retry_many([Retry(message, timedelta(0)) for message in leased])
    leased = await _receive(queue, 24)
    await queue.dead_letter_many([Burial(message, "buried") for message in leased[:12]])
    await queue.ack_many(leased[12:])
    assert await queue.receive(10) == []
    dead = await queue.dead_letters.list()
    assert sorted(d.job.id for d in dead) == sorted(m.job.id for m in leased[:12])
    assert {d.error for d in dead} == {"buried"}
