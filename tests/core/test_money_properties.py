"""format_rupiah: `Rp` and the digits grouped by dots, for every integer."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.shop.money import format_rupiah

GROUPED = re.compile(r"-?Rp \d{1,3}(\.\d{3})*")


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (0, "Rp 0"),
        (999, "Rp 999"),
        (1_000, "Rp 1.000"),
        (1_250_000, "Rp 1.250.000"),
        (-15_000, "-Rp 15.000"),
    ],
)
def test_known_amounts(amount: int, text: str) -> None:
    assert format_rupiah(amount) == text


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_digits_round_trip_with_a_dot_every_three(amount: int) -> None:
    text = format_rupiah(amount)
    assert GROUPED.fullmatch(text)
    digits = text.removeprefix("-").removeprefix("Rp ").replace(".", "")
    assert int(digits) * (-1 if text.startswith("-") else 1) == amount
    assert digits == str(abs(amount))
