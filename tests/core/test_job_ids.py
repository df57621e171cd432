"""Job ids are UUIDv7s: unique, in the UUID layout, and ordered by the millisecond they were
made in, so the id indexes take new ids at their right end."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.jobs.job import new_job_id, time_ordered_id

MS = st.integers(min_value=0, max_value=(1 << 48) - 1)
ENTROPY = st.binary(min_size=10, max_size=10)


@given(unix_ms=MS, entropy=ENTROPY)
def test_an_id_is_a_uuid7_holding_its_millisecond(unix_ms: int, entropy: bytes) -> None:
    value = uuid.UUID(time_ordered_id(unix_ms, entropy))
    assert (value.version, value.variant) == (7, uuid.RFC_4122)
    assert value.int >> 80 == unix_ms


@given(earlier=MS, later=MS, a=ENTROPY, b=ENTROPY)
def test_an_id_of_a_later_millisecond_sorts_after(
    earlier: int, later: int, a: bytes, b: bytes
) -> None:
    if earlier == later:
        return
    first, second = sorted((earlier, later))
    assert time_ordered_id(first, a) < time_ordered_id(second, b)


@given(unix_ms=MS, a=ENTROPY, b=ENTROPY)
def test_ids_of_one_millisecond_differ_with_their_entropy(unix_ms: int, a: bytes, b: bytes) -> None:
    same = time_ordered_id(unix_ms, a) == time_ordered_id(unix_ms, b)
    # The 74 random bits are the first 74 of the entropy's 80.
    assert same == (int.from_bytes(a, "big") >> 6 == int.from_bytes(b, "big") >> 6)


def test_fresh_ids_are_unique_and_32_hex_digits() -> None:
    ids = [new_job_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


@pytest.mark.parametrize(("unix_ms", "entropy"), [(-1, bytes(10)), (1 << 48, bytes(10)), (0, b"x")])
def test_out_of_range_input_is_refused(unix_ms: int, entropy: bytes) -> None:
    with pytest.raises(ValueError, match="UUIDv7"):
        time_ordered_id(unix_ms, entropy)
