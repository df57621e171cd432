"""The worker's composition root: a team's handlers are served beside the shop's, not over them."""

from __future__ import annotations

from pathlib import Path

import pytest
from attrs import frozen

from skincare_core.jobs import Definitions, Job, JobDefinition, Schedules
from skincare_core.shop.job_types import SEND_CONFIRMATION_EMAIL, SEND_DAILY_SALES_SUMMARY
from skincare_core.shop.periodic import DAILY_SALES_SUMMARY
from skincare_services.compose import worker_process
from skincare_services.scheduling import NotSupportedHere
from skincare_services.settings import load_settings

pytestmark = pytest.mark.anyio


async def _noop(job: Job) -> None:
    """A handler that does nothing."""


def _settings(tmp_path: Path, **extra: str) -> dict[str, str]:
    # Nothing connects while the process is composed: an unreachable database is fine here.
    return {
        "SKINCARE_DATABASE_URL": "postgresql+psycopg://u:p@127.0.0.1:9/shop",
        "SKINCARE_WEBHOOK_SECRET": "whsec",
        "SKINCARE_JWT_SECRET": "jwtsec-long-enough-for-32-bytes-0123456789",
        "SKINCARE_MAILDIR": str(tmp_path / "mail"),
        "SKINCARE_INVOICE_DIR": str(tmp_path / "invoices"),
        **extra,
    }


async def test_a_handler_for_a_shop_job_type_is_refused(tmp_path: Path) -> None:
    settings = load_settings(_settings(tmp_path))
    with pytest.raises(ValueError, match="already registered"):
        async with worker_process(settings=settings, handlers={SEND_CONFIRMATION_EMAIL: _noop}):
            pass


async def test_the_postgres_queue_runs_no_relay(tmp_path: Path) -> None:
    settings = load_settings(_settings(tmp_path))
    async with worker_process(settings=settings, handlers={"team.job": _noop}) as process:
        assert process.relay is None


async def test_one_worker_per_configured_queue_or_the_chosen_subset(tmp_path: Path) -> None:
    settings = load_settings(_settings(tmp_path, SKINCARE_WORKER_QUEUES="critical=2,bulk=1"))
    async with worker_process(settings=settings) as process:
        assert list(process.workers) == ["critical", "bulk"]
    async with worker_process(settings=settings, queues=["bulk"]) as process:
        assert list(process.workers) == ["bulk"]
    with pytest.raises(ValueError, match="'default' is not one of SKINCARE_WORKER_QUEUES"):
        async with worker_process(settings=settings, queues=["default"]):
            pass


async def test_schedules_get_a_scheduler_and_none_get_none(tmp_path: Path) -> None:
    settings = load_settings(_settings(tmp_path))
    schedules = Schedules()
    schedules.add("team.nightly", "0 2 * * *", "team.job")
    async with worker_process(settings=settings, schedules=schedules) as process:
        assert process.scheduler is not None
    async with worker_process(settings=settings, schedules=Schedules()) as process:
        assert process.scheduler is None


async def test_the_sales_summary_is_scheduled_only_with_an_admin_address(tmp_path: Path) -> None:
    team = Schedules()
    team.add("team.nightly", "0 2 * * *", "team.job")
    without = load_settings(_settings(tmp_path))
    async with worker_process(settings=without) as process:
        assert process.scheduler is None
    async with worker_process(settings=without, schedules=team) as process:
        assert process.scheduler is not None
        assert [s.name for s in process.scheduler.schedules] == ["team.nightly"]
    admin = load_settings(_settings(tmp_path, SKINCARE_ADMIN_EMAIL="admin@toko.test"))
    async with worker_process(settings=admin, schedules=team) as process:
        assert process.scheduler is not None
        summary, nightly = process.scheduler.schedules
        assert nightly.name == "team.nightly"
    assert (summary.name, summary.cron, summary.timezone, summary.job_type) == (
        DAILY_SALES_SUMMARY,
        "0 7 * * *",
        "Asia/Jakarta",
        SEND_DAILY_SALES_SUMMARY,
    )


async def test_a_team_schedule_named_like_the_shops_is_refused(tmp_path: Path) -> None:
    admin = load_settings(_settings(tmp_path, SKINCARE_ADMIN_EMAIL="admin@toko.test"))
    team = Schedules()
    team.add(DAILY_SALES_SUMMARY, "0 8 * * *", "team.job")
    with pytest.raises(ValueError, match="already added"):
        async with worker_process(settings=admin, schedules=team):
            pass


@frozen
class _Sync:
    sku: str


async def _sync(args: _Sync) -> None:
    """A typed handler that does nothing."""


async def test_a_teams_definitions_are_served_and_checked_against_the_queues(
    tmp_path: Path,
) -> None:
    settings = load_settings(_settings(tmp_path, SKINCARE_WORKER_QUEUES="default=2,bulk=1"))
    bulk = JobDefinition("team.sync", _Sync, _sync, queue="bulk")
    async with worker_process(settings=settings, definitions=Definitions(bulk)) as process:
        assert list(process.workers) == ["default", "bulk"]
    elsewhere = JobDefinition("team.sync", _Sync, _sync, queue="team")
    with pytest.raises(NotSupportedHere, match="goes to queue 'team', which SKINCARE_WORKER"):
        async with worker_process(settings=settings, definitions=Definitions(elsewhere)):
            pass
    shop_type = JobDefinition(SEND_CONFIRMATION_EMAIL, _Sync, _sync)
    with pytest.raises(ValueError, match="'send_confirmation_email' is defined twice"):
        async with worker_process(settings=settings, definitions=Definitions(shop_type)):
            pass


async def test_the_history_gets_a_cleaner_unless_it_is_off(tmp_path: Path) -> None:
    settings = load_settings(_settings(tmp_path, SKINCARE_HISTORY_DONE_RETENTION="2h"))
    async with worker_process(settings=settings) as process:
        assert process.cleaner is not None
    off = load_settings(_settings(tmp_path, SKINCARE_HISTORY="off"))
    async with worker_process(settings=off) as process:
        assert process.cleaner is None
