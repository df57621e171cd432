"""The signature rule, property-tested: it verifies exactly the signed bytes and timestamp."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from skincare_http import sign_webhook, verify_signature
from skincare_http.errors import InvalidSignature

SECRET = "whsec-test"
stamps = st.integers(min_value=0, max_value=10**11)


@given(body=st.binary(max_size=512), stamp=stamps)
def test_a_signature_verifies_its_own_body_and_timestamp(body: bytes, stamp: int) -> None:
    assert verify_signature(SECRET, str(stamp), sign_webhook(SECRET, stamp, body), body) == stamp


@given(body=st.binary(min_size=1, max_size=512), stamp=stamps, data=st.data())
def test_any_changed_byte_fails(body: bytes, stamp: int, data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(body) - 1))
    flip = data.draw(st.integers(1, 255))
    altered = body[:index] + bytes([body[index] ^ flip]) + body[index + 1 :]

    with pytest.raises(InvalidSignature):
        verify_signature(SECRET, str(stamp), sign_webhook(SECRET, stamp, body), altered)


@given(body=st.binary(max_size=64), stamp=stamps, other=stamps)
def test_another_timestamp_fails(body: bytes, stamp: int, other: int) -> None:
    assume(other != stamp)
    signature = sign_webhook(SECRET, stamp, body)

    with pytest.raises(InvalidSignature):
        verify_signature(SECRET, str(other), signature, body)


def test_the_signature_is_hex_hmac_sha256_of_timestamp_dot_body() -> None:
    expected = hmac.new(SECRET.encode(), b"1700000000.{}", hashlib.sha256).hexdigest()

    assert sign_webhook(SECRET, 1_700_000_000, b"{}") == f"sha256={expected}"


@pytest.mark.parametrize(
    ("stamp", "signature"),
    [(None, "sha256=00"), ("1700000000", None), ("", "sha256=00"), ("-5", "sha256=00"),
     ("1.5", "sha256=00"), ("1700000000", "sha256=zz")],
)  # fmt: skip
def test_missing_or_malformed_headers_fail(stamp: str | None, signature: str | None) -> None:
    with pytest.raises(InvalidSignature):
        verify_signature(SECRET, stamp, signature, b"{}")
