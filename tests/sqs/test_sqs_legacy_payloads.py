"""Jobs the release before typed definitions sent to SQS (integers as strings) still run on the
shop's definitions after an upgrade; a payload that is not even the old form is dead at once."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import pytest

from skincare_core.jobs.definitions import Definitions
from skincare_core.jobs.worker import Worker
from skincare_core.shop.job_types import (
    CONFIRMATION_EMAIL,
    INVOICE_PDF,
    PAYMENT_JOB,
    OrderJob,
    PaymentJob,
)
from skincare_sqs import SqsQueue
from tests.core.worker_kit import eventually

pytestmark = pytest.mark.anyio


async def test_old_form_messages_run_on_the_shops_definitions(
    sqs_client: Any, fresh_queues: Callable[..., Any]
) -> None:
    urls = fresh_queues()
    queue = SqsQueue(
        sqs_client, queue_url=urls.queue_url, dlq_url=urls.dlq_url, wait_time_seconds=1
    )
    seen: list[object] = []

    async def record(args: OrderJob | PaymentJob) -> None:
        seen.append(args)

    # The bodies exactly as the previous release sent them.
    old = [
        {"id": "a", "type": "send_confirmation_email", "payload": {"order_id": "41"}},
        {"id": "b", "type": "generate_invoice_pdf", "payload": {"order_id": "42"}},
        {"id": "c", "type": "process_payment", "payload": {"event_id": "evt-7"}},
        {"id": "d", "type": "send_confirmation_email", "payload": {"order_id": "4x"}},
    ]
    for body in old:
        send = partial(
            sqs_client.send_message, QueueUrl=urls.queue_url, MessageBody=json.dumps(body)
        )
        await anyio.to_thread.run_sync(send)
    definitions = Definitions(
        CONFIRMATION_EMAIL.with_handler(record),
        INVOICE_PDF.with_handler(record),
        PAYMENT_JOB.with_handler(record),
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(Worker(queue=queue, definitions=definitions).run)
        await eventually(lambda: len(seen) == 3, within=20)
        await eventually(lambda: _dead_count(sqs_client, urls.dlq_url) == 1, within=20)
        tg.cancel_scope.cancel()
    assert sorted(map(repr, seen)) == sorted(
        map(repr, [OrderJob(41), OrderJob(42), PaymentJob("evt-7")])
    )
    received = sqs_client.receive_message(QueueUrl=urls.dlq_url, MessageAttributeNames=["All"])
    [dead] = received["Messages"]
    assert json.loads(dead["Body"])["id"] == "d"
    assert "order_id: expected an integer, got str" in json.dumps(dead["MessageAttributes"])


def _dead_count(client: Any, url: str) -> int:
    attributes = client.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
    )
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])
