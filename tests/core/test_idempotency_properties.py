"""Property: duplicate deliveries, e-mail failures and crashes never lose or multiply e-mails.

Every existing order gets at least one confirmation and at most 1 + (crashes between send and
record) of them; a job for an order that does not exist sends nothing.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skincare_core.jobs.errors import RetryLater
from skincare_core.jobs.job import Job, new_job
from skincare_core.shop.job_types import SEND_CONFIRMATION_EMAIL
from tests.core.core_kit import make_shop

pytestmark = pytest.mark.anyio
ORDERS = 3
PHANTOM = 999


class Crash(Exception):
    """The process dying between the send and the record."""


events = st.lists(
    st.tuples(
        st.sampled_from(["deliver", "email_fails", "crash"]),
        st.integers(min_value=0, max_value=ORDERS),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(events)
async def test_every_order_gets_at_least_one_and_at_most_one_plus_crashes(
    steps: list[tuple[str, int]],
) -> None:
    shop = make_shop()
    orders = [await shop.place_order() for _ in range(ORDERS)]
    jobs = [new_job(SEND_CONFIRMATION_EMAIL, order_id=str(o.id)) for o in orders]
    jobs.append(new_job(SEND_CONFIRMATION_EMAIL, order_id=str(PHANTOM)))
    crashes: Counter[str] = Counter()

    async def deliver(job: Job) -> bool:
        # An injected fault fires on the next send or record, whichever delivery that is.
        try:
            await shop.router.dispatch(job)
        except ConnectionError:
            return False
        except Crash:
            crashes[str(job.payload["order_id"])] += 1
            return False
        except RetryLater as held:
            # A crashed run's send claim is live: the queue hands the job back when it ends.
            shop.clock.advance(held.delay)
            return False
        return True

    for kind, index in steps:
        job = jobs[index]
        if kind == "email_fails":
            shop.email.fail_next()
        elif kind == "crash":
            shop.db.fail_next("mark_notified", Crash())
        await deliver(job)
    for job in jobs:  # the queue redelivers every job until one delivery succeeds
        while not await deliver(job):
            pass
    sent = Counter(mail.data.order_number for mail in shop.email.of_kind("order_confirmation"))
    for order in orders:
        assert 1 <= sent[order.order_number] <= 1 + crashes[str(order.id)]
    assert sum(sent.values()) == sum(sent[o.order_number] for o in orders)
