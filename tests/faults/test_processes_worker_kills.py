"""The real worker killed with SIGKILL KILLS times, every 1-2 s, and restarted at once, under a
bounded shop load (8 customers, up to 8 orders each: cart, checkout, a paid webhook delivered
twice) on the Postgres queue.

Invariants (`shop_invariants`): every 201 order stored and nothing else, no partial order, no
double payment, no dead job (a kill costs a job one delivery, never all of them), at most one
duplicate e-mail per send a kill cut off (the e-mail queue's concurrency per kill), customers
see no error at all, and after the last restart every order's e-mails and invoice arrive
within MAIL_WITHIN s of the load's end (a killed run's claim and lease run out first).

Measured: 64 orders, every e-mail 16.2 s after the load (the 15 s claim), 1 duplicate e-mail.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from skincare_services.local import stop_process, wait_for
from tests.e2e.e2e_client import api_process, base_env, worker_process
from tests.faults.shop_invariants import check_shop, mail_per_order, seconds_until_mailed
from tests.faults.shop_invariants import total_stock as stock_of
from tests.faults.shop_load import ShopLoad, running
from tests.faults.shop_processes import CUSTOMERS, EMAIL_CONCURRENCY, WORKER_ENV, seeded
from tests.unmeasured import unmeasured

pytestmark = pytest.mark.slow

KILLS = 4
MAIL_WITHIN = 30.0
"""A send killed before its record waits out its 15 s claim before it goes out again."""


class Workers:
    """The worker process of the moment, each in its own log."""

    def __init__(self, env: dict[str, str], home: Path) -> None:
        self._env, self._home = env, home
        self.started = 0
        self.current = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        self.started += 1
        return worker_process(self._env, self._home, name=f"worker{self.started}")

    def kill_and_restart(self) -> None:
        """SIGKILL the worker (no drain, no ack, no record) and start another."""
        self.current.send_signal(signal.SIGKILL)
        self.current.wait(5)
        self.current = self._start()


@contextmanager
def _workers(env: dict[str, str], home: Path) -> Iterator[Workers]:
    workers = Workers(env, home)
    try:
        yield workers
    finally:
        stop_process(workers.current)


def test_repeated_worker_kills_under_load_lose_nothing(own_database: str, tmp_path: Path) -> None:
    shop = seeded(own_database)
    stock = stock_of(own_database)
    rng = random.Random(19)
    # Unmeasured (tests/unmeasured.py): a killed worker writes no coverage data anyway.
    env, port = base_env(own_database, tmp_path, **WORKER_ENV)
    env = unmeasured(env)
    with _workers(env, tmp_path) as workers, api_process(env, port, tmp_path) as client:
        load = ShopLoad(client, shop, orders_each=8, customers=CUSTOMERS, pause=0.4)
        with running(load):
            assert wait_for(lambda: len(load.placed) >= CUSTOMERS, 10)
            for _ in range(KILLS):
                time.sleep(rng.uniform(1.0, 2.0))
                workers.kill_and_restart()
        mailed = seconds_until_mailed(own_database, tmp_path, MAIL_WITHIN)
    duplicates = sum(count - 1 for count in mail_per_order(tmp_path).values())
    print(
        f"{KILLS} kills: {len(load.placed)} orders, every e-mail {mailed:.1f} s after the load,"
        f" {duplicates} duplicate e-mails"
    )
    assert workers.started == KILLS + 1
    assert all(answer.ok for answer in load.answers)
    check_shop(
        own_database,
        tmp_path,
        load.placed,
        stock_before=stock,
        max_duplicates=KILLS * EMAIL_CONCURRENCY,
    )
