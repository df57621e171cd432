"""The packages and services say what their values are: no `Any` in them."""

from __future__ import annotations

from tests.codebase.any_count import any_uses, counts


def test_packages_and_services_use_no_any() -> None:
    found = counts()
    assert sum(found.values()) == 0, dict(found)


def test_the_count_sees_uses_not_words() -> None:
    source = '''
"""Any docstring mentioning Any."""
from typing import Any  # Any in a comment
import typing
Alias: TypeAlias = "dict[str, Any]"
def f(x: Any, y: "list[Any]") -> typing.Any:
    return cast(Any, x)
'''
    assert any_uses(source) == 5
