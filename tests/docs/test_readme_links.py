"""The README's relative links name files of the repository, and their anchors headings there:
mkdocs checks the pages under docs/, not the README that links into them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_HEADING = re.compile(r"^#+ (?P<title>.+)$", re.M)
LINKS = [m["target"] for m in _LINK.finditer(README.read_text()) if "://" not in m["target"]]


def _anchor(title: str) -> str:
    """The id Python-Markdown's toc (and GitHub) gives a heading."""
    words = re.sub(r"[^\w\s-]", "", title.lower()).strip()
    return re.sub(r"[-\s]+", "-", words)


def test_the_readme_links_into_the_docs() -> None:
    assert any(link.startswith("docs/") for link in LINKS)


@pytest.mark.parametrize("link", LINKS)
def test_the_link_resolves(link: str) -> None:
    path, _, anchor = link.partition("#")
    target = ROOT / path
    assert target.is_file(), link
    if anchor:
        anchors = {_anchor(m["title"]) for m in _HEADING.finditer(target.read_text())}
        assert anchor in anchors, (link, sorted(anchors))
