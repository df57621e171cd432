"""The queue backend registry: the installed backends by name, and one line for a name it lacks."""

from __future__ import annotations

import pytest

from skincare_services.backends import POSTGRES, SQS
from skincare_services.queue_backends import UnknownBackend, queue_backend, registered_names


def test_the_project_registers_postgres_and_sqs() -> None:
    assert {"postgres", "sqs"} <= set(registered_names())
    assert queue_backend("postgres") is POSTGRES
    assert queue_backend("sqs") is SQS


def test_an_unknown_name_lists_the_registered_ones_on_one_line() -> None:
    with pytest.raises(UnknownBackend) as caught:
        queue_backend("redis")
    names = ", ".join(registered_names())
    assert str(caught.value) == f"expected one of {names}, got 'redis'"


def test_only_sqs_requires_a_setting_of_its_own() -> None:
    assert POSTGRES.required_settings == ()
    assert SQS.required_settings == ("sqs_queue_prefix",)


def test_only_the_postgres_queues_order_jobs_by_priority() -> None:
    # The composition roots pass this to the unit of work, whose outbox refuses a priority on SQS.
    assert queue_backend("postgres").ordered is True
    assert queue_backend("sqs").ordered is False
