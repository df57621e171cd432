"""A worker process for the shared rate limit test: runs `mail` jobs under a limit for a while.

Usage: python -m tests.postgres.throttled_worker URL OUT PER_SECOND SECONDS. Each job's start
time goes to OUT, one a line.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio

from skincare_core.jobs import Job, RateLimit, Router, Throttle, Worker
from skincare_postgres import PostgresRateLimiter, create_engine, postgres_backend


async def _main(url: str, out: Path, per_second: int, seconds: float) -> None:
    engine = create_engine(url)

    async def handle(_job: Job) -> None:
        with out.open("a") as file:
            file.write(f"{time.time()}\n")

    router = Router()
    router.register("mail", handle)
    throttle = Throttle(PostgresRateLimiter(engine), RateLimit("default", per_second))
    try:
        async with postgres_backend(engine) as backend:
            worker = Worker(queue=backend.queue(), router=router, concurrency=4, throttle=throttle)
            with anyio.move_on_after(seconds):
                await worker.run()
    finally:
        await engine.dispose()


if __name__ == "__main__":
    url, out, per_second, seconds = sys.argv[1:5]
    anyio.run(_main, url, Path(out), int(per_second), float(seconds))
