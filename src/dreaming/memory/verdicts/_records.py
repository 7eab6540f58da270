"""The fields every verdict line shares, validated once for the review and light steps."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from dreaming.memory.verdicts._prices import parse_date

__all__ = [
    "FLAT_CAP_PCT",
    "K_FLAT",
    "SIZE_SATURATION",
    "VERDICTS",
    "WINDOWS",
    "VerdictKey",
    "check_verdict_line",
    "future_day",
    "future_message",
]

VERDICTS = ("BUY", "ACCUMULATE", "HOLD", "TRIM", "SELL")
WINDOWS = (7, 30)
"""The outcome windows, in calendar days. Others (for example 1d) are ignored: the seed's horizon illusion."""
K_FLAT = 1.0
"""A HOLD is a hit when the move stays under ``K_FLAT * atr_pct * sqrt(window)``: fixed, never learned (Goodhart)."""
FLAT_CAP_PCT = 8.0
"""The flat band never exceeds this many percent."""
SIZE_SATURATION = 10
"""The size term of the score reaches 1 at this many samples."""


VerdictKey = tuple[date, str, str, bool]
"""The validated core of a verdict line: decision date, asset (as written), verdict (upper-cased), macro_shock.

A plain tuple rather than a dataclass: a million of them are made per night.
"""


_CACHE_LIMIT = 100_000
_DATE_CACHE: dict[str, date | None] = {}
_VERDICT_CACHE: dict[str, str | None] = {}


def check_verdict_line(obj: dict[str, Any], today: date) -> VerdictKey | str:
    """Return the validated core of a verdict line, or a message saying why the line is refused."""
    raw_date = obj.get("decision_date")
    if type(raw_date) is not str:
        return "missing field 'decision_date'" if raw_date is None else "'decision_date' is not a string"
    day = _DATE_CACHE.get(raw_date, date.min)
    if day is date.min:
        day = parse_date(raw_date)
        if len(_DATE_CACHE) < _CACHE_LIMIT:
            _DATE_CACHE[raw_date] = day
    if day is None:
        return f"unreadable decision_date {raw_date!r}"
    if day > today:
        return future_message(day, today)
    asset = obj.get("asset")
    if type(asset) is not str or not asset.strip():
        return "missing field 'asset'" if asset is None else "'asset' is not a non-empty string"
    raw_verdict = obj.get("verdict")
    if type(raw_verdict) is not str:
        return "missing field 'verdict'" if raw_verdict is None else "'verdict' is not a string"
    verdict = _VERDICT_CACHE.get(raw_verdict, "")
    if verdict == "":
        upper = raw_verdict.strip().upper()
        verdict = upper if upper in VERDICTS else None
        if len(_VERDICT_CACHE) < _CACHE_LIMIT:
            _VERDICT_CACHE[raw_verdict] = verdict
    if verdict is None:
        return f"unknown verdict {raw_verdict!r} (expected one of {', '.join(VERDICTS)})"
    shock = obj.get("macro_shock", False)
    if shock is None:
        shock = False
    if type(shock) is not bool:
        return "'macro_shock' is not true or false"
    return (day, asset, verdict, shock)


_FUTURE = re.compile(r"decision_date (\d{4}-\d{2}-\d{2}) is after now \(\d{4}-\d{2}-\d{2}\)")


def future_message(day: date, today: date) -> str:
    """Return why a verdict dated ``day`` is refused on ``today``: it is dated after now."""
    return f"decision_date {day.isoformat()} is after now ({today.isoformat()})"


def future_day(reason: str) -> str | None:
    """Return the decision date (ISO) of a :func:`future_message`, or None for any other reason."""
    found = _FUTURE.fullmatch(reason)
    return None if found is None else found.group(1)
