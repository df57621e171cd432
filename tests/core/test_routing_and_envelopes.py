"""Named-queue routes, envelopes and schedules: the values the scheduling features rest on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.backend import Backend
from skincare_core.jobs.envelope import Envelope, due_at
from skincare_core.jobs.job import new_job
from skincare_core.jobs.routing import DEFAULT_QUEUE, QueueRoutes, check_queue_name
from skincare_core.shop.job_types import SHOP_ROUTES
from skincare_core.testing.jobs import InMemoryQueues

NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)


def test_a_type_no_route_names_goes_to_the_default_queue() -> None:
    routes = QueueRoutes({"pay": "critical"})
    assert (routes.queue_of("pay"), routes.queue_of("other")) == ("critical", DEFAULT_QUEUE)
    assert QueueRoutes(default="misc").queue_of("other") == "misc"
    assert routes.names == (DEFAULT_QUEUE, "critical")


def test_the_shop_routes_payments_critical_and_pdfs_bulk() -> None:
    assert SHOP_ROUTES.queue_of("process_payment") == "critical"
    assert SHOP_ROUTES.queue_of("generate_invoice_pdf") == "bulk"
    assert SHOP_ROUTES.queue_of("send_confirmation_email") == "default"
    assert SHOP_ROUTES.queue_of("expire_unpaid_order") == "default"
    assert SHOP_ROUTES.names == ("default", "critical", "bulk")


def test_another_teams_types_merge_unless_a_type_would_change_queue() -> None:
    merged = SHOP_ROUTES.with_types({"warehouse.pick": "warehouse", "process_payment": "critical"})
    assert merged.queue_of("warehouse.pick") == "warehouse"
    assert merged.queue_of("process_payment") == "critical"
    with pytest.raises(ValueError, match="process_payment"):
        SHOP_ROUTES.with_types({"process_payment": "bulk"})


@pytest.mark.parametrize("name", ["", "Critical", "1st", "has space", "a" * 41, "x.y"])
def test_a_bad_queue_name_is_refused_wherever_it_appears(name: str) -> None:
    with pytest.raises(ValueError, match="invalid queue name"):
        check_queue_name(name)
    with pytest.raises(ValueError, match="invalid queue name"):
        QueueRoutes({"t": name})
    with pytest.raises(ValueError, match="invalid queue name"):
        Envelope(new_job("t"), name)


@given(st.from_regex(r"[a-z][a-z0-9_-]{0,39}", fullmatch=True))
def test_every_plain_name_up_to_40_characters_is_a_queue_name(name: str) -> None:
    assert check_queue_name(name) == name


def test_an_envelope_wants_an_aware_time_and_a_non_empty_key() -> None:
    job = new_job("t")
    assert Envelope(job) == Envelope(job, DEFAULT_QUEUE, None, None, {})
    with pytest.raises(ValueError, match="timezone-aware"):
        Envelope(job, not_before=datetime(2026, 12, 1))
    with pytest.raises(ValueError, match="non-empty"):
        Envelope(job, unique_key="")


@given(st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=400)))
def test_a_delay_is_due_that_long_after_now(delay: timedelta) -> None:
    assert due_at(Envelope(new_job("t"), delay=delay), NOW) == NOW + delay


def test_a_schedule_is_now_a_delay_or_a_time_never_both() -> None:
    later = NOW + timedelta(minutes=5)
    assert due_at(Envelope(new_job("t")), NOW) is None
    assert due_at(Envelope(new_job("t"), not_before=later), NOW) == later
    with pytest.raises(ValueError, match="not both"):
        Envelope(new_job("t"), not_before=later, delay=timedelta(1))
    with pytest.raises(ValueError, match="negative"):
        Envelope(new_job("t"), delay=timedelta(seconds=-1))


def test_a_backend_names_the_queues_it_serves_when_asked_for_another() -> None:
    queues = InMemoryQueues()
    backend = Backend(
        queues={"critical": queues.queue("critical")},
        dead_letters=queues,
        sink=queues,
        outbox=None,
        stats=queues,
    )
    assert backend.queue("critical").name == "critical"
    with pytest.raises(KeyError, match="'bulk' is not served here \\(served: critical\\)"):
        backend.queue("bulk")
