"""An async engine with the timeouts that turn a dead database into an error, not a hang.

The server enforces statement_timeout only on statements it receives: on a stalled network
(connections accepted, nothing answered) a statement or a commit would wait forever. So the
engine also carries a client-side deadline, statement timeout + connect timeout, which the
unit of work and `Autocommit` put around each statement (`client_deadline`), as the queue's
dedicated connections do.

SQLAlchemy earns its place here as the connection pool (and the unit of work's transaction on a
pooled connection); the statements themselves run on psycopg (see `execution.py`).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

# An execution option of our own: SQLAlchemy keeps it with the engine and every copy of it.
_DEADLINE_OPTION = "skincare_client_deadline"


def create_engine(
    url: str | URL,
    *,
    connect_timeout: timedelta = timedelta(seconds=5),
    statement_timeout: timedelta = timedelta(seconds=30),
    pool_size: int = 10,
    **kwargs: object,
) -> AsyncEngine:
    """An AsyncEngine on psycopg 3 whose connections time out connecting and per statement,
    on the server and on the client (`client_deadline`)."""
    # libpq's connect_timeout is whole seconds; 0 would mean "wait forever".
    seconds = max(1, round(connect_timeout.total_seconds()))
    millis = max(1, int(statement_timeout.total_seconds() * 1000))
    return create_async_engine(
        async_url(url),
        connect_args={"connect_timeout": seconds, "options": f"-c statement_timeout={millis}"},
        pool_size=pool_size,
        execution_options={_DEADLINE_OPTION: (statement_timeout + connect_timeout).total_seconds()},
        **kwargs,
    )


def client_deadline(engine: AsyncEngine) -> float | None:
    """Seconds after which the client gives up on a statement of `engine`'s pooled connections
    (None, no deadline, for an engine `create_engine` did not make)."""
    seconds = engine.get_execution_options().get(_DEADLINE_OPTION)
    return None if seconds is None else float(seconds)


def async_url(url: str | URL) -> URL:
    """`url` with the psycopg driver, whatever postgres scheme it came with."""
    parsed = make_url(url)
    return parsed.set(drivername="postgresql+psycopg")


def libpq_conninfo(url: str | URL) -> str:
    """A SQLAlchemy URL as a libpq connection string (for plain psycopg connections)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
