"""Alembic environment: runs the package's migrations on the URL `migrations.py` passes in."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from skincare_postgres.schema import metadata


def _run() -> None:
    url = context.config.attributes["url"]
    engine = create_engine(url, connect_args={"connect_timeout": 10})
    try:
        with engine.connect() as connection:
            context.configure(connection=connection, target_metadata=metadata)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


_run()
