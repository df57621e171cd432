"""The ops page's levers: pause and resume a queue or a job type, open any job, run a waiting
one now or cancel it, each change a CSRF-checked POST by an operator; whatever a third party put
in a job is escaped; an unknown job is a 404."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import AsyncTestClient, TestClient

from skincare_core.jobs import enqueue
from skincare_core.jobs.job import Job
from skincare_core.jobs.ports import Retry
from skincare_core.testing.jobs import InMemoryQueues
from skincare_http.ops.steer_routes import parse_search
from tests.http.ops_support import OPS_TOKEN, ops_app, token

pytestmark = pytest.mark.anyio
OPERATOR = {"Authorization": f"Bearer {OPS_TOKEN}"}
HOSTILE = "<script>alert(1)</script>"


def _form(client: AsyncTestClient[Litestar], **fields: str) -> dict[str, str]:
    return {**fields, "_csrf_token": client.cookies["csrftoken"]}


async def test_an_operator_pauses_and_resumes_a_queue_with_the_csrf_token() -> None:
    queues = InMemoryQueues()
    async with AsyncTestClient(app=ops_app(queues)) as client:
        page = await client.get("/ops/", headers=OPERATOR)
        assert 'class="pause"' in page.text
        forged = await client.post("/ops/pause", data={"queue": "default"}, headers=OPERATOR)
        assert forged.status_code == 403
        user = {"Authorization": f"Bearer {token(None)}"}
        denied = await client.post("/ops/pause", data=_form(client, queue="default"), headers=user)
        assert denied.status_code == 403
        assert queues.pauses.now.queues == frozenset()
        done = await client.post(
            "/ops/pause", data=_form(client, queue="default"), headers=OPERATOR
        )
        assert done.status_code in (200, 302, 303)
        assert queues.pauses.now.queues == {"default"}
        page = await client.get("/ops/", headers=OPERATOR)
        assert '<td class="paused">paused' in page.text
        await client.post("/ops/resume", data=_form(client, queue="default"), headers=OPERATOR)
        assert queues.pauses.now.queues == frozenset()


async def test_a_paused_type_is_listed_escaped_and_resumed() -> None:
    queues = InMemoryQueues()
    async with AsyncTestClient(app=ops_app(queues)) as client:
        await client.get("/ops/", headers=OPERATOR)
        await client.post("/ops/pause", data=_form(client, type=HOSTILE), headers=OPERATOR)
        assert queues.pauses.now.types == {HOSTILE}
        page = (await client.get("/ops/", headers=OPERATOR)).text
        assert HOSTILE not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        both = _form(client, type="x", queue="default")
        assert (await client.post("/ops/pause", data=both, headers=OPERATOR)).status_code == 400
        await client.post("/ops/resume", data=_form(client, type=HOSTILE), headers=OPERATOR)
        assert queues.pauses.now.types == frozenset()


async def test_a_scheduled_job_is_previewed_then_run_now() -> None:
    queues = InMemoryQueues()
    job = Job(id="later/1", type="send_email", payload={"order_id": "123"})
    await enqueue(queues.queue("default"), job, delay=timedelta(hours=1))
    async with AsyncTestClient(app=ops_app(queues)) as client:
        found = await client.get("/ops/find?q=later/1", headers=OPERATOR, follow_redirects=True)
        assert '<td class="state">scheduled</td>' in found.text
        assert 'id="run-now"' in found.text
        url = f"/ops/act?action=run-now&job_id={quote(job.id, safe='')}"
        preview = await client.get(url, headers=OPERATOR)
        assert 'id="confirm"' in preview.text
        assert (await queues.stats()).scheduled == 1
        ran = await client.post("/ops/run-now", data=_form(client, job_id=job.id), headers=OPERATOR)
        assert ran.status_code in (200, 302, 303)
        assert ((await queues.stats()).scheduled, (await queues.stats()).ready) == (0, 1)


async def test_a_waiting_job_is_previewed_then_cancelled_and_a_running_one_is_not() -> None:
    queues = InMemoryQueues()
    waiting, running = Job(id="w1", type="send_email"), Job(id="r1", type="send_email")
    await enqueue(queues.queue("default"), running)
    await queues.queue("default").receive()
    await enqueue(queues.queue("default"), waiting)
    async with AsyncTestClient(app=ops_app(queues)) as client:
        held = await client.get("/ops/act?action=cancel&job_id=r1", headers=OPERATOR)
        assert 'id="impossible"' in held.text
        assert 'id="confirm"' not in held.text
        preview = await client.get("/ops/act?action=cancel&job_id=w1", headers=OPERATOR)
        assert 'id="confirm"' in preview.text
        form = _form(client, job_id="w1")
        assert (
            await client.post("/ops/cancel", data={"job_id": "w1"}, headers=OPERATOR)
        ).status_code == 403
        await client.post("/ops/cancel", data=form, headers=OPERATOR)
        assert [j.id for j in queues.queue("default").jobs()] == ["r1"]
        # The history keeps the cancelled job's record: its page says so.
        gone = await client.get("/ops/jobs/w1", headers=OPERATOR)
        assert '<td class="state">cancelled</td>' in gone.text
        assert 'id="cancel"' not in gone.text


async def test_what_a_third_party_put_in_a_job_is_escaped_on_every_page() -> None:
    queues = InMemoryQueues()
    job = Job(id=HOSTILE, type=HOSTILE, payload={HOSTILE: HOSTILE})
    await enqueue(queues.queue("default"), job, delay=timedelta(hours=1))
    async with AsyncTestClient(app=ops_app(queues)) as client:
        path = f"/ops/jobs/{quote(HOSTILE, safe='')}"
        act = f"/ops/act?action=run-now&job_id={quote(HOSTILE, safe='')}"
        for url in (path, act):
            page = await client.get(url, headers=OPERATOR)
            assert page.status_code == 200
            assert "<script>" not in page.text
            assert "&lt;script&gt;" in page.text or "\\u003cscript\\u003e" in page.text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=700))
def test_any_job_id_is_a_page_or_a_404_never_a_500(job_id: str) -> None:
    queues = InMemoryQueues()
    with TestClient(app=ops_app(queues)) as client:
        for url in (
            f"/ops/jobs/{quote(job_id, safe='')}",
            f"/ops/act?action=cancel&job_id={quote(job_id, safe='')}",
        ):
            assert client.get(url, headers=OPERATOR).status_code in (404, 400)


async def test_an_orders_job_is_found_by_its_argument_and_shows_each_attempts_error() -> None:
    queues = InMemoryQueues()
    queue = queues.queue("default")
    job = Job(id="mail-1", type="send_confirmation_email", payload={"order_id": "123"})
    await enqueue(queue, job)
    await enqueue(
        queue, Job(id="mail-2", type="send_confirmation_email", payload={"order_id": "9"})
    )
    first = next(m for m in await queue.receive(10) if m.job.id == "mail-1")
    await queue.retry_many([Retry(first, timedelta(0), error=f"SMTPError: {HOSTILE}")])
    (second,) = [m for m in await queue.receive(10) if m.job.id == "mail-1"]
    await queue.ack_many([second])
    async with AsyncTestClient(app=ops_app(queues)) as client:
        found = await client.get("/ops/find?q=order_id%3D123", headers=OPERATOR)
        assert found.status_code == 200
        assert 'data-job="mail-1"' in found.text
        assert 'data-job="mail-2"' not in found.text
        page = await client.get("/ops/jobs/mail-1", headers=OPERATOR)
        assert page.status_code == 200
        assert page.text.count('class="event attempt"') == 2
        assert "SMTPError: &lt;script&gt;" in page.text
        assert HOSTILE not in page.text
        assert '<td class="state">done</td>' in page.text
        bad = await client.get("/ops/find?q=state%3Dbogus", headers=OPERATOR)
        assert bad.status_code == 400
        assert "unknown job state" in bad.text


_WORD = st.text(
    st.characters(blacklist_categories=("Cs", "Zs", "Cc", "Zl", "Zp"), blacklist_characters="="),
    min_size=1,
    max_size=12,
).filter(lambda w: w not in ("id", "type", "state", "queue") and not any(c.isspace() for c in w))


@given(st.dictionaries(_WORD, _WORD, max_size=4), st.sampled_from([None, "send_email"]))
def test_a_search_is_its_arguments_and_fields(args: dict[str, str], job_type: str | None) -> None:
    words = [f"{k}={v}" for k, v in args.items()] + ([f"type={job_type}"] if job_type else [])
    query = parse_search(" ".join(words))
    assert (dict(query.args), query.job_type) == (args, job_type)
