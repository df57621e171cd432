"""The ops page's hour: per queue and per job type, done, retried and failed per minute as an
inline SVG chart, p50/p95 run time and pickup latency per type, a live fragment the page's own
script swaps in, and the page working without it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar.testing import AsyncTestClient

from skincare_core.jobs.minutes import MinuteRecorder, Trend
from skincare_core.testing.jobs import InMemoryQueues
from skincare_http.ops.charts import chart_paths
from tests.http.ops_support import OPS_TOKEN, ops_app

pytestmark = pytest.mark.anyio
OPERATOR = {"Authorization": f"Bearer {OPS_TOKEN}"}
HOSTILE = "<script>alert(1)</script>"


async def _recorded(queues: InMemoryQueues) -> None:
    now = datetime.now(UTC)
    recorder = MinuteRecorder(clock=lambda: now - timedelta(minutes=3))
    for n in range(20):
        recorder.started("default", "send_email", 0.004)
        recorder.finished("default", "send_email", "done", 0.015 if n < 19 else 1.5)
    recorder.finished("default", "send_email", "retried", 0.3)
    recorder.finished("bulk", HOSTILE, "dead_lettered", 0.1)
    await queues.minutes.add(recorder.take())


async def test_each_queue_and_type_has_an_hour_chart_and_percentiles() -> None:
    queues = InMemoryQueues()
    await _recorded(queues)
    async with AsyncTestClient(app=ops_app(queues)) as client:
        page = (await client.get("/ops/", headers=OPERATOR)).text
    assert '<tr class="trend" data-queue="default">' in page
    assert page.count('<svg class="chart"') == 4  # two queues, two types
    # One bar of done jobs (their minute), for the queue and for the type.
    assert page.count('<path class="done" fill="#3a7d44" d="M336 ') == 2
    row = page[page.index('data-type="send_email"') :]
    assert '<td class="done">20</td>' in row
    assert '<td class="retried">1</td>' in row
    assert '<td class="duration-p50">20 ms</td>' in row
    # 21 runs: 19 at 15 ms, the retried one at 300 ms, one at 1.5 s: the 95th is the 20th.
    assert '<td class="duration-p95">500 ms</td>' in row
    assert '<td class="pickup-p50">5 ms</td>' in row
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


async def test_the_live_part_and_its_script_are_served_by_the_page() -> None:
    queues = InMemoryQueues()
    await _recorded(queues)
    async with AsyncTestClient(app=ops_app(queues)) as client:
        page = await client.get("/ops/", headers=OPERATOR)
        assert '<script src="/ops/live.js"></script>' in page.text
        assert 'id="refresh" href="/ops/"' in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        live = await client.get("/ops/live", headers=OPERATOR)
        assert live.status_code == 200
        assert '<table id="queues">' in live.text
        assert "<html" not in live.text
        script = await client.get("/ops/live.js", headers=OPERATOR)
        assert script.headers["content-type"].startswith("text/javascript")
        assert 'fetch("/ops/live"' in script.text
        assert (await client.get("/ops/live")).status_code == 401


_MINUTES = st.lists(st.integers(0, 50), min_size=60, max_size=60)


@given(_MINUTES, _MINUTES, _MINUTES)
def test_a_chart_draws_one_bar_per_minute_with_jobs_within_its_frame(
    done: list[int], retried: list[int], failed: list[int]
) -> None:
    trend = Trend("q", datetime.now(UTC), tuple(done), tuple(retried), tuple(failed),
                  None, None, None, None)  # fmt: skip
    paths = chart_paths(trend)
    for series, counts in (("done", done), ("retried", retried), ("failed", failed)):
        assert paths[series].count("M") == sum(1 for c in counts if c)
    tops = [float(bar.split()[1].split("h")[0]) for p in paths.values() for bar in p.split("M")[1:]]
    assert all(tops_ >= 1.9 for tops_ in tops)
