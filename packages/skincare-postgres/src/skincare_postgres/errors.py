"""Database failures named for what the caller can do about them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from sqlalchemy import exc as sa_exc

from skincare_core.jobs.errors import Unavailable

# Connection refused or lost, server shutting down or restarting, statement timeout, and no
# pooled connection free in time (SQLAlchemy's own TimeoutError, not the builtin one).
_UNAVAILABLE: tuple[type[BaseException], ...] = (
    sa_exc.TimeoutError,
    sa_exc.OperationalError,
    sa_exc.InterfaceError,
    sa_exc.DisconnectionError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    OSError,
    TimeoutError,
)


class DatabaseUnavailable(Unavailable):
    """The database cannot be reached or did not answer in time; retry later."""


def is_unavailable(error: BaseException) -> bool:
    """Whether `error` means the database is down, restarting or too slow."""
    return isinstance(error, _UNAVAILABLE)


@contextmanager
def unavailable_as_error() -> Iterator[None]:
    """Re-raise connection and timeout failures as DatabaseUnavailable."""
    try:
        yield
    except _UNAVAILABLE as error:
        raise DatabaseUnavailable(f"database unavailable: {error}") from error
