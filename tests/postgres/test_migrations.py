"""The shipped migrations: up from empty, down to base, up again, and no drift from the metadata."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from skincare_postgres import downgrade, metadata, upgrade

_STRICT = {"compare_type": True, "compare_server_default": True}


def _state(url: str) -> tuple[set[str], list[object]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            diff = compare_metadata(MigrationContext.configure(conn, opts=_STRICT), metadata)
    finally:
        engine.dispose()
    return tables, diff


@pytest.mark.slow
def test_upgrade_downgrade_upgrade_matches_the_metadata(new_database: Callable[[], str]) -> None:
    url = new_database()
    expected = {table.name for table in metadata.sorted_tables}

    upgrade(url)
    tables, diff = _state(url)
    assert tables == expected | {"alembic_version"}
    assert diff == []

    downgrade(url)
    assert _state(url)[0] == {"alembic_version"}

    upgrade(url)
    tables, diff = _state(url)
    assert tables == expected | {"alembic_version"}
    assert diff == []
