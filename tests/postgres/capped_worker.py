"""A worker process for the cap test: runs `capped` jobs of 200 ms under a cap for a while.

Usage: python -m tests.postgres.capped_worker URL OUT CAPS SECONDS, CAPS as
SKINCARE_CONCURRENCY_CAPS reads it. Each job's start and end times (time.time()) go to OUT,
one job a line.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio

from skincare_core.jobs import Job, Router, Worker
from skincare_postgres import create_engine, postgres_backend
from skincare_services.setting_values import parse_concurrency_caps

WORK = 0.2


async def _main(url: str, out: Path, caps: str, seconds: float) -> None:
    engine = create_engine(url)

    async def handle(_job: Job) -> None:
        started = time.time()
        await anyio.sleep(WORK)
        with out.open("a") as file:
            file.write(f"{started} {time.time()}\n")

    router = Router()
    router.register("capped", handle)
    try:
        async with postgres_backend(engine, caps=parse_concurrency_caps(caps)) as backend:
            worker = Worker(queue=backend.queue(), router=router, concurrency=4)
            with anyio.move_on_after(seconds):
                await worker.run()
    finally:
        await engine.dispose()


if __name__ == "__main__":
    url, out, caps, seconds = sys.argv[1:5]
    anyio.run(_main, url, Path(out), caps, float(seconds))
