"""The documentation site builds with `mkdocs build --strict`: every page is in the nav, every
link and anchor resolves, every included file and section exists, and the API reference renders
the public names from their docstrings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once for the module's tests; a warning fails the build."""
    out = tmp_path_factory.mktemp("docs") / "site"
    config = ROOT / "mkdocs.yml"
    # The theme's notice about its successor is not a build warning; it is left out of the log.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return out


def test_the_site_builds_in_strict_mode(site: Path) -> None:
    assert (site / "index.html").is_file()


def test_the_home_page_includes_the_readme_sections(site: Path) -> None:
    home = (site / "index.html").read_text()
    assert "hexagonal library" in home
    assert "a scripted walkthrough" in home
    assert "skincare-postgres" in home
    assert "--8&lt;--" not in home


def test_the_architecture_page_includes_architecture_md(site: Path) -> None:
    page = (site / "architecture" / "index.html").read_text()
    assert "What may import what" in page


@pytest.mark.parametrize(
    ("page", "name"),
    [
        ("jobs", "skincare_core.jobs.Worker"),
        ("jobs", "skincare_core.jobs.enqueue"),
        ("ports", "skincare_core.jobs.ports.Queue.ack_many"),
        ("ports", "skincare_core.jobs.envelope.OutboxWriter"),
        ("testing", "skincare_core.testing.jobs.InMemoryQueue"),
        ("postgres", "skincare_postgres.postgres_backend"),
        ("sqs", "skincare_sqs.sqs_backend"),
    ],
)
def test_the_api_reference_renders_the_public_names(site: Path, page: str, name: str) -> None:
    html = (site / "reference" / page / "index.html").read_text()
    assert f'id="{name}"' in html
