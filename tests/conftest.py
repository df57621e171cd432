"""Shared test configuration: anyio runs on asyncio."""

import pytest


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"
