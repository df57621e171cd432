"""`skincare queue stats`, `dlq count --max` and the --json output as a script or an alarm uses
them, on the Postgres and the SQS backend, with the default INFO log level: stdout is only the
command's output (botocore's INFO lines once landed in it). The `skincare ops` page shows the
same named queue's row on both."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import boto3
import pytest

from skincare_core.jobs import Backend, Burial, Job, enqueue, new_job
from skincare_postgres import create_engine, postgres_backend
from tests.e2e.cli_run import run_skincare, skincare_json
from tests.e2e.e2e_client import base_env
from tests.e2e.ops_page import ops_row
from tests.e2e.sqs_shop import shop_queues, shop_sqs_backend, sqs_env

pytestmark = pytest.mark.slow
Opener = Callable[[], AbstractAsyncContextManager[Backend]]


async def _fill(open_backend: Opener, dead: Job, ready: list[Job]) -> None:
    async with open_backend() as backend:
        await enqueue(backend.queue(), dead)
        with anyio.fail_after(10):
            while not (messages := await backend.queue().receive(1)):
                pass
        reason = "PermanentJobError: no such product"
        await backend.queue().dead_letter_many([Burial(messages[0], reason)])
        for job in ready:
            await enqueue(backend.queue(), job)


def _assert_ops_commands(env: dict[str, str], dead: Job, age_known: bool) -> None:
    stats = skincare_json(env, "queue", "stats", "--json")
    assert isinstance(stats, dict)
    age = stats.pop("oldest_ready_age_seconds")
    assert stats.pop("paused") == {"queues": [], "types": []}
    assert stats == {"ready": 2, "scheduled": 0, "leased": 0, "dead": 1}
    assert (age is not None and age >= 0) if age_known else age is None
    bulk = skincare_json(env, "queue", "stats", "--queue", "bulk", "--json")
    assert isinstance(bulk, dict)
    assert bulk.pop("paused") == {"queues": [], "types": []}
    assert bulk == {**dict.fromkeys(("ready", "scheduled", "leased", "dead"), 0), **_no_age}
    table = run_skincare(env, "queue", "stats").stdout.splitlines()
    assert [line.split()[:2] for line in table[:4]] == [
        ["ready", "2"], ["scheduled", "0"], ["leased", "0"], ["dead", "1"]
    ]  # fmt: skip
    assert skincare_json(env, "dlq", "count", "--json") == {"dead": 1}
    assert skincare_json(env, "dlq", "show", dead.id, "--json") == {
        "id": dead.id,
        "type": dead.type,
        "queue": "default",
        "payload": dict(dead.payload),
        "attempts": 1,
        "error": "PermanentJobError: no such product",
    }
    listing = skincare_json(env, "dlq", "list", "--json")
    assert isinstance(listing, list)
    [listed] = listing
    assert (listed["id"], listed["attempts"]) == (dead.id, 1)
    assert skincare_json(env, "dlq", "list", "--group-by", "error", "--json") == [
        {"error": "PermanentJobError: no such product", "count": 1}
    ]
    _assert_alarm_and_missing(env)
    # The poison job died on default just now: failed 1 in the last 5 minutes, done none.
    expected = {"ready": "2", "scheduled": "0", "leased": "0", "dead": "1"}
    assert ops_row(env, "default") == {**expected, "done": "0", "failed": "1"}


_no_age = {"oldest_ready_age_seconds": None}


def _assert_alarm_and_missing(env: dict[str, str]) -> None:
    calm = run_skincare(env, "dlq", "count", "--max", "1")
    assert (calm.returncode, calm.stdout) == (0, "1\n")
    alarm = run_skincare(env, "dlq", "count", "--max", "0")
    assert (alarm.returncode, alarm.stdout) == (1, "1\n")
    assert alarm.stderr == "skincare: 1 dead job(s), more than the maximum of 0\n"
    missing = run_skincare(env, "dlq", "show", "no-such-job", "--json")
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr == "skincare: no dead job no-such-job\n"


@pytest.fixture
def jobs() -> Iterator[tuple[Job, list[Job]]]:
    yield new_job("sync_warehouse_stock", product_id="42"), [new_job("noop") for _ in range(2)]


def test_ops_commands_on_the_postgres_queue(
    database_url: str, home: Path, jobs: tuple[Job, list[Job]]
) -> None:
    async def fill() -> None:
        engine = create_engine(database_url)
        try:
            await _fill(lambda: postgres_backend(engine), *jobs)
        finally:
            await engine.dispose()

    anyio.run(fill)
    env, _ = base_env(database_url, home)
    _assert_ops_commands(env, jobs[0], age_known=True)


def test_ops_commands_on_the_sqs_queue(
    database_url: str, home: Path, moto_endpoint: str, jobs: tuple[Job, list[Job]]
) -> None:
    client = boto3.client("sqs", endpoint_url=moto_endpoint)
    urls = shop_queues(client, "ops-cli")

    def open_backend() -> AbstractAsyncContextManager[Backend]:
        return shop_sqs_backend(client, urls, database_url)

    anyio.run(_fill, open_backend, *jobs)
    env, _ = base_env(database_url, home, **sqs_env("ops-cli"))
    _assert_ops_commands(env, jobs[0], age_known=False)
