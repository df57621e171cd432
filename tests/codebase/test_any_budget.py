"""The packages and services say what their values are: `Any` stays under its budget."""

from __future__ import annotations

from tests.codebase.any_count import any_uses, counts

BUDGET = 20


def test_any_in_packages_and_services_stays_under_the_budget() -> None:
    found = counts()
    assert sum(found.values()) < BUDGET, dict(found)


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
