"""Fixtures of the core tests."""

from __future__ import annotations

import pytest

from tests.core.core_kit import Shop, make_shop


@pytest.fixture
def shop() -> Shop:
    """A fresh in-memory shop."""
    return make_shop()
