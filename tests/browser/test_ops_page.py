"""In a real headless Chromium: an operator signs in, sees each queue's counts and its jobs done
and failed lately, the poison job in its error group, previews its redrive, confirms it, and
sees it leave the dead letters."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlencode

import anyio
from playwright.sync_api import Page, expect, sync_playwright

from skincare_core.jobs import enqueue
from skincare_core.jobs.job import Job
from skincare_core.testing.jobs import InMemoryQueues
from tests.browser.ops_server import attacker_app, chromium_path, serving
from tests.http.ops_support import OPS_TOKEN, kill, ops_app

POISON = "ValueError: order 41 has no lines"
# Set to a path to refresh the screenshot in the docs.
SCREENSHOT = os.environ.get("SKINCARE_OPS_SCREENSHOT")


async def _run_fine(queues: InMemoryQueues, queue: str, count: int) -> None:
    served = queues.queue(queue)
    for n in range(count):
        await enqueue(served, Job(id=f"{queue}-ok-{n}", type="send_confirmation_email"))
    await served.ack_many(await served.receive(count))


async def _poisoned() -> InMemoryQueues:
    queues = InMemoryQueues()
    await _run_fine(queues, "default", 3)
    await _run_fine(queues, "critical", 2)
    await kill(
        queues,
        Job(id="poison-1", type="send_confirmation_email", payload={"order_id": "41"}),
        POISON,
    )
    await kill(
        queues,
        Job(id="pdf-9", type="render_invoice", payload={"order_id": "9"}),
        "TimeoutError",
        "bulk",
    )
    await enqueue(queues.queue("critical"), Job(id="fresh-1", type="capture_payment"))
    await enqueue(queues.queue("bulk"), Job(id="later-1", type="render_invoice"), delay=HOUR)
    await enqueue(queues.queue("bulk"), Job(id="running-1", type="render_invoice"))
    await queues.queue("bulk").receive(1)
    return queues


HOUR = timedelta(hours=1)
COLUMNS = ("ready", "scheduled", "leased", "dead", "done", "failed")


def _row(page: Page, queue: str) -> tuple[str, ...]:
    row = page.locator(f"#queues tr[data-queue='{queue}']")
    return tuple(row.locator(f"td.{column}").inner_text() for column in COLUMNS)


def test_an_operator_redrives_a_poison_job_by_clicking() -> None:
    queues = anyio.run(_poisoned)
    app = ops_app(queues)
    with serving(app) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True)
        page = browser.new_page()
        page.goto(f"{base}/ops/sign-in")
        page.fill("#token", OPS_TOKEN)
        page.click("#sign-in")
        group = page.locator("table.group", has_text=POISON)
        expect(group.locator("tr.dead[data-job='poison-1']")).to_be_visible()
        # Per queue: ready, scheduled, leased, dead now; done and failed in the last 5 minutes.
        assert _row(page, "critical") == ("1", "0", "0", "0", "2", "0")
        assert _row(page, "default") == ("0", "0", "0", "1", "3", "1")
        assert _row(page, "bulk") == ("0", "1", "1", "1", "0", "1")
        assert _row(page, "all") == ("1", "1", "1", "2", "5", "2")
        if SCREENSHOT:
            page.screenshot(path=str(Path(SCREENSHOT)), full_page=True)
        group.locator("a.redrive-group").click()
        expect(page.locator("tr.moving")).to_have_count(1)
        page.click("#confirm")
        expect(page.locator("#moved")).to_contain_text("1 job(s)")
        expect(page.locator("tr.dead[data-job='poison-1']")).to_have_count(0)
        expect(page.locator("tr.dead[data-job='pdf-9']")).to_have_count(1)
        assert _row(page, "default") == ("1", "0", "0", "0", "3", "1")
        browser.close()
    assert queues.queue("default").depth == 1


async def _dead(job_id: str) -> InMemoryQueues:
    queues = InMemoryQueues()
    await kill(queues, Job(id=job_id, type="send_confirmation_email"), POISON)
    return queues


def _sign_in(page: Page, base: str) -> None:
    page.goto(f"{base}/ops/sign-in")
    page.fill("#token", OPS_TOKEN)
    page.click("#sign-in")


def test_a_job_id_with_slashes_links_to_its_own_page() -> None:
    queues = anyio.run(_dead, "../sign-in")
    with serving(ops_app(queues)) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True)
        page = browser.new_page()
        _sign_in(page, base)
        page.locator("tr.dead a").click()
        expect(page.locator("h2")).to_have_text("Dead job ../sign-in")
        page.click("#redrive-one")
        page.click("#confirm")
        expect(page.locator("#moved")).to_contain_text("1 job(s)")
        page.click("#sign-out button")
        expect(page.locator("h2")).to_have_text("Sign in")
        assert page.goto(f"{base}/ops/").status == 401  # type: ignore[union-attr]
        browser.close()
    assert queues.queue("default").depth == 1


def test_a_page_on_another_port_cannot_redrive_a_job() -> None:
    queues = anyio.run(_dead, "poison-1")
    with (
        serving(ops_app(queues)) as base,
        serving(attacker_app()) as evil,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True)
        page = browser.new_page()
        _sign_in(page, base)
        expect(page.locator("tr.dead")).to_have_count(1)
        # As the page itself would read it, and as an attacker who learnt the token would send it.
        for token in ("", _csrf_cookie(page)):
            query = urlencode({"target": base, "job_id": "poison-1", "token": token})
            page.goto(f"{evil}/ops/attack?{query}")
            page.wait_for_url(f"{base}/**")
            assert "moved" not in page.url
            assert page.evaluate("document.cookie") == ""
        browser.close()
    assert queues.queue("default").depth == 0
    assert anyio.run(queues.count) == 1


def _csrf_cookie(page: Page) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")


def test_a_page_on_another_port_cannot_frame_the_purge_confirmation() -> None:
    queues = anyio.run(_dead, "poison-1")
    with (
        serving(ops_app(queues)) as base,
        serving(attacker_app()) as evil,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True)
        page = browser.new_page()
        _sign_in(page, base)
        page.goto(f"{base}/ops/preview?action=purge")
        expect(page.locator("#confirm")).to_be_visible()
        page.goto(f"{evil}/ops/frame?{urlencode({'src': f'{base}/ops/preview?action=purge'})}")
        expect(page.locator("body[data-framed='loaded']")).to_have_count(1)
        expect(page.frame_locator("#framed").locator("#confirm")).to_have_count(0)
        browser.close()
    assert anyio.run(queues.count) == 1
