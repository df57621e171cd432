"""The worker under SIGTERM (drains, exits 0) and SIGKILL (nothing lost), as real processes."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from skincare_services.local import stop_process, wait_for
from skincare_services.seed import SeededShop
from tests.e2e.e2e_client import api_process, base_env, worker_process
from tests.e2e.slow_smtp import start_smtp
from tests.unmeasured import unmeasured

pytestmark = pytest.mark.slow


def _smtp_env(port: int, **extra: str) -> dict[str, str]:
    return {
        "SKINCARE_EMAIL": "smtp",
        "SKINCARE_SMTP_HOST": "127.0.0.1",
        "SKINCARE_SMTP_PORT": str(port),
        "SKINCARE_SMTP_SECURITY": "none",
        **extra,
    }


def _place_orders(env: dict[str, str], port: int, home: Path, shop: SeededShop, n: int) -> None:
    with api_process(env, port, home) as client:
        for i in range(n):
            user = shop.user_ids[i % len(shop.user_ids)]
            client.checkout(user, shop.product_ids[0], key=f"crash-{i}")


def test_sigterm_with_50_jobs_in_flight_drains_and_exits_0(
    database_url: str, shop: SeededShop, home: Path
) -> None:
    controller, smtp = start_smtp(delay=3.0)
    try:
        extra = _smtp_env(controller.port, SKINCARE_WORKER_QUEUES="critical=8,default=64,bulk=4")
        env, port = base_env(database_url, home, SKINCARE_SHUTDOWN_GRACE_SECONDS="10", **extra)
        _place_orders(env, port, home, shop, 50)
        worker = worker_process(env, home)
        try:
            assert wait_for(lambda: smtp.in_data == 50, 30), smtp.in_data
            started = time.monotonic()
            worker.send_signal(signal.SIGTERM)
            assert worker.wait(15) == 0
            assert time.monotonic() - started < 12
        finally:
            stop_process(worker)
        restarted = worker_process(env, home, name="worker2")
        try:
            assert wait_for(lambda: len(smtp.message_ids) == 50, 30)
            time.sleep(1)
        finally:
            stop_process(restarted)
        assert set(smtp.message_ids.values()) == {1}
    finally:
        controller.stop()


def test_sigkill_mid_load_loses_nothing(database_url: str, shop: SeededShop, home: Path) -> None:
    controller, smtp = start_smtp(delay=0.2)
    try:
        extra = _smtp_env(
            controller.port,
            SKINCARE_WORKER_QUEUES="critical=1,default=4,bulk=1",
            SKINCARE_VISIBILITY_TIMEOUT_SECONDS="2",
        )
        # Unmeasured (tests/unmeasured.py): a killed worker writes no coverage data anyway.
        env, port = base_env(database_url, home, **extra)
        env = unmeasured(env)
        _place_orders(env, port, home, shop, 100)
        worker = worker_process(env, home)
        try:
            assert wait_for(lambda: len(smtp.message_ids) >= 20, 30)
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait(5)
        restarted = worker_process(env, home, name="worker2")
        try:
            assert wait_for(lambda: len(smtp.message_ids) == 100, 60), len(smtp.message_ids)
            time.sleep(3)
        finally:
            stop_process(restarted)
        duplicates = sum(count - 1 for count in smtp.message_ids.values())
        # Only jobs killed between send and record may repeat: at most the in-flight ones.
        assert duplicates <= 4
    finally:
        controller.stop()
