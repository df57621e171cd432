"""The CLI prints text it did not write as one printable line, on any terminal encoding."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_services.cli.output import printable, say

# Any code point, lone surrogates and control characters included.
any_text = st.text(
    st.characters(exclude_categories=()) | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
)


@given(any_text)
def test_any_text_becomes_printable_and_printable_text_is_kept(text: str) -> None:
    shown = printable(text)
    assert shown.isprintable()
    if text.isprintable():
        assert shown == text


@pytest.mark.parametrize("encoding", ["utf-8", "ascii", "latin-1", "cp1252"])
@given(text=any_text)
def test_say_writes_one_line_of_any_text_in_any_encoding(encoding: str, text: str) -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding, newline="\n")
    say(text, stream)
    stream.flush()
    written = raw.getvalue().decode(encoding)
    assert written.endswith("\n")
    assert written[:-1].isprintable()


def test_escapes_read_as_python_writes_them() -> None:
    assert printable("a\x1b[31m\nb\ud800\u2028") == "a\\x1b[31m\\nb\\ud800\\u2028"
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    say("café", stream)
    stream.seek(0)
    assert stream.read() == "caf\\xe9\n"
