"""An async engine with the timeouts that turn a dead database into an error, not a hang.

The server enforces statement_timeout only on statements it receives: on a stalled network
(connections accepted, nothing answered) a statement or a commit would wait forever. So the
engine also carries a client-side deadline, statement timeout + connect timeout, which the
unit of work and `Autocommit` put around each statement (`client_deadline`). The engine carries
the two timeouts themselves too (`engine_timeouts`): the queue's and the notifier's dedicated
connections take theirs from it, so one setting bounds every connection of a process.

SQLAlchemy earns its place here as the connection pool (and the unit of work's transaction on a
pooled connection); the statements themselves run on psycopg (see `execution.py`).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

DEFAULT_CONNECT_TIMEOUT = timedelta(seconds=5)
DEFAULT_STATEMENT_TIMEOUT = timedelta(seconds=30)
# An execution option of our own: SQLAlchemy keeps it with the engine and every copy of it.
_TIMEOUTS_OPTION = "skincare_timeouts"


def create_engine(
    url: str | URL,
    *,
    connect_timeout: timedelta = DEFAULT_CONNECT_TIMEOUT,
    statement_timeout: timedelta = DEFAULT_STATEMENT_TIMEOUT,
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
        execution_options={_TIMEOUTS_OPTION: (connect_timeout, statement_timeout)},
        **kwargs,
    )


def client_deadline(engine: AsyncEngine) -> float | None:
    """Seconds after which the client gives up on a statement of `engine`'s pooled connections
    (None, no deadline, for an engine `create_engine` did not make)."""
    timeouts = engine.get_execution_options().get(_TIMEOUTS_OPTION)
    return None if timeouts is None else sum(timeouts, timedelta()).total_seconds()


def engine_timeouts(
    engine: AsyncEngine, *, connect: timedelta | None = None, statement: timedelta | None = None
) -> tuple[timedelta, timedelta]:
    """The connect and statement timeouts for a connection opened beside `engine`'s pool:
    `connect` and `statement` where given, else those `create_engine` gave the engine (the
    defaults for an engine it did not make)."""
    own = engine.get_execution_options().get(_TIMEOUTS_OPTION)
    own_connect, own_statement = own or (DEFAULT_CONNECT_TIMEOUT, DEFAULT_STATEMENT_TIMEOUT)
    return (
        own_connect if connect is None else connect,
        own_statement if statement is None else statement,
    )


def async_url(url: str | URL) -> URL:
    """`url` with the psycopg driver, whatever postgres scheme it came with."""
    parsed = make_url(url)
    return parsed.set(drivername="postgresql+psycopg")


def libpq_conninfo(url: str | URL) -> str:
    """A SQLAlchemy URL as a libpq connection string (for plain psycopg connections)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
