"""A LISTEN connection whose network stalled (the proxy goes silent, as a hung server or a lost
route would) is found out by its quiet-time check and replaced, so idle workers are woken by
notifications again instead of by their poll alone."""

from __future__ import annotations

from datetime import timedelta

import anyio
import psycopg
import pytest

from skincare_postgres.engine import libpq_conninfo
from skincare_postgres.jobs.listener import JobListener
from tests.faults.conftest import through, upstream_of
from tests.faults.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
CHANNEL = "skincare_jobs.listener_stall"


async def _notify(url: str) -> None:
    async with await psycopg.AsyncConnection.connect(libpq_conninfo(url), autocommit=True) as c:
        await c.execute(f'NOTIFY "{CHANNEL}"')


async def _woken_after(listener: JobListener, url: str, within: float) -> float:
    """Seconds from a NOTIFY (sent directly) until `listener.wait(within)` returns."""
    async with anyio.create_task_group() as tg:
        started = anyio.current_time()
        tg.start_soon(listener.wait, within)
        await anyio.sleep(0.2)
        await _notify(url)
    return anyio.current_time() - started - 0.2


async def test_a_listener_whose_network_stalled_hears_notifications_again(
    own_database: str,
) -> None:
    with TcpProxy(upstream_of(own_database)) as proxy:
        listener = JobListener(
            libpq_conninfo(through(own_database, proxy.port)),
            CHANNEL,
            connect_timeout=timedelta(seconds=1),
            check_every=timedelta(seconds=0.5),
        )
        try:
            await listener.start()
            assert await _woken_after(listener, own_database, within=10) < 1
            proxy.stall()
            await anyio.sleep(0.5)
            proxy.resume()  # the listening connection stays silent, as after a hung server
            # Quiet waits: the check finds the silent connection and drops it.
            with anyio.fail_after(10):
                for _ in range(8):
                    await listener.wait(0.5)
            # A fresh listening connection hears the next notification.
            assert await _woken_after(listener, own_database, within=10) < 1
        finally:
            await listener.close()
