"""The few JavaScript semantics OpenClaw's numbers and strings depend on, reproduced exactly.

OpenClaw computes in JS: ``Math.round`` and ``Number.prototype.toFixed`` round ties up (Python rounds half to even),
``String.length`` counts UTF-16 code units (Python counts code points), and ``String.prototype.localeCompare`` orders
by ICU's root collation (Python compares code points). A byte-identical MEMORY.md and an identical promotion order need
all four.

OpenClaw's readers also lean on ``String.prototype.trim`` and JS regex whitespace (not Python's set), ``Number(x)`` (a
JSON ``"3"``, ``null`` or ``[5]`` is a number to it) and ``Date.parse``.

``localeCompare`` uses PyICU's root collator when the ``icu`` extra is installed. Without it a fallback key orders as
ICU's root collation does for what recall keys and note paths hold (ASCII letters, digits and path punctuation:
punctuation before digits before letters, case a tertiary difference, lowercase first); other scripts fall back to code
points after that, which is the remaining difference.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from typing import Any

__all__ = [
    "JS_WHITESPACE",
    "js_collapse_whitespace",
    "js_date_parse_ms",
    "js_number",
    "js_number_text",
    "js_round",
    "js_trim",
    "js_trim_end",
    "locale_compare_key",
    "to_fixed",
    "utf16_len",
    "utf16_truncate",
]


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


def js_number_text(value: float) -> str:
    """Return ``String(value)`` for a number: the shortest round-trip digits, in JS's plain or exponent form.

    JS prints an integral value below 1e21 as an integer (``2.0 -> '2'``), a magnitude from 1e-6 up to 1e21 in plain
    decimals and anything else as ``d.ddde+N`` (``1e-7``, ``1.5e+21``).
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**21:
        return str(value)
    number = float(value)
    if not math.isfinite(number):
        return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")
    if number == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(number)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exponent)  # JS's n: the decimal point sits after n digits
    if len(text) <= point <= 21:
        body = text + "0" * (point - len(text))
    elif 0 < point <= 21:
        body = f"{text[:point]}.{text[point:]}"
    elif -6 < point <= 0:
        body = f"0.{'0' * -point}{text}"
    else:
        mantissa = text[0] + (f".{text[1:]}" if len(text) > 1 else "")
        body = f"{mantissa}e{'+' if point - 1 >= 0 else '-'}{abs(point - 1)}"
    return ("-" if sign else "") + body


def utf16_len(text: str) -> int:
    """Return JS ``text.length``: UTF-16 code units (a character outside the BMP counts two)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_truncate(text: str, limit: int) -> str:
    """Return the longest prefix of ``text`` within ``limit`` UTF-16 code units, never splitting a surrogate pair."""
    if len(text) * 2 <= limit:
        return text
    if text.isascii() or max(text) <= "\uffff":
        return text[:limit]
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


JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""JS ``\\s`` and ``trim()``'s set, as a character-class body: Python's differs (it adds U+001C-U+001F and U+0085 and
lacks U+FEFF)."""
_WS_RUN = re.compile(f"[{JS_WHITESPACE}]+")
_WS_CHARS = frozenset("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | frozenset(
    map(chr, range(0x2000, 0x200B))
)
_WS_LEFT = re.compile(f"^[{JS_WHITESPACE}]+")
_WS_RIGHT = re.compile(f"[{JS_WHITESPACE}]+\\Z")


def js_trim(text: str) -> str:
    """Return ``text.trim()``."""
    if text[:1] not in _WS_CHARS and text[-1:] not in _WS_CHARS:
        return text
    return _WS_RIGHT.sub("", _WS_LEFT.sub("", text))


def js_trim_end(text: str) -> str:
    """Return ``text.trimEnd()``."""
    return _WS_RIGHT.sub("", text)


_NOT_COLLAPSED = re.compile(f"[{JS_WHITESPACE.replace(' ', '')}]|  ")


def js_collapse_whitespace(text: str) -> str:
    """Return ``text`` trimmed, each whitespace run one space (JS whitespace): OpenClaw's ``normalizeSnippet``."""
    # Most snippets are stored collapsed already; telling so is cheaper than rewriting them.
    # Without a run and without whitespace other than " ", only a single space at either end can go.
    if text.isascii():
        if not ("  " in text or "\n" in text or "\t" in text or "\r" in text or "\v" in text or "\f" in text):
            return text if text[:1] != " " and text[-1:] != " " else text.strip(" ")
        # Python splits ASCII text on JS's ASCII whitespace plus U+001C-U+001F, which JS keeps.
        if not ("\x1c" in text or "\x1d" in text or "\x1e" in text or "\x1f" in text):
            return " ".join(text.split())
    elif _NOT_COLLAPSED.search(text) is None:
        return text if text[:1] != " " and text[-1:] != " " else text.strip(" ")
    # Every run is one space after the substitution, so stripping spaces is the trim.
    return _WS_RUN.sub(" ", text).strip(" ")


_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_RADIX = re.compile(r"0(?:[xX](?P<x>[0-9a-fA-F]+)|[oO](?P<o>[0-7]+)|[bB](?P<b>[01]+))")


def _string_to_number(text: str) -> float:
    body = js_trim(text)
    if not body:
        return 0.0
    if _DECIMAL.fullmatch(body):
        return float(body.replace("Infinity", "inf"))
    radix = _RADIX.fullmatch(body)
    if radix:
        digits, base = next((v, b) for v, b in zip(radix.groups(), (16, 8, 2), strict=True) if v)
        return float(int(digits, base))
    return math.nan


def _js_string(value: object) -> str | None:
    # ``String(value)`` where a number would come back from ``Number()`` unchanged; None for "[object Object]".
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ",".join(s if (s := _js_string(v)) is not None else "[object Object]" for v in value)
    return None


def js_number(value: object) -> float:
    """Return JS ``Number(value)`` for a value parsed from JSON (``None`` is ``null``, 0; a missing field is NaN).

    ``true`` is 1, ``"3"`` is 3, ``" 0x10 "`` is 16, ``""`` and ``[]`` are 0, ``[5]`` is 5, an object is NaN.
    """
    if value is True or value is False:
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if value is None:
        return 0.0
    text = _js_string(value)
    return math.nan if text is None else _string_to_number(text)


# ES's date-time string format as V8 reads it: also lowercase ``t``/``z``, an offset without its colon, a day up to
# 31 in any month (it rolls over) and 24:00.
_ISO_DATE = re.compile(
    r"(?P<y>[+-][0-9]{6}|[0-9]{4})(?:-(?P<mo>[0-9]{2})(?:-(?P<d>[0-9]{2}))?)?"
    r"(?:[Tt](?P<h>[0-9]{2}):(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2})(?:\.(?P<f>[0-9]+))?)?)?"
    r"(?P<z>[Zz]|[+-][0-9]{2}:?[0-9]{2})?"
)
_SPACED_DATE = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2}) (?P<h>[0-9]{2}):(?P<mi>[0-9]{2})"
    r"(?::(?P<s>[0-9]{2})(?:\.(?P<f>[0-9]+))?)?(?P<z>)"
)
_MAX_DATE_MS = 8.64e15


def _days_from_civil(year: int, month: int, day: int) -> int:
    # Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm; any year, no datetime limits).
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _canonical_iso_ms(text: str) -> float | None:
    # ``YYYY-MM-DDTHH:MM:SS.sssZ`` (how OpenClaw writes every timestamp), read without the general pattern.
    digits = text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19] + text[20:23]
    if not (text[4] == text[7] == "-" and text[10] == "T" and text[13] == text[16] == ":" and text[19] == "."):
        return None
    if not (digits.isascii() and digits.isdigit()):
        return None
    month, day = int(text[5:7]), int(text[8:10])
    hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 59):
        return None
    days = _days_from_civil(int(text[:4]), month, 1) + day - 1
    return float((days * 86_400 + (hour * 60 + minute) * 60 + second) * 1000 + int(text[20:23]))


def js_date_parse_ms(text: object) -> float | None:
    """Return ``Date.parse(text)`` in ms since the epoch, or None where JS gives NaN (or for a non-string).

    ISO forms are read as V8 reads them. A date-time without an offset is local time in JS; it is read as UTC here
    (OpenClaw writes every timestamp with ``Z``). Of V8's legacy formats only ``YYYY-MM-DD HH:MM[:SS]`` is read; the
    rest (``2026/04/01``, ``April 1, 2026``, ``"12"``) give None where V8 guesses a date.
    """
    return _parse_date(text) if isinstance(text, str) else None


@functools.lru_cache(maxsize=8192)
def _parse_date(text: str) -> float | None:
    # Stores repeat their timestamps (a night stamps many entries alike): each distinct one is parsed once.
    if len(text) == 24 and text[23] == "Z":
        fast = _canonical_iso_ms(text)
        if fast is not None:
            return fast
    match = _ISO_DATE.fullmatch(text) or _SPACED_DATE.fullmatch(text)
    if match is None or match["y"] == "-000000":
        return None
    year = int(match["y"])
    month, day = int(match["mo"] or 1), int(match["d"] or 1)
    hour, minute, second = int(match["h"] or 0), int(match["mi"] or 0), int(match["s"] or 0)
    millis = int((match["f"] or "0")[:3].ljust(3, "0"))
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute <= 59 and second <= 59):
        return None
    if hour > 24 or (hour == 24 and (minute or second or millis)):
        return None
    offset = 0
    zone = match["z"]
    if zone and zone not in "Zz":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        zone_h, zone_m = int(digits[:2]), int(digits[2:])
        if zone_h > 23 or zone_m > 59:
            return None
        offset = sign * (zone_h * 60 + zone_m) * 60_000
    ms = (_days_from_civil(year, month, 1) + day - 1) * 86_400_000
    ms += ((hour * 60 + minute) * 60 + second) * 1000 + millis - offset
    return float(ms) if abs(ms) <= _MAX_DATE_MS else None
