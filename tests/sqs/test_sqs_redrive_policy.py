"""SQS's redrive policy must not end a job before its retry policy does: the queues the services
create receive a message one time more than the most attempts of any job type, and a worker
started on a queue whose maxReceiveCount is lower says so. moto's HTTP server."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from skincare_core.shop.job_types import SHOP_JOBS
from skincare_services.backends import redrive_receive_count, warn_short_redrive
from skincare_sqs.provisioning import max_receive_count
from tests.sqs.conftest import Provision

MOST_SHOP_ATTEMPTS = max(policy.attempts for policy in SHOP_JOBS.retry_policies.values())


@pytest.mark.parametrize("max_attempts", [1, 5, MOST_SHOP_ATTEMPTS, MOST_SHOP_ATTEMPTS + 7])
def test_the_receive_count_outlasts_every_retry_policy(max_attempts: int) -> None:
    count = redrive_receive_count(max_attempts)
    assert count == max(max_attempts, MOST_SHOP_ATTEMPTS) + 1


def test_a_queue_that_redrives_too_soon_is_named_at_start_and_one_that_waits_is_not(
    sqs_client: Any, fresh_queues: Provision, caplog: pytest.LogCaptureFixture
) -> None:
    needed = redrive_receive_count(5)
    short, enough = fresh_queues(max_receive_count=5), fresh_queues(max_receive_count=needed)
    assert (
        max_receive_count(sqs_client, short.queue_url),
        max_receive_count(sqs_client, enough.queue_url),
    ) == (5, needed)
    urls = {"short": short, "enough": enough}
    with caplog.at_level(logging.WARNING, logger="skincare_services.backends"):
        warn_short_redrive(sqs_client, urls, ["short", "enough"], needed)
    [record] = [r for r in caplog.records if r.name == "skincare_services.backends"]
    assert record.getMessage() == "sqs.redrive_before_retries_end"
    assert (record.queue, record.max_receive_count, record.needed) == ("short", 5, needed)  # type: ignore[attr-defined]
