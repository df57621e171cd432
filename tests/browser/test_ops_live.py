"""In a real headless Chromium, against the real API, worker and `skincare ops` processes on
Postgres: an operator finds an order's confirmation e-mail job by its order id and reads its
timeline (the first attempt's error, then the success), pauses the default queue and sees a new
checkout's e-mail wait, resumes it and sees it sent, and runs an order's scheduled expiry now.
`SKINCARE_OPS_LIVE_SCREENSHOT=docs/ops-live.png` refreshes the docs' screenshot."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import anyio
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from skincare_core.jobs.ports import Retry
from skincare_postgres import PostgresQueue, create_engine
from skincare_services.local import stop_process, wait_for
from skincare_services.seed import SeededShop
from tests.browser.ops_server import chromium_path
from tests.e2e.e2e_client import (
    ShopClient,
    api_process,
    base_env,
    maildir_count,
    worker_process,
)
from tests.e2e.ops_page import TOKEN, ops_server

pytestmark = pytest.mark.slow
SCREENSHOT = os.environ.get("SKINCARE_OPS_LIVE_SCREENSHOT")
BUSY = "SMTPError: 421 mailbox busy, try later"


async def _fail_first_attempt(database_url: str) -> None:
    """Take the waiting confirmation e-mail and fail its first attempt, retried at once."""
    engine = create_engine(database_url)
    try:
        async with PostgresQueue(engine, poll_interval=timedelta(seconds=0.2)) as queue:
            [message] = await queue.receive(10)
            assert message.job.type == "send_confirmation_email"
            await queue.retry_many([Retry(message, timedelta(0), error=BUSY)])
    finally:
        await engine.dispose()


def _search(page: Page, base: str, query: str, job_type: str) -> None:
    """Search the ops page and open the one job of `job_type` it lists."""
    page.goto(f"{base}/ops/")
    page.fill("#q", query)
    page.click("#find")
    page.locator("tr.found", has_text=job_type).locator("a").click()


def _state_becomes(page: Page, state: str, within: float = 30) -> None:
    deadline = time.monotonic() + within
    while page.locator("#job td.state").inner_text() != state:
        assert time.monotonic() < deadline, page.locator("#job").inner_text()
        time.sleep(0.5)
        page.reload()


EMAIL, EXPIRY = "send_confirmation_email", "expire_unpaid_order"
DEFAULT_ROW = "#queues tr[data-queue='default']"


def _checkout(client: ShopClient, shop: SeededShop, n: int) -> str:
    order = client.checkout(shop.user_ids[n], shop.product_ids[0], key=f"live-{n}")
    return str(order["order_id"])


def _find_the_timeline(page: Page, base: str, order: str) -> None:
    page.goto(f"{base}/ops/sign-in")
    page.fill("#token", TOKEN)
    page.click("#sign-in")
    _search(page, base, f"order_id={order}", EMAIL)
    _state_becomes(page, "done")
    attempts = page.locator("#timeline tr.attempt")
    expect(attempts).to_have_count(2)
    expect(attempts.nth(0).locator("td.error")).to_have_text(BUSY)
    expect(attempts.nth(1).locator("td.error")).to_have_text("")


def _pause_then_resume(page: Page, base: str, checkout: Callable[[], str], home: Path) -> None:
    page.goto(f"{base}/ops/")
    page.locator(f"{DEFAULT_ROW} button.pause").click()
    expect(page.locator(f"{DEFAULT_ROW} td.paused")).to_contain_text("paused")
    time.sleep(1.0)  # every worker holds the pause within a second
    order = checkout()
    time.sleep(2.0)
    _search(page, base, f"type={EMAIL} order_id={order}", EMAIL)
    expect(page.locator("#job td.state")).to_have_text("ready")
    assert maildir_count(home) == 1
    page.goto(f"{base}/ops/")
    # The page refreshes its live part by itself; the workers' minutes show as charts.
    expect(page.locator("#live[data-refreshed-at]")).to_have_count(1, timeout=15_000)
    expect(page.locator("#type-trends tr[data-type='send_confirmation_email'] svg")).to_be_visible(
        timeout=15_000
    )
    if SCREENSHOT:
        page.screenshot(path=str(Path(SCREENSHOT)), full_page=True)
    page.locator(f"{DEFAULT_ROW} button.resume").click()
    _search(page, base, f"order_id={order}", EMAIL)
    _state_becomes(page, "done")
    assert wait_for(lambda: maildir_count(home) == 2, 30)


def _run_the_expiry_now(page: Page, base: str, order: str) -> None:
    # The order's expiry waits out the payment window.
    _search(page, base, f"type={EXPIRY} order_id={order}", EXPIRY)
    expect(page.locator("#job td.state")).to_have_text("scheduled")
    page.click("#run-now")
    page.click("#confirm")
    _state_becomes(page, "done")


def test_an_operator_finds_pauses_resumes_and_runs_jobs_now(
    database_url: str, shop: SeededShop, home: Path
) -> None:
    env, port = base_env(database_url, home)
    with api_process(env, port, home) as client:
        first = _checkout(client, shop, 0)
        anyio.run(_fail_first_attempt, database_url)
        worker = worker_process(env, home)
        try:
            with ops_server(env) as base, sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                _find_the_timeline(page, base, first)
                _pause_then_resume(page, base, lambda: _checkout(client, shop, 1), home)
                _run_the_expiry_now(page, base, first)
                browser.close()
        finally:
            assert stop_process(worker) == 0
