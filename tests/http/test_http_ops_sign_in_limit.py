"""Guessing the operator token is slow: after `FAILURE_LIMIT` wrong credentials from one client
address within `LOCKOUT`, that address gets 429 for every credential, the right one included,
until the window has passed."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar.exceptions import TooManyRequestsException
from litestar.testing import AsyncTestClient

from skincare_core.testing.jobs import InMemoryQueues
from skincare_core.testing.shop import ManualClock
from skincare_http.ops.sign_in_limit import FAILURE_LIMIT, LOCKOUT, SignInLimit
from tests.http.ops_support import OPS_TOKEN, ops_app, token


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


@pytest.mark.anyio
async def test_guessing_with_a_bearer_token_is_locked_out() -> None:
    clock = ManualClock()
    async with AsyncTestClient(app=ops_app(InMemoryQueues(), clock=clock)) as client:
        answers = [(await client.get("/ops/", headers=bearer(f"guess-{n}"))) for n in range(200)]
        codes = [answer.status_code for answer in answers]
        assert set(codes[:FAILURE_LIMIT]) == {401}
        assert set(codes[FAILURE_LIMIT:]) == {429}
        assert int(answers[-1].headers["retry-after"]) <= LOCKOUT.total_seconds()
        assert (await client.get("/ops/", headers=bearer(OPS_TOKEN))).status_code == 429
        clock.advance(LOCKOUT)
        assert (await client.get("/ops/", headers=bearer(OPS_TOKEN))).status_code == 200


@pytest.mark.anyio
async def test_guessing_in_the_sign_in_form_is_locked_out() -> None:
    clock = ManualClock()
    async with AsyncTestClient(app=ops_app(InMemoryQueues(), clock=clock)) as client:
        await client.get("/ops/sign-in")
        csrf = client.cookies["csrftoken"]
        for n in range(FAILURE_LIMIT):
            form = {"token": f"guess-{n}", "_csrf_token": csrf}
            assert (await client.post("/ops/sign-in", data=form)).status_code == 401
        form = {"token": OPS_TOKEN, "_csrf_token": csrf}
        assert (await client.post("/ops/sign-in", data=form)).status_code == 429
        clock.advance(LOCKOUT)
        signed_in = await client.post("/ops/sign-in", data=form, follow_redirects=False)
        assert signed_in.status_code in (302, 303)


@pytest.mark.anyio
async def test_valid_credentials_and_plain_visits_are_not_failures() -> None:
    async with AsyncTestClient(app=ops_app(InMemoryQueues(), clock=ManualClock())) as client:
        for _ in range(FAILURE_LIMIT + 1):
            assert (await client.get("/ops/")).status_code == 401
            assert (await client.get("/ops/", headers=bearer(token(None)))).status_code == 403
        assert (await client.get("/ops/", headers=bearer(OPS_TOKEN))).status_code == 200


@given(gaps=st.lists(st.integers(min_value=0, max_value=600), max_size=40))
def test_an_address_is_locked_out_while_enough_failures_are_recent(gaps: list[int]) -> None:
    clock = ManualClock()
    limit = SignInLimit(clock)
    times = []
    for gap in gaps:
        clock.advance(timedelta(seconds=gap))
        limit.failed("10.0.0.1")
        times.append(clock.now())
    recent = [t for t in times if t > clock.now() - LOCKOUT]
    locked = len(recent) >= FAILURE_LIMIT
    refused: AbstractContextManager[object] = (
        pytest.raises(TooManyRequestsException) if locked else nullcontext()
    )
    with refused:
        limit.check("10.0.0.1")
    limit.check("10.0.0.2")
