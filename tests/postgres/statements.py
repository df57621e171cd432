"""Plain SQL for the migration tests: statements run at a revision where no model fits yet."""

from __future__ import annotations

from sqlalchemy import create_engine, text


def run_sql(url: str, *statements: str) -> list[tuple[object, ...]]:
    """Run the statements in one transaction; the last one's rows."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            results = [conn.execute(text(sql)) for sql in statements]
            return [tuple(row) for row in results[-1]] if results[-1].returns_rows else []
    finally:
        engine.dispose()
