"""The benchmarks' database: SKINCARE_BENCH_DATABASE_URL, or an embedded PostgreSQL."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from skincare_services.local import embedded_postgres


@contextmanager
def database_url() -> Iterator[str]:
    """The given URL, or a fresh embedded server in a temporary directory (removed after)."""
    if given := os.environ.get("SKINCARE_BENCH_DATABASE_URL"):
        yield given
        return
    with (
        tempfile.TemporaryDirectory(prefix="skincare-bench-") as tmp,
        embedded_postgres(Path(tmp), keep=True) as url,
    ):
        yield url
