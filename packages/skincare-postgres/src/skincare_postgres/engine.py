"""An async engine with the timeouts that turn a dead database into an error, not a hang.

SQLAlchemy earns its place here as the connection pool (and the unit of work's transaction on a
pooled connection); the statements themselves run on psycopg (see `execution.py`).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine


def create_engine(
    url: str | URL,
    *,
    connect_timeout: timedelta = timedelta(seconds=5),
    statement_timeout: timedelta = timedelta(seconds=30),
    pool_size: int = 10,
    **kwargs: object,
) -> AsyncEngine:
    """An AsyncEngine on psycopg 3 whose connections time out connecting and per statement."""
    # libpq's connect_timeout is whole seconds; 0 would mean "wait forever".
    seconds = max(1, round(connect_timeout.total_seconds()))
    millis = max(1, int(statement_timeout.total_seconds() * 1000))
    return create_async_engine(
        async_url(url),
        connect_args={"connect_timeout": seconds, "options": f"-c statement_timeout={millis}"},
        pool_size=pool_size,
        **kwargs,
    )


def async_url(url: str | URL) -> URL:
    """`url` with the psycopg driver, whatever postgres scheme it came with."""
    parsed = make_url(url)
    return parsed.set(drivername="postgresql+psycopg")


def libpq_conninfo(url: str | URL) -> str:
    """A SQLAlchemy URL as a libpq connection string (for plain psycopg connections)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
