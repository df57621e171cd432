"""Reading which constraint a psycopg integrity error names."""

from __future__ import annotations

import psycopg


def violated_constraint(error: psycopg.IntegrityError) -> str | None:
    """The name of the constraint the database reported, if any."""
    name = error.diag.constraint_name
    return name if isinstance(name, str) else None
