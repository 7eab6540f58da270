"""The few JavaScript semantics OpenClaw's numbers and strings depend on, reproduced exactly.

OpenClaw computes in JS: ``Math.round`` and ``Number.prototype.toFixed`` round ties up (Python rounds half to even),
``String.length`` counts UTF-16 code units (Python counts code points), and ``String.prototype.localeCompare`` orders
by ICU's root collation (Python compares code points). A byte-identical MEMORY.md and an identical promotion order need
all four.

``localeCompare`` uses PyICU's root collator when the ``icu`` extra is installed. Without it a fallback key orders as
ICU's root collation does for what recall keys and note paths hold (ASCII letters, digits and path punctuation:
punctuation before digits before letters, case a tertiary difference, lowercase first); other scripts fall back to code
points after that, which is the remaining difference.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from typing import Any

__all__ = ["js_round", "locale_compare_key", "to_fixed", "utf16_len", "utf16_truncate"]


def js_round(value: float) -> int:
    """Return ``Math.round(value)``: the nearest integer, ties toward +infinity (``2.5 -> 3``, ``-2.5 -> -2``)."""
    floor = math.floor(value)
    return int(floor + 1 if value - floor >= 0.5 else floor)


def to_fixed(value: float, digits: int) -> str:
    """Return ``value.toFixed(digits)``: the exact binary value rounded half away from zero (``0.0625 -> '0.063'``)."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    # ``-0`` prints without its sign in JS, but a negative value that rounds to zero keeps it ("-0.000").
    return str(Decimal(value or 0.0).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def utf16_len(text: str) -> int:
    """Return JS ``text.length``: UTF-16 code units (a character outside the BMP counts two)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def utf16_truncate(text: str, limit: int) -> str:
    """Return the longest prefix of ``text`` within ``limit`` UTF-16 code units, never splitting a surrogate pair."""
    if len(text) * 2 <= limit:
        return text
    units = 0
    for index, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return text[:index]
    return text


# ICU root collation's order of ASCII punctuation and symbols (CLDR root, "non-ignorable"): all of them sort before
# digits, digits before letters.
_ASCII_SYMBOL_ORDER = "\t\n\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_SYMBOL_RANK = {ch: i for i, ch in enumerate(_ASCII_SYMBOL_ORDER)}


def _fallback_key(text: str) -> tuple[tuple[tuple[int, str], ...], tuple[str, ...], tuple[int, ...]]:
    primary: list[tuple[int, str]] = []
    secondary: list[str] = []
    tertiary: list[int] = []
    for ch in text:
        decomposed = unicodedata.normalize("NFKD", ch)
        base = "".join(c for c in decomposed if not unicodedata.combining(c)) or ch
        folded = base.lower()
        if ch in _SYMBOL_RANK:
            primary.append((0, chr(_SYMBOL_RANK[ch])))
        elif folded.isdigit():
            primary.append((1, str(unicodedata.digit(folded[0], 0))))
        elif folded.isalpha():
            primary.append((2, folded))
        else:
            primary.append((3, folded))
        secondary.append("".join(c for c in decomposed if unicodedata.combining(c)))
        tertiary.append(1 if ch != ch.lower() else 0)
    return tuple(primary), tuple(secondary), tuple(tertiary)


@cache
def _collator_key() -> Callable[[str], Any]:
    try:
        import icu
    except ImportError:
        return _fallback_key
    collator = icu.Collator.createInstance(icu.Locale.getRoot())
    return collator.getSortKey  # type: ignore[no-any-return]


def locale_compare_key(text: str) -> Any:  # ICU's bytes or the fallback's tuples, never mixed
    """Return a sort key that orders strings as JS ``a.localeCompare(b)`` does (ICU root collation)."""
    return _collator_key()(text)
