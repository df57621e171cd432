"""Runs a scenario: every variant 3 times in alternation, a fresh database each, then reports."""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
from attrs import field, frozen

from bench.compare import report
from bench.compare.server import BenchServer, bench_server
from bench.compare.systems import MODULES, Received, System, Variant

RESULTS = Path(__file__).resolve().parents[1] / "results"
PACKAGES = (
    "skincare-core",
    "skincare-postgres",
    "skincare-sqs",
    "pgqueuer",
    "procrastinate",
    "asyncpg",
    "psycopg",
)
RunOne = Callable[[Variant, str, BenchServer], Awaitable[dict[str, float]]]


@frozen
class Scenario:
    """What one program measures: its variants, one run of a variant, and the table's columns."""

    name: str
    title: str
    variants: Sequence[Variant]
    run: RunOne
    metrics: Sequence[report.Metric]
    ratios: Sequence[report.Ratio] = ()
    params: Mapping[str, Any] = field(factory=dict)
    reps: int = 3
    quick_reps: int = 2


class Meter:
    """Wall time, this process's CPU (self + children) and the server's CPU since start."""

    def __init__(self, server: BenchServer) -> None:
        self._server = server
        self._wall = time.perf_counter()
        self._cpu = _process_cpu()
        self._server_cpu = server.cpu_seconds()

    def read(self) -> dict[str, float]:
        """wall_s, cpu_s and, for an embedded server, server_cpu_s."""
        result = {"wall_s": time.perf_counter() - self._wall, "cpu_s": _process_cpu() - self._cpu}
        server_cpu = self._server.cpu_seconds()
        if server_cpu is not None and self._server_cpu is not None:
            result["server_cpu_s"] = server_cpu - self._server_cpu
        return result


def throughput(jobs: int, measured: Mapping[str, float]) -> dict[str, float]:
    """jobs/s, jobs per worker CPU-s and jobs per CPU-s of worker + server."""
    result = dict(measured)
    result["jobs_per_s"] = jobs / measured["wall_s"]
    result["jobs_per_cpu_s"] = jobs / max(measured["cpu_s"], 1e-9)
    if "server_cpu_s" in measured:
        total = measured["cpu_s"] + measured["server_cpu_s"]
        result["jobs_per_total_cpu_s"] = jobs / max(total, 1e-9)
    return result


class Countdown:
    """A no-op handler that counts calls and sets `done` at the `target`-th."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.count = 0
        self.done = anyio.Event()

    async def __call__(self, payload: Received) -> None:
        self.count += 1
        if self.count >= self.target:
            self.done.set()


def available(variants: Sequence[Variant]) -> list[Variant]:
    """The variants whose system imports here; a missing one is named on stderr, not hidden."""
    usable = []
    for variant in variants:
        try:
            importlib.import_module(MODULES[variant.system])
        except ImportError as exc:
            print(f"not measured: {variant.label}: {exc}", file=sys.stderr)
            continue
        usable.append(variant)
    return usable


async def pre_enqueue(system: System, jobs: int, chunk: int = 1000) -> None:
    """Enqueue `jobs` no-op jobs before the clock starts (setup, not measured)."""
    for start in range(0, jobs, chunk):
        await system.enqueue([{"n": str(i)} for i in range(start, min(jobs, start + chunk))])


async def wait_empty(system: System, poll: float = 0.002) -> None:
    """Return once the system reports no job left (the last ack committed)."""
    # Polling is the only view of another system's commits; it starts after the last handler.
    while await system.remaining():  # noqa: ASYNC110
        await anyio.sleep(poll)


def main(
    build: Callable[[argparse.Namespace], Scenario], flags: Mapping[str, str] | None = None
) -> None:
    """The command line of every program: --quick, --reps, --out, and a program's own on/off
    `flags` (name -> help)."""
    parser = argparse.ArgumentParser()
    for flag, help_text in (flags or {}).items():
        parser.add_argument(f"--{flag}", action="store_true", help=help_text)
    parser.add_argument("--quick", action="store_true", help="a small version, under a minute")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 3)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for the JSON")
    args = parser.parse_args()
    scenario = build(args)
    reps = args.reps or (scenario.quick_reps if args.quick else scenario.reps)
    document = anyio.run(_run_all, scenario, reps, args.quick)
    loads = [
        " / ".join(f"{x:.2f}" for x in document["machine"][k])
        for k in ("load_before", "load_after")
    ]
    print(f"\nload average (1/5/15 min) before: {loads[0]}, after: {loads[1]}")
    print(f"\n## {scenario.title}{' (--quick)' if args.quick else ''}\n")
    print(report.table(document["summary"], scenario.metrics))
    if document["ratios"]:
        print("\n" + report.ratio_lines(document["ratios"]))
    path = args.out / f"{scenario.name}{'-quick' if args.quick else ''}.json"
    report.write_json(path, document)
    print(f"\nresults: {path}")


async def _run_all(scenario: Scenario, reps: int, quick: bool) -> dict[str, Any]:
    runs: dict[str, list[dict[str, float]]] = {v.label: [] for v in scenario.variants}
    with bench_server() as server:
        machine = await _machine(server)
        # The machine is shared: the load average says how much else ran beside the runs.
        machine["load_before"] = os.getloadavg()
        for rep in range(reps):
            # Every other rep runs the variants in reverse: none always follows the same one.
            order = scenario.variants if rep % 2 == 0 else scenario.variants[::-1]
            for variant in order:
                gc.collect()
                async with server.fresh_database(scenario.name) as url:
                    result = await scenario.run(variant, url, server)
                runs[variant.label].append(result)
                print(f"rep {rep + 1}/{reps} {variant.label}: {_brief(result)}", flush=True)
        machine["load_after"] = os.getloadavg()
    summary = report.summarize(runs)
    return {
        "scenario": scenario.name,
        "title": scenario.title,
        "quick": quick,
        "reps": reps,
        "params": dict(scenario.params),
        "variants": [_describe(v) for v in scenario.variants],
        "machine": machine,
        "runs": runs,
        "summary": summary,
        "ratios": report.ratios(summary, scenario.ratios, runs),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


async def _machine(server: BenchServer) -> dict[str, Any]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return {
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "postgresql": await server.version(),
        "embedded_server": server.data_dir is not None,
        "commit": _commit(),
        "versions": versions,
    }


def _describe(variant: Variant) -> dict[str, Any]:
    return {
        "label": variant.label,
        "system": variant.system,
        "batch": variant.batch,
        "concurrency": variant.concurrency,
        "options": dict(variant.options),
    }


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=RESULTS.parent,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"


def _process_cpu() -> float:
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def _brief(result: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:,.4g}" for k, v in sorted(result.items()))
