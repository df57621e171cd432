"""Apply the migrations shipped in this package; no alembic.ini is needed on disk."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alembic.config import Config

SCRIPT_LOCATION = Path(__file__).with_name("alembic")


def alembic_config(url: str) -> Config:
    """An Alembic config for `url` (a `postgresql+psycopg://` URL) and the shipped scripts."""
    # Alembic loads only when migrations run, not in every process that imports this package.
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    config.attributes["url"] = _sync_url(url)
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database at `url` up to `revision`; blocking (from async code use a thread)."""
    from alembic import command

    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    """Migrate the database at `url` down to `revision`; blocking."""
    from alembic import command

    command.downgrade(alembic_config(url), revision)


def _sync_url(url: str) -> str:
    # The async dialect name is not a sync driver; plain psycopg serves both.
    return url.replace("postgresql+psycopg_async://", "postgresql+psycopg://", 1)
