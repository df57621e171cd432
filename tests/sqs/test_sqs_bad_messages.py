"""Bad third-party messages and odd jobs reach the DLQ after one delivery, body untouched.

The worker runs for real on moto's server; the message is sent with a plain boto3 call, as a
third party would. Each case checks the DLQ's raw message: the very body that was sent, one
delivery, and a reason an operator can read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from skincare_core.jobs.codec import MAX_JOB_BYTES
from skincare_core.jobs.errors import PermanentJobError
from skincare_core.jobs.job import Job
from skincare_core.jobs.router import Router
from skincare_core.jobs.worker import Worker
from skincare_sqs import SqsQueue

pytestmark = pytest.mark.anyio
Provision = Callable[..., Any]

_OVERSIZED = json.dumps({"id": "big", "type": "t", "payload": {"x": "a" * MAX_JOB_BYTES}})

BAD_BODIES = {
    "not-json": ("{not json", "not a valid job"),
    "json-list": ('["id", "t"]', "expected a JSON object"),
    "missing-type": ('{"id": "1", "payload": {}}', "type"),
    "float-in-payload": ('{"id": "1", "type": "t", "payload": {"n": 1.5}}', "a fraction"),
    "extra-field": ('{"id": "1", "type": "t", "extra": true}', "extra"),
    "empty-id": ('{"id": "", "type": "t"}', "non-empty"),
    "oversized": (_OVERSIZED, "262144"),
    "lone-surrogate-id": ('{"id": "\\ud800", "type": "t"}', "lone surrogate"),
    "lone-surrogate-payload": ('{"id": "1", "type": "t", "payload": {"a": "\\udfff"}}', "lone"),
}


def _queue(client: Any, urls: Any) -> SqsQueue:
    return SqsQueue(client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, wait_time_seconds=1)


async def _send_raw(client: Any, url: str, body: str) -> None:
    await anyio.to_thread.run_sync(lambda: client.send_message(QueueUrl=url, MessageBody=body))


async def _raw_dead(client: Any, dlq_url: str) -> list[dict[str, Any]]:
    response = await anyio.to_thread.run_sync(
        lambda: client.receive_message(
            QueueUrl=dlq_url,
            MaxNumberOfMessages=10,
            VisibilityTimeout=0,
            MessageAttributeNames=["All"],
        )
    )
    return list(response.get("Messages", []))


async def _work_until_dead(queue: SqsQueue, router: Router, within: float) -> None:
    """Run the real worker until the DLQ holds a message (fails after `within` seconds)."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(Worker(queue=queue, router=router, max_attempts=5).run)
        with anyio.fail_after(within):
            while await queue.dead_letters.count() == 0:  # noqa: ASYNC110 - polling SQS, nothing to wait on
                await anyio.sleep(0.1)
        tg.cancel_scope.cancel()


def _never_run() -> tuple[Router, list[Job]]:
    ran: list[Job] = []

    async def record(job: Job) -> None:
        ran.append(job)

    router = Router()
    router.register("t", record)
    return router, ran


@pytest.mark.parametrize(("body", "reason"), BAD_BODIES.values(), ids=BAD_BODIES.keys())
async def test_a_bad_message_is_dead_lettered_after_one_delivery_with_its_reason(
    sqs_client: Any, fresh_queues: Provision, body: str, reason: str
) -> None:
    # Visibility 1 s and maxReceiveCount 5: the redrive policy would need about 5 s.
    urls = fresh_queues(max_receive_count=5, visibility_timeout=1)
    queue = _queue(sqs_client, urls)
    router, ran = _never_run()
    await _send_raw(sqs_client, urls.queue_url, body)
    await _work_until_dead(queue, router, within=3)
    assert ran == []
    [raw] = await _raw_dead(sqs_client, urls.dlq_url)
    assert raw["Body"] == body
    attributes = {name: value["StringValue"] for name, value in raw["MessageAttributes"].items()}
    assert attributes["attempts"] == "1"
    assert reason in attributes["reason"]
    assert attributes["reason"].isprintable()
    [dead] = await queue.dead_letters.list()
    assert (dead.attempts, dead.error) == (1, attributes["reason"])
    assert await queue.receive(10) == []


async def test_dead_lettering_forwards_the_body_as_it_was_sent(
    sqs_client: Any, fresh_queues: Provision
) -> None:
    urls = fresh_queues(visibility_timeout=5)
    queue = _queue(sqs_client, urls)
    # Valid, but not as the codec would write it: spaces, key order, an escaped character.
    body = '{ "type": "refused", "payload": {"name": "caf\\u00e9"}, "id": "job-1" }'

    async def refuse(job: Job) -> None:
        raise PermanentJobError("refused for good")

    router = Router()
    router.register("refused", refuse)
    await _send_raw(sqs_client, urls.queue_url, body)
    await _work_until_dead(queue, router, within=5)
    [raw] = await _raw_dead(sqs_client, urls.dlq_url)
    assert raw["Body"] == body
    [dead] = await queue.dead_letters.list()
    assert dead.job == Job("job-1", "refused", {"name": "café"})
    assert (dead.attempts, dead.error) == (1, "PermanentJobError: refused for good")
