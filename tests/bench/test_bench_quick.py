"""Every bench program runs in its --quick mode: the bench/compare programs (in the bench
dependency group) and bench.queue_isolation, bench.bulk_enqueue, bench.held_horizon,
bench.notify_commit, bench.terminate_storm, bench.checkout_latency, bench.checkout_capacity,
bench.history_search, bench.history_soak, bench.history_ack_cost, bench.history_slices,
bench.pause_claim, bench.ops_page, bench.cap_cost and bench.sqs_cap_cost."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.unmeasured import unmeasured

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ("drain", "limit", "concurrency", "latency", "sqs")
# A program's own flags in its quick run: limit's history floor brings every history variant.
FLAGS = {"limit": ("--history-floor",)}


def _run_quick(name: str, out: Path) -> subprocess.CompletedProcess[str]:
    uv = shutil.which("uv")
    assert uv is not None, "uv must be on PATH (it installs the bench group from the lock)"
    command = [uv, "run", "--group", "bench", "python", "-m", f"bench.compare.{name}"]
    return subprocess.run(
        # One rep each: the harness and its JSON are the same code at any rep count.
        [*command, *FLAGS.get(name, ()), "--quick", "--reps", "1", "--out", str(out)],
        cwd=ROOT,
        env=unmeasured(os.environ),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _run_program(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`uv run python -m <module> <args>` from the repository, unmeasured, within 180 s."""
    uv = shutil.which("uv")
    assert uv is not None, "uv must be on PATH"
    return subprocess.run(
        [uv, "run", "python", "-m", module, *args],
        cwd=ROOT,
        env=unmeasured(os.environ),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


# One test per program so that parallel test workers share them out.
@pytest.mark.slow
@pytest.mark.parametrize("name", PROGRAMS)
def test_each_program_runs_quick_and_reports(name: str, tmp_path: Path) -> None:
    done = _run_quick(name, tmp_path)
    assert done.returncode == 0, f"{name}:\n{done.stdout}\n{done.stderr}"
    assert "| system |" in done.stdout, f"{name} printed no table:\n{done.stdout}"
    document = json.loads((tmp_path / f"{name}-quick.json").read_text())
    assert document["quick"] is True
    assert document["runs"], f"{name} measured nothing"
    assert document["reps"] == 1
    assert all(len(runs) == 1 for runs in document["runs"].values())
    if name == "limit":
        assert {"ours nohist b10", "ours rowonly b50"} <= set(document["runs"])
        assert "ours rowonly b50 / ours nohist b50 (jobs_per_s)" in done.stdout, done.stdout


@pytest.mark.slow
def test_the_queue_isolation_program_runs_quick_and_prints_both_layouts() -> None:
    done = _run_program("bench.queue_isolation", "--quick")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows] == [
        "| queues",
        "| ---",
        "| named queues (critical, bulk)",
        "| one shared queue",
    ]
    # With named queues every critical job was picked up while the backlog waited.
    assert rows[2].split(" | ")[1] == "60/60", rows[2]


@pytest.mark.slow
def test_the_queue_isolation_program_runs_its_priority_mode_quick() -> None:
    done = _run_program("bench.queue_isolation", "--quick", "--priority")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[2:]] == [
        "| one shared queue, critical at priority 1",
        "| one shared queue",
    ]
    # At priority 1 every critical job was picked up ahead of the backlog in its queue.
    assert rows[2].split(" | ")[1] == "60/60", rows[2]


@pytest.mark.slow
def test_the_cap_cost_program_runs_quick_and_prints_each_variant() -> None:
    done = _run_program("bench.cap_cost", "--quick")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[2:]] == [
        "| no cap",
        "| a cap on another type only (type:mail=2)",
        "| cap in use, never full (type:noop=1000)",
        "| cap of 10 (type:noop=10)",
    ]


@pytest.mark.slow
def test_the_bulk_enqueue_program_runs_quick_and_prints_every_shape() -> None:
    done = _run_program("bench.bulk_enqueue", "--quick")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line.split(" | ")[0] for line in done.stdout.splitlines() if line.startswith("| ")]
    assert rows[2:] == [
        "| plain (default queue)",
        "| each with a unique key",
        "| each delayed 5 min",
        "| over 3 named queues",
    ]


@pytest.mark.slow
def test_the_held_horizon_program_prints_both_claim_kinds() -> None:
    done = _run_program("bench.held_horizon", "--seconds", "2", "--rate", "200")
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| 2 |")]
    assert len(rows) == 2, done.stdout
    # Both runs kept up: at most a second's worth of the 400 jobs offered is left at the end.
    backlogs = [int(row.rstrip(" |").rsplit(" | ", 1)[-1].replace(",", "")) for row in rows]
    assert all(backlog <= 200 for backlog in backlogs), done.stdout


@pytest.mark.slow
def test_the_notify_commit_program_runs_quick_and_prints_every_way_of_notifying() -> None:
    done = _run_program("bench.notify_commit", "--quick")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [row[0] for row in rows] == [
        *("| clients", "| ---", "| 16", "| 64"),
        *("| variant", "| ---", "| NOTIFY in the transaction (main)"),
        *("| NOTIFY after commit (notifier)", "| no NOTIFY"),
    ]
    # Every confirmation job was picked up, whichever way its worker was woken.
    assert all(row[1].split("/")[0] == row[1].split("/")[1] for row in rows[-3:]), rows


@pytest.mark.slow
def test_the_terminate_storm_program_loses_no_enqueue_under_the_storm() -> None:
    done = _run_program("bench.terminate_storm", "--quick")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [(row[0], row[1], row[3]) for row in rows[2:]] == [
        ("| no storm", "150", "0"),
        ("| 2 terminations/s of every connection", "150", "0"),
    ]
    # The storm did kill connections: the run measured what it says it did.
    assert int(rows[3][2]) > 0, rows


@pytest.mark.slow
def test_the_checkout_capacity_program_steps_up_every_client_count() -> None:
    done = _run_program("bench.checkout_capacity", "--quick")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    lines = done.stdout.splitlines()
    # Each of the two client counts tried both quick steps (a failed step is a verdict too).
    assert sum(line.strip().startswith("25/s: p99") for line in lines) == 2, done.stdout
    rows = [line.split(" | ") for line in lines if line.startswith("| ")]
    assert [row[0] for row in rows] == ["| clients", "| ---", "| 16", "| 64"]
    assert all(
        float(cell.strip(" |").replace(",", "")) >= 0 for row in rows[2:] for cell in row[1:]
    )


@pytest.mark.slow
def test_the_checkout_latency_program_runs_quick_and_prints_every_configuration() -> None:
    done = _run_program("bench.checkout_latency", "--quick")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [row for row in map(str.split, done.stdout.splitlines()) if len(row) == 6]
    measured = [(row[0], row[1]) for row in rows if row[1] in ("queued", "inline")]
    assert measured == [
        ("memory", "queued"),
        ("memory", "inline"),
        ("postgres", "queued"),
        ("postgres", "inline"),
    ], done.stdout
    # 16 clients, 2 queued or 1 inline checkouts each: every one was timed.
    assert [int(row[2]) for row in rows if row[1] == "queued"] == [32, 32]
    assert [int(row[2]) for row in rows if row[1] == "inline"] == [16, 16]
    assert sum("inline/queued p99" in line for line in done.stdout.splitlines()) == 2


@pytest.mark.slow
def test_the_pause_claim_program_times_every_claim_variant() -> None:
    done = _run_program("bench.pause_claim", "--quick", "--rows", "2000")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert len(rows) == 4
    assert all(row.endswith(" us |") for row in rows), rows


@pytest.mark.slow
def test_the_ops_page_program_times_every_page() -> None:
    done = _run_program("bench.ops_page", "--quick")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[2:]] == [
        "| overview /ops/",
        "| live part /ops/live",
        "| search order_id=123",
        "| a finished job's page",
    ]


def test_the_history_search_program_times_every_search_quick() -> None:
    done = _run_program("bench.history_search", "--quick", "--queries", "5", "--pending")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [row[0] for row in rows[2:7]] == [
        "| argument (order_id=N)",
        "| id",
        "| type, last hour",
        "| state dead",
        "| newest 50, no filter",
    ]
    assert all(float(row[1]) >= 0 for row in rows[2:7]), rows
    # Then a search after each 1,000 rows added, 12 times.
    assert [row[0] for row in rows[9:]] == [f"| {n:,}" for n in range(1_000, 12_001, 1_000)]


def test_the_history_ack_cost_program_acks_every_job_in_each_variant() -> None:
    # The program itself fails unless each variant acked every job and kept its finished rows.
    done = _run_program("bench.history_ack_cost", "--quick")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [row[0] for row in rows[2:]] == [
        "| no history",
        "| history (shipped)",
        "| history, random ids",
        "| history, random ids, body parsed per use",
        "| history, no id index",
        "| history, no argument index",
        "| history, no type index",
        "| history, argument index without a pending list",
        "| history row, no index",
        "| 7-column row, no index",
        "| 7-column row, id index only",
        "| history, BRIN on finished_at for the type index",
        "| history, hash index for the id index",
        "| history, id and type indexes in the C collation",
        "| history, body not parsed (no arguments kept)",
        "| finished rows kept in jobs (River's way), no job_history",
        "| history into an unindexed time slice (a partition)",
    ]
    assert all(float(row[2]) > 0 for row in rows[2:]), rows
    # The pending-list merge and the sum with the ack (CPU ticks: 1,000 jobs may take none).
    assert all(float(row[5]) >= 0 for row in rows[2:]), rows
    assert all(
        abs(float(row[6].removesuffix(" |")) - float(row[3]) - float(row[5])) < 0.15
        for row in rows[2:]
    ), rows


def test_the_history_slices_program_prints_the_ack_the_build_and_each_search() -> None:
    # The acks run through history_ack_cost's harness, which fails unless every job was acked.
    done = _run_program("bench.history_slices", "--quick")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [row[0] for row in rows] == [
        *("| layout", "| ---", "| history (shipped), its GIN pending list merged"),
        "| unindexed slice, built at close",
        *("| layout", "| ---", "| open slice, 5,000 rows, no index"),
        "| 5 closed slices of 5,000 rows",
    ]
    # Every search took some time (the CPU figures may round to a tick's 10 ms).
    searches = [(row[1], row[2].removesuffix(" |")) for row in rows[6:]]
    assert all(float(cell) > 0 for cells in searches for cell in cells), rows


@pytest.mark.slow
def test_the_history_soak_program_reports_sizes_and_keeps_up() -> None:
    args = ("--seconds", "6", "--rate", "200", "--retention", "2", "--report", "3")
    done = _run_program("bench.history_soak", *args, "--prune-every", "1")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [row[0] for row in rows[:2]] == ["| t (s)", "| ---"]
    assert len(rows) >= 3, done.stdout
    assert "indexes at the end: ix_job_history_args" in done.stdout


@pytest.mark.slow
def test_the_sqs_cap_cost_program_runs_quick_and_prints_each_variant() -> None:
    done = _run_program("bench.sqs_cap_cost", "--quick")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    rows = [line.split(" | ")[0] for line in done.stdout.splitlines() if line.startswith("| ")]
    never_full = "| cap in use, never full (type:noop=1000)"
    # The drains, the ledger's start of a batch without and with a cap, then the plain start's
    # statement as shipped and before its stray check.
    other_type = "| a cap on another type only (type:mail=2)"
    assert rows[2:6] == ["| no cap", never_full, "| cap of 10 (type:noop=10)", other_type]
    assert rows[8:10] == ["| no cap", never_full]
    assert rows[12:] == [
        "| plain start statement, as shipped",
        "| plain start statement, before the stray check",
    ]
