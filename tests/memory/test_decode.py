"""``parse_json_bytes`` reads with msgspec first: the values, their types and every refusal are json's."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dreaming.memory._decode import NOT_UTF8, TOO_DEEP, check_json_text, parse_json_bytes, why_unparsable

FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _json_only(raw: bytes) -> Any:
    """``parse_json_bytes`` as it was before msgspec read first: json alone."""
    text = raw.decode("utf-8-sig")
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    check_json_text(raw, value)
    return value


def _outcome(parse: Any, raw: bytes) -> tuple[str, Any]:
    try:
        return "value", _typed(parse(raw))
    except ValueError as exc:
        return "refused", (why_unparsable(exc), str(exc))


def _typed(value: Any) -> Any:
    # Values with their types and order, NaN comparable: 1 == 1.0 == True must not pass for the same.
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def _same_as_json(raw: bytes) -> None:
    assert _outcome(parse_json_bytes, raw) == _outcome(_json_only, raw)


EDGES = [
    b'{"a": 1, "a": 2, "b": 3}',  # a repeated key: the last value, at the first one's place
    b"123456789012345678901234567890",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"1e400",
    b"-1e400",
    b"1e-400",
    b"NaN",
    b"[Infinity, -Infinity]",
    b"-0",
    b"-0.0",
    b"0.1",
    b"1E2",
    b"9007199254740993",
    b"2.4703282292062328e-324",
    b"1.0000000000000000000000000000001",
    b"01",
    b"+1",
    b".5",
    b"1.",
    b"[1,]",
    b'{"a": 1,}',
    b'"a\tb"',
    b'"a\x01b"',
    b'"\\u0000"',
    b'"\\ud800"',
    b'"\\udc00"',
    b'"a\\ud800"',
    b'"\\ud800\\u0041"',
    b'"\\ud800\\ud800"',
    b'"\\ud83d\\ude00"',
    b'"\\/"',
    b'"\xff"',
    b'"\xed\xa0\x80"',
    b'"\xc0\xaf"',
    b'"\xf4\x90\x80\x80"',
    b'"caf\xc3"',
    b"\xef\xbb\xbf[1]",
    b"\xef\xbb\xbf",
    b"",
    b"   ",
    b"[1] x",
    b"[1]\n\n",
    b"\r\n{}\t",
    b'"\xe2\x80\xa8"',
    b"[" * 5000 + b"]" * 5000,
    b"[" * 5000,
]


@pytest.mark.parametrize("raw", EDGES)
def test_an_edge_case_reads_or_is_refused_as_json_alone_would(raw: bytes) -> None:
    _same_as_json(raw)


def test_bytes_that_are_not_utf8_are_refused_as_such() -> None:
    for raw in (b'"\xff"', b'"\xed\xa0\x80"', b'{"\xc0\xaf": 1}'):
        with pytest.raises(ValueError) as caught:
            parse_json_bytes(raw)
        assert why_unparsable(caught.value) == NOT_UTF8


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
PIECES = st.sampled_from(
    [b"\xff", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xef\xbb\xbf", b"\x00", b"\\ud800", b"\\udfff",
     b"\\u", b"\\", b'"', b",", b":", b"[", b"}", b" ", b"e", b"-", b"0", b"1e999", b"NaN"]
)  # fmt: skip


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """A JSON document (ASCII or not, with NaN and infinities), sometimes with a few bytes inserted or overwritten."""
    value = draw(JSON_VALUES)
    data = bytearray(json.dumps(value, ensure_ascii=draw(st.booleans()), allow_nan=True).encode("utf-8", "replace"))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(data)))
        chunk = draw(st.one_of(PIECES, st.binary(min_size=1, max_size=4)))
        if draw(st.booleans()):
            data[at:at] = chunk
        else:
            data[at : at + len(chunk)] = chunk
    return bytes(data)


@FUZZ
@given(documents())
def test_any_document_reads_or_is_refused_as_json_alone_would(raw: bytes) -> None:
    _same_as_json(raw)


@FUZZ
@given(st.binary(max_size=200))
def test_any_bytes_read_or_are_refused_as_json_alone_would(raw: bytes) -> None:
    _same_as_json(raw)
