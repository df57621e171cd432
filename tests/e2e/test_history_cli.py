"""`skincare jobs list` and `skincare jobs show` as an operator on call uses them, on the Postgres
and the SQS backend: an order's e-mail job found by its order id, its timeline with each
attempt's error, and the one-line errors of bad input."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta
from pathlib import Path

import anyio
import boto3
import pytest

from skincare_core.jobs import Backend, Burial, Job, Message, Queue, Retry, enqueue, new_job
from skincare_postgres import create_engine, postgres_backend
from tests.e2e.cli_run import run_skincare, skincare_json
from tests.e2e.e2e_client import base_env
from tests.e2e.sqs_shop import shop_queues, shop_sqs_backend, sqs_env

pytestmark = pytest.mark.slow
Opener = Callable[[], AbstractAsyncContextManager[Backend]]
MAIL = "send_confirmation_email"


async def _receive(queue: Queue, job: Job) -> Message:
    with anyio.fail_after(10):
        while True:
            for message in await queue.receive(1):
                if message.job.id == job.id:
                    return message
                await queue.retry_many([Retry(message, timedelta(0), "not this one")])


async def _fill(open_backend: Opener, mail: Job, other: Job, dead: Job) -> None:
    """`mail` fails once then is done, `other` waits, `dead` dies."""
    async with open_backend() as backend:
        queue = backend.queue()
        for job in (mail, other, dead):
            await enqueue(queue, job, delay=timedelta(hours=1) if job is other else None)
        first = await _receive(queue, mail)
        await queue.retry_many([Retry(first, timedelta(0), "SMTPServerDisconnected: try later")])
        await queue.ack_many([await _receive(queue, mail)])
        await queue.dead_letter_many([Burial(await _receive(queue, dead), "PermanentJobError: no")])
        history = backend.history
        assert history is not None
        with anyio.fail_after(10):
            while (record := await history.get(mail.id)) is None or record.state != "done":  # noqa: ASYNC110
                await anyio.sleep(0.05)


def _found(env: dict[str, str], *args: str) -> list[dict[str, object]]:
    found = skincare_json(env, "jobs", "list", *args, "--json")
    assert isinstance(found, list)
    return found


def _assert_history_commands(env: dict[str, str], mail: Job, other: Job, dead: Job) -> None:
    found = _found(env, "--arg", "order_id=123")
    assert [(j["id"], j["state"]) for j in found] == [(mail.id, "done")]
    record = skincare_json(env, "jobs", "show", mail.id, "--json")
    assert isinstance(record, dict)
    assert (record["type"], record["queue"], record["attempts"]) == (MAIL, "default", 2)
    assert [a["error"] for a in record["attempts_log"]] == [
        "SMTPServerDisconnected: try later",
        None,
    ]
    assert all(a["ended_at"] >= a["started_at"] for a in record["attempts_log"])
    text = run_skincare(env, "jobs", "show", mail.id).stdout.splitlines()
    assert text[0] == f"job {mail.id}  type={MAIL}  queue=default  state=done"
    assert "error: SMTPServerDisconnected: try later" in text[3]
    assert text[-1].startswith("done ")
    states = {j["id"]: j["state"] for j in _found(env)}
    assert states == {mail.id: "done", other.id: "scheduled", dead.id: "dead"}
    dead_only = _found(env, "--state", "dead", "--since", "1h")
    assert [j["id"] for j in dead_only] == [dead.id]
    listing = run_skincare(env, "jobs", "list", "--type", MAIL)
    assert listing.stdout.splitlines()[-1] == "2 job(s)"
    _assert_errors(env)


def _assert_errors(env: dict[str, str]) -> None:
    missing = run_skincare(env, "jobs", "show", "no-such-job", "--json")
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr.startswith("skincare: no job no-such-job:")
    for args, says in [
        (["--arg", "order_id"], "--arg: expected key=value, got 'order_id'"),
        (["--since", "yesterday"], "--since: expected an ISO 8601 time or a duration"),
        (["--since", "1h", "--until", "2h"], "the time range is empty"),
        (["--state", "lost"], "lost"),
    ]:
        bad = run_skincare(env, "jobs", "list", *args)
        assert bad.returncode == 2, bad.stderr
        assert len(bad.stderr.splitlines()) == 1
        assert says in bad.stderr


def _jobs() -> tuple[Job, Job, Job]:
    return (
        new_job(MAIL, order_id="123"),
        new_job(MAIL, order_id="124"),
        new_job("sync_warehouse_stock", product_id="42"),
    )


def test_history_commands_on_the_postgres_queue(database_url: str, home: Path) -> None:
    jobs = _jobs()

    async def fill() -> None:
        engine = create_engine(database_url)
        try:
            await _fill(lambda: postgres_backend(engine), *jobs)
        finally:
            await engine.dispose()

    anyio.run(fill)
    env, _ = base_env(database_url, home)
    _assert_history_commands(env, *jobs)


def test_history_commands_on_the_sqs_queue(
    database_url: str, home: Path, moto_endpoint: str
) -> None:
    jobs = _jobs()
    client = boto3.client("sqs", endpoint_url=moto_endpoint)
    urls = shop_queues(client, "history-cli")

    def open_backend() -> AbstractAsyncContextManager[Backend]:
        return shop_sqs_backend(client, urls, database_url)

    anyio.run(_fill, open_backend, *jobs)
    env, _ = base_env(database_url, home, **sqs_env("history-cli"))
    _assert_history_commands(env, *jobs)


def test_history_off_is_one_line(database_url: str, home: Path) -> None:
    env, _ = base_env(database_url, home, SKINCARE_HISTORY="off")
    done = run_skincare(env, "jobs", "list")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "skincare: this backend keeps no job history (SKINCARE_HISTORY is off)\n"
