"""JavaScript's rounding, string lengths and collation, as OpenClaw's numbers and orders depend on them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreaming.memory.recall._js import (
    JS_WHITESPACE,
    _fallback_key,
    js_collapse_whitespace,
    js_number_text,
    js_round,
    locale_compare_key,
    to_fixed,
    utf16_len,
    utf16_truncate,
)


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (0.0625, 3, "0.063"),  # an exact tie: JS rounds up, Python's format would give 0.062
        (0.8125, 3, "0.813"),
        (0.1235, 3, "0.123"),  # not a tie: the double is just below 0.1235
        (1.0005, 3, "1.000"),  # likewise below
        (2.5, 0, "3"),
        (0.0, 3, "0.000"),
        (-0.0, 3, "0.000"),  # -0 prints unsigned
        (-0.0001, 3, "-0.000"),  # a negative that rounds to zero keeps its sign
        (-0.0625, 3, "-0.063"),
    ],
)
def test_to_fixed_matches_js(value: float, digits: int, expected: str) -> None:
    assert to_fixed(value, digits) == expected


@pytest.mark.parametrize(
    ("value", "expected"), [(6.5, 7), (6.49, 6), (-2.5, -2), (-2.51, -3), (0.49999999999999994, 0), (7.0, 7)]
)
def test_js_round_ties_toward_positive_infinity(value: float, expected: int) -> None:
    assert js_round(value) == expected


def test_utf16_lengths_count_astral_characters_twice() -> None:
    assert utf16_len("a😀") == 3
    assert utf16_truncate("ab😀c", 3) == "ab"  # the pair is never split
    assert utf16_truncate("ab😀c", 4) == "ab😀"
    assert utf16_truncate("abc", 10) == "abc"


_PATHISH = st.text(alphabet="abAB019-_./: é", max_size=12)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PATHISH, min_size=2, max_size=6))
def test_fallback_collation_orders_paths_as_icu_does(items: list[str]) -> None:
    icu = pytest.importorskip("icu")  # the dev install has the icu extra, so CI runs this
    collator = icu.Collator.createInstance(icu.Locale.getRoot())
    # Compare orders of distinct ICU keys only: strings ICU finds equal may come in either order.
    by_icu = sorted(set(items), key=collator.getSortKey)
    keys = [collator.getSortKey(s) for s in by_icu]
    if len(set(keys)) == len(keys):
        assert sorted(by_icu, key=_fallback_key) == by_icu


def test_locale_compare_key_sorts_punctuation_digits_letters_lowercase_first() -> None:
    paths = ["memory/b.md", "memory/B.md", "memory/a.md", "memory/a-1.md", "memory/2026.md", "memory/a_1.md"]
    expected = ["memory/2026.md", "memory/a_1.md", "memory/a-1.md", "memory/a.md", "memory/b.md", "memory/B.md"]
    assert sorted(paths, key=locale_compare_key) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2, "2"), (2.0, "2"), (2.7, "2.7"), (0, "0"), (-0.0, "0"), (-3.25, "-3.25"), (0.1, "0.1"),
        (1e-6, "0.000001"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (0.00001, "0.00001"),  # Python: 1e-05
        (1e21, "1e+21"), (123456789012345678901.0, "123456789012345680000"), (10**22, "1e+22"),
    ],
)  # fmt: skip
def test_number_text_is_what_string_of_a_number_gives_in_js(value: float, expected: str) -> None:
    """``String(x)``: how OpenClaw spells a hit's raw line numbers in a recall key (``:2.7:0``)."""
    assert js_number_text(value) == expected


_JS_RUN = re.compile(f"[{JS_WHITESPACE}]+")
_COLLAPSE_ALPHABET = st.sampled_from(
    [" ", " ", "a", "Z", "1", ".", "\t", "\n", "\r", "\v", "\f", "\x1c", "\x1f", "\x85", "\u00a0", "\u2028", "\ufeff",
     "\u3000", "é", "\U0001f600"]
)  # fmt: skip


@settings(max_examples=500, derandomize=True, database=None)
@given(st.lists(_COLLAPSE_ALPHABET, max_size=12).map("".join))
def test_collapsing_whitespace_is_one_space_per_js_whitespace_run_then_trim(text: str) -> None:
    assert js_collapse_whitespace(text) == _JS_RUN.sub(" ", text).strip(" ")
