"""The review step: each committee verdict with what the market did next (``verdict_review.jsonl``)."""

from __future__ import annotations

import functools
import json
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from dreaming.memory.files import InputReport
from dreaming.memory.verdicts._handoff import ReviewedLines, hand_off, no_lines
from dreaming.memory.verdicts._prices import REGIMES, PriceBook, PriceSeries
from dreaming.memory.verdicts._records import VERDICTS, WINDOWS, check_verdict_line
from dreaming.memory.verdicts._stream import _CHUNK_LINES, AtomicLineWriter, bulk_objects, format_number, read_objects
from dreaming.memory.workspace import Workspace

__all__ = ["ReviewSummary", "review_verdicts"]

_COMPUTED = frozenset({"asset", "atr_pct", "base_close", "decision_date", "macro_shock", "outcomes", "verdict"})


@dataclass(frozen=True, kw_only=True, slots=True)
class ReviewSummary:
    """What the review step did."""

    source: str
    """``verdicts`` (reviewed), ``supplied`` (verdict_review.jsonl given, step skipped) or ``none``."""
    reviewed: int = 0
    """Verdict lines written to verdict_review.jsonl."""
    unreviewable: int = 0
    """Valid verdicts with no price file or no trading date on or before the decision date."""
    skipped: int = 0
    """Bad lines skipped (each reported with its line number), including future-dated ones."""
    future: int = 0
    """Of the skipped lines, those dated after now."""
    missing_prices: tuple[str, ...] = ()
    """Assets with verdicts but no usable price file, sorted."""
    changed: bool = False
    """Whether verdict_review.jsonl was rewritten."""


_WINDOW_ORDER = tuple(sorted(WINDOWS, key=lambda w: f"{w}d"))
"""The windows in the order json.dumps(sort_keys=True) writes their keys ("30d" before "7d")."""


_Pair = tuple[int, str, str, str, tuple[str, ...]]
"""A reviewable (asset, decision date): its index in the hand-off groups; the line's head up to and including the
``macro_shock`` value (false, then true), which is ``{`` and the fields before it; its ``, "outcomes": {...}`` text;
and its five rendered ``"key": value`` fields in key order (asset, atr_pct, base_close, decision_date, outcomes) for
the lines that :func:`_shape_template` renders."""
_Problem = str
_SHAPE_LIMIT = 10_000
_RENDERED_LIMIT = 100_000


def review_verdicts(ws: Workspace, *, now: datetime, report: InputReport) -> ReviewSummary:
    """Review every verdict in ``verdicts.jsonl`` against ``prices/`` and write ``verdict_review.jsonl`` atomically.

    When ``verdicts.jsonl`` is absent but ``verdict_review.jsonl`` exists, the file was supplied by the committee's
    own system: the step is skipped and the file left untouched (light sleep fills any missing ``atr_pct`` from
    ``prices/``). Bad lines and verdicts dated after ``now`` are skipped and reported in ``report``. The lines written
    are also handed off in memory to light sleep (see ``_handoff``).
    """
    with bulk_objects():
        return _review_verdicts(ws, now=now, report=report)


def _review_verdicts(ws: Workspace, *, now: datetime, report: InputReport) -> ReviewSummary:
    if not ws.verdicts.exists():
        return ReviewSummary(source="supplied" if ws.verdict_review.exists() else "none")
    label = ws.relative(ws.verdicts)
    today = now.date()
    first_count = report.count
    price_report = InputReport()
    book = PriceBook(ws.prices_dir, price_report, label_prefix=ws.relative(ws.prices_dir) + "/")
    reviewed = unreviewable = future = 0
    missing: set[str] = set()
    # Hot-loop caches, each keyed by raw values seen on the lines (a million lines repeat a few thousand values):
    # asset -> decision_date -> the pair, None (valid but unreviewable) or why the pair is refused (nested rather
    # than keyed by a (date, asset) tuple: no tuple to build and hash per line, and each small dict stays in cache);
    # raw verdict -> its index in VERDICTS, or why it is refused; the tuple of a line's keys -> its _Shape.
    pairs: dict[str, dict[str, _Pair | _Problem | None]] = {}
    pair_setup = _PairSetup(today, book, missing)
    verdict_codes: dict[str, int | _Problem] = {}
    shapes: dict[tuple[str, ...], _Shape] = {}
    rendered: dict[str, str] = {}  # extra string values repeat (roles, notes): render each once
    lines = no_lines(ReviewedLines, pair_setup.groups)
    group_col, verdict_col, shock_col, regime_col = lines.group, lines.verdict, lines.shock, lines.regime
    unknown_regime = REGIMES.index("unknown")
    skip = report.skip
    buffer: list[str] = []
    with AtomicLineWriter(ws.verdict_review) as out:
        for number, obj in read_objects(ws.verdicts, report, label):
            # The common case of check_verdict_line, inlined and cached per distinct raw value; anything unusual
            # (wrong types, a missing field) goes through check_verdict_line itself for the exact message.
            # Typed Any: the type() checks just below are what make them str (and bool).
            raw_date: Any = obj.get("decision_date")
            asset: Any = obj.get("asset")
            raw_verdict: Any = obj.get("verdict")
            shock: Any = obj.get("macro_shock", False)
            if (
                type(raw_date) is not str
                or type(asset) is not str
                or type(raw_verdict) is not str
                or (shock is not True and shock is not False)
            ):
                checked = check_verdict_line(obj, today)
                if isinstance(checked, str):
                    skip(label, number, checked)
                    future += "is after now" in checked
                    continue
                shock = checked[3]
            try:
                pair = pairs[asset][raw_date]
            except KeyError:
                pair = pairs.setdefault(asset, {})[raw_date] = pair_setup.check(raw_date, asset)
            if isinstance(pair, str):
                skip(label, number, pair)
                future += "is after now" in pair
                continue
            try:
                code = verdict_codes[raw_verdict]
            except KeyError:
                code = verdict_codes[raw_verdict] = _verdict_code(raw_verdict)
            if isinstance(code, str):
                skip(label, number, code)
                continue
            if pair is None:
                unreviewable += 1
                continue
            index, calm, shocked, outcomes, fields = pair
            keys = tuple(obj)
            shape = shapes.get(keys)
            if shape is None:
                shape = _shape(obj.keys() - _COMPUTED)
                if len(shapes) < _SHAPE_LIMIT:
                    shapes[keys] = shape
            extras, late_key, template = shape
            # Fast paths, because str.format costs several times an f-string per line: a line with no extra field,
            # and one with a single extra field that sorts between "outcomes" and "verdict" (a role, a regime) are
            # the head, the outcomes, that field and the verdict in a row. The rest go through the shape's template.
            if not extras:
                buffer.append(f"{shocked if shock else calm}{outcomes}{_VERDICT_ENDS[code]}")
                regime = unknown_regime
            elif late_key:
                value = obj[extras[0]]
                value_text = rendered.get(value) if type(value) is str else None
                if value_text is None:
                    value_text = _render(value, rendered)
                buffer.append(f"{shocked if shock else calm}{outcomes}{late_key}{value_text}{_VERDICT_ENDS[code]}")
                regime = unknown_regime
                if extras[0] == "regime" and type(value) is str:
                    regime = _REGIME_CODES.get(value, unknown_regime)
            else:
                values = [_render(obj[k], rendered) for k in extras]
                buffer.append(template.format(*fields, "true" if shock else "false", VERDICTS[code], *values))
                line_regime = obj.get("regime")
                regime = _REGIME_CODES.get(line_regime, unknown_regime) if type(line_regime) is str else unknown_regime
            group_col.append(index)
            verdict_col.append(code)
            shock_col.append(shock)
            regime_col.append(regime)
            if len(buffer) >= _CHUNK_LINES:
                out.write_lines(buffer)
                buffer.clear()
        out.write_lines(buffer)
    reviewed = len(group_col)
    lines.numbers.extend(range(1, reviewed + 1))
    hand_off(ws.verdict_review, lines)
    skipped = report.count - first_count  # bad lines, whether refused while parsing or while checking
    report.merge(price_report)
    return ReviewSummary(
        source="verdicts",
        reviewed=reviewed,
        unreviewable=unreviewable,
        skipped=skipped,
        future=future,
        missing_prices=tuple(sorted(missing)),
        changed=out.changed,
    )


class _PairSetup:
    """The one-off work of each distinct (decision date, asset): its checks, price lookup and rendered fields.

    Decision dates and assets repeat across pairs (a few thousand dates, a few dozen assets, ~100k pairs at scale):
    what depends on one of them only is worked out once per date or per asset.
    """

    def __init__(self, today: date, book: PriceBook, missing: set[str]) -> None:
        self.today = today
        self.book = book
        self.missing = missing
        self.groups: list[tuple[date, str, str | None, tuple[str | None, ...]]] = []
        self._days: dict[str, tuple[date, int, str] | _Problem] = {}
        self._assets: dict[str, tuple[PriceSeries | None, str]] = {}

    def check(self, raw_date: str, asset: str) -> _Pair | _Problem | None:
        """Return the pair's rendered fields, None when it cannot be reviewed, or why its line is refused.

        The date and asset are checked as check_verdict_line checks them, in its order.
        """
        day = self._days.get(raw_date)
        if day is None:
            checked = check_verdict_line({"decision_date": raw_date, "asset": "x", "verdict": VERDICTS[0]}, self.today)
            day = self._days[raw_date] = (
                checked if isinstance(checked, str) else (checked[0], checked[0].toordinal(), checked[0].isoformat())
            )
        if isinstance(day, str):
            return day
        if not asset.strip():  # refused: let check_verdict_line say so
            checked = check_verdict_line({"decision_date": raw_date, "asset": asset}, self.today)
            if isinstance(checked, str):
                return checked
        on_file = self._assets.get(asset)
        if on_file is None:
            on_file = self._assets[asset] = (self.book.get(asset), json.dumps(asset, ensure_ascii=False))
        series, asset_json = on_file
        if series is None:
            self.missing.add(asset)
            return None
        decision_day, ordinal, iso = day
        closes, ordinals = series.closes, series.ordinals
        t0 = bisect_right(ordinals, ordinal) - 1  # the last trading date <= d
        if t0 < 0:
            return None
        base = closes[t0]
        atr = format_number(series.atr_pct[t0])
        changes: list[str | None] = []
        outcomes: list[str] = []
        for window in _WINDOW_ORDER:
            target = bisect_left(ordinals, ordinal + window, t0)  # the first trading date >= d + window days
            if target == len(ordinals):
                changes.append(None)
                outcomes.append(f'"{window}d": null')
            else:
                change = format_number((closes[target] / base - 1) * 100)
                changes.append(change)
                outcomes.append(f'"{window}d": {{"change_pct": {change}}}')
        fields = (
            f'"asset": {asset_json}',
            f'"atr_pct": {atr}',
            f'"base_close": {base!r}',
            f'"decision_date": "{iso}"',
            f'"outcomes": {{{", ".join(outcomes)}}}',
        )
        index = len(self.groups)
        self.groups.append((decision_day, asset, None if atr == "null" else atr, tuple(changes)))
        head = "{" + ", ".join(fields[:4]) + ', "macro_shock": '
        return index, head + "false", head + "true", f", {fields[4]}", fields


_REGIME_CODES = {name: i for i, name in enumerate(REGIMES)}


def _render(value: object, rendered: dict[str, str]) -> str:
    """Return ``value`` as json.dumps writes it on a line; strings are kept in ``rendered`` (roles, notes repeat)."""
    if type(value) is not str:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = rendered.get(value)
    if text is None:
        text = json.dumps(value, ensure_ascii=False)
        if len(rendered) < _RENDERED_LIMIT:
            rendered[value] = text
    return text


def _verdict_code(raw: str) -> int | _Problem:
    checked = check_verdict_line({"decision_date": "1970-01-01", "asset": "x", "verdict": raw}, date.max)
    return checked if isinstance(checked, str) else VERDICTS.index(checked[2])


_Shape = tuple[tuple[str, ...], str, str]
"""What the lines with one tuple of keys share: their extra keys (sorted), the ``, "key": `` text of a lone extra
that sorts between "outcomes" and "verdict" (else ""), and the line's template (see :func:`_shape_template`)."""
_VERDICT_ENDS = tuple(f', "verdict": "{v}"}}\n' for v in VERDICTS)


def _shape(extra_keys: set[str]) -> _Shape:
    extras = tuple(sorted(extra_keys))
    late_key = f", {_key(extras[0])}: " if len(extras) == 1 and "outcomes" < extras[0] < "verdict" else ""
    return extras, late_key, _shape_template(extras)


def _shape_template(extras: tuple[str, ...]) -> str:
    """Return a ``str.format`` template of a line with these extra keys (sorted), or "" when there are none.

    Keys are sorted as ``json.dumps(sort_keys=True)`` sorts them. Slots 0-4 are the pair's rendered fields (asset,
    atr_pct, base_close, decision_date, outcomes: each ``"key": value``), 5 is macro_shock, 6 the verdict, then the
    value of each extra in ``extras`` order; the extra keys themselves are literal text, braces doubled.
    """
    if not extras:
        return ""
    items = [
        (k, f"{{{slot}}}") for slot, k in enumerate(("asset", "atr_pct", "base_close", "decision_date", "outcomes"))
    ]
    items += [("macro_shock", '"macro_shock": {5}'), ("verdict", '"verdict": "{6}"')]
    items += [(k, _key(k).replace("{", "{{").replace("}", "}}") + f": {{{7 + i}}}") for i, k in enumerate(extras)]
    items.sort()
    return "{{" + ", ".join(text for _, text in items) + "}}\n"


@functools.lru_cache(maxsize=4096)
def _key(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)
