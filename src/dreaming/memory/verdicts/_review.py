"""The review step: each committee verdict with what the market did next (``verdict_review.jsonl``)."""

from __future__ import annotations

import functools
import hashlib
import json
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any

import msgspec

from dreaming.memory.files import InputReport
from dreaming.memory.verdicts._handoff import ReviewedLines, hand_off, no_lines
from dreaming.memory.verdicts._prices import (
    REGIMES,
    PriceBook,
    PriceSeries,
    keep_parsed_prices,
    price_fingerprints,
    recall_parsed_prices,
)
from dreaming.memory.verdicts._records import VERDICTS, WINDOWS, check_verdict_line, future_day
from dreaming.memory.verdicts._stream import (
    _CHUNK_LINES,
    EXTRA_FIELDS,
    AppendingLineWriter,
    AtomicLineWriter,
    VerdictLine,
    VerdictLines,
    bulk_objects,
    format_number,
)
from dreaming.memory.verdicts._tallies import (
    Carry,
    Reported,
    ReviewTally,
    VerdictTallies,
    Watermark,
    file_stamp,
    load_tallies,
    mismatch,
)
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
    """Whether verdict_review.jsonl was rewritten (or lines appended to it)."""
    read_lines: int = 0
    """Lines of verdicts.jsonl read tonight: only those added since the last night, unless ``recomputed``."""
    recomputed: str | None = None
    """Why every line was read again tonight (no tallies yet, a price file changed, ...); None when it was not."""


_WINDOW_ORDER = tuple(sorted(WINDOWS, key=lambda w: f"{w}d"))
"""The windows in the order json.dumps(sort_keys=True) writes their keys ("30d" before "7d")."""


_Pair = tuple[int, str, str]
"""A reviewable (asset, decision date): its index in the hand-off groups; the line's head up to the ``macro_shock``
value, which is ``{`` and the fields before it; and its ``, "outcomes": {...}`` text. Kept for each of ~100k pairs,
so nothing more: the lines that :func:`_shape_template` renders get their fields from :meth:`_PairSetup.fields`."""
_SHOCK = ("false", "true")
_Problem = str
_SHAPE_LIMIT = 10_000
_FIELDS_LIMIT = 100_000
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
    try:
        size = ws.verdicts.stat().st_size
    except FileNotFoundError:
        return ReviewSummary(source="supplied" if ws.verdict_review.exists() else "none")
    label = ws.relative(ws.verdicts)
    today = now.date()
    keep = report.keep
    prices = price_fingerprints(ws.prices_dir)
    base, why = load_tallies(ws, now=now)
    if base is not None:
        why = mismatch(ws, base, today=today, prices=prices, keep=keep)
    digest = hashlib.sha256()
    if base is not None and not why:
        why = _read_prefix(ws, base.watermark, size, digest)
    if why:
        base, digest = None, hashlib.sha256()
    skips = InputReport(keep=keep)  # tonight's bad verdict lines; the stored ones are replayed before them
    names = InputReport(keep=keep)  # price file names that are not UTF-8, reported every night
    price_rows = InputReport(keep=keep)  # bad rows of the price files looked up for the first time
    book = PriceBook(
        ws.prices_dir,
        names,
        label_prefix=ws.relative(ws.prices_dir) + "/",
        loads=price_rows,
        reported=base.review.looked_up if base else (),
    )
    watermark = base.watermark if base else Watermark()
    reader = VerdictLines(
        ws.verdicts, skips, label, start=watermark.offset, end=size, first_number=watermark.lines + 1, digest=digest
    )
    reader.whole_lines = watermark.whole_lines
    # Price files parsed by an earlier night, from the same bytes; only worth reading when there are lines to review.
    store = ws.state_dir / PRICE_SERIES_FILE
    recalled = recall_parsed_prices(store, ws.prices_dir, prices) if size > watermark.offset else set()
    unreviewable = future = 0
    missing: set[str] = set()
    # Hot-loop caches, each keyed by raw values seen on the lines (a million lines repeat a few thousand values):
    # asset -> decision_date -> the pair, None (valid but unreviewable) or why the pair is refused (nested rather
    # than keyed by a (date, asset) tuple: no tuple to build and hash per line, and each small dict stays in cache);
    # raw verdict -> its index in VERDICTS, or why it is refused; the extra keys of a line -> its _Shape.
    pairs: dict[str, dict[str, _Pair | _Problem | None]] = {}
    pair_setup = _PairSetup(today, book, missing)
    verdict_codes: dict[str, int | _Problem] = {}
    shapes: dict[tuple[str, ...], _Shape] = {}
    dict_extras: dict[tuple[str, ...], tuple[str, ...]] = {}  # the keys of a dict line, in its order -> its extras
    rendered: dict[str, str] = {}  # extra string values repeat (roles, notes): render each once
    lines = no_lines(ReviewedLines, pair_setup.groups)
    group_col, verdict_col, shock_col, regime_col = lines.group, lines.verdict, lines.shock, lines.regime
    unknown_regime = REGIMES.index("unknown")
    skip = skips.skip
    buffer: list[str] = []
    unset = msgspec.UNSET
    writer = AppendingLineWriter(ws.verdict_review) if base else AtomicLineWriter(ws.verdict_review)
    with writer as out:
        # Typed Any: for a dict line, the type() checks below are what make them str (and bool).
        raw_date: Any
        asset: Any
        raw_verdict: Any
        shock: Any
        extras: tuple[str, ...]
        line_regime: object
        for number, line in reader:
            obj: dict[str, Any] | None = None
            if isinstance(line, VerdictLine):  # the usual line, already typed
                raw_date, asset, raw_verdict, shock = line.decision_date, line.asset, line.verdict, line.macro_shock
                ident, note, line_regime, role = line.id, line.note, line.regime, line.role
                if ident is unset and note is unset:
                    if line_regime is unset:
                        extras = () if role is unset else _ROLE
                    else:
                        extras = _REGIME if role is unset else _REGIME_ROLE
                else:
                    extras = tuple(
                        k for k, v in zip(EXTRA_FIELDS, (ident, note, line_regime, role), strict=True) if v is not unset
                    )
            else:
                obj = line
                # The common case of check_verdict_line, inlined and cached per distinct raw value; anything unusual
                # (wrong types, a missing field) goes through check_verdict_line itself for the exact message.
                raw_date = obj.get("decision_date")
                asset = obj.get("asset")
                raw_verdict = obj.get("verdict")
                shock = obj.get("macro_shock", False)
                if (
                    type(raw_date) is not str
                    or type(asset) is not str
                    or type(raw_verdict) is not str
                    or (shock is not True and shock is not False)
                ):
                    if type(raw_date) is str:
                        pair_setup.day(raw_date)  # its date still bounds the nights these tallies hold for
                    checked = check_verdict_line(obj, today)
                    if isinstance(checked, str):
                        skip(label, number, checked)
                        future += future_day(checked) is not None
                        continue
                    shock = checked[3]
                keys = tuple(obj)
                extras = dict_extras.get(keys) or dict_extras.setdefault(keys, tuple(sorted(obj.keys() - _COMPUTED)))
                line_regime = obj.get("regime", unset)
            try:
                pair = pairs[asset][raw_date]
            except KeyError:
                pair = pairs.setdefault(asset, {})[raw_date] = pair_setup.check(raw_date, asset)
            if isinstance(pair, str):
                skip(label, number, pair)
                future += future_day(pair) is not None
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
            index, head, outcomes = pair
            shape = shapes.get(extras)
            if shape is None:
                shape = _shape(extras)
                if len(shapes) < _SHAPE_LIMIT:
                    shapes[extras] = shape
            late_key, template = shape
            # Fast paths, because str.format costs several times an f-string per line: a line with no extra field,
            # and one with a single extra field that sorts between "outcomes" and "verdict" (a role, a regime) are
            # the head, the outcomes, that field and the verdict in a row. The rest go through the shape's template.
            if not extras:
                buffer.append(f"{head}{_SHOCK[shock]}{outcomes}{_VERDICT_ENDS[code]}")
            elif late_key:
                value = getattr(line, extras[0]) if obj is None else obj[extras[0]]
                value_text = rendered.get(value) if type(value) is str else None
                if value_text is None:
                    value_text = _render(value, rendered)
                buffer.append(f"{head}{_SHOCK[shock]}{outcomes}{late_key}{value_text}{_VERDICT_ENDS[code]}")
            else:
                values = [_render(getattr(line, k) if obj is None else obj[k], rendered) for k in extras]
                fields = pair_setup.fields(index, outcomes)
                buffer.append(template.format(*fields, _SHOCK[shock], VERDICTS[code], *values))
            group_col.append(index)
            verdict_col.append(code)
            shock_col.append(shock)
            regime_col.append(
                _REGIME_CODES.get(line_regime, unknown_regime) if type(line_regime) is str else unknown_regime
            )
            if len(buffer) >= _CHUNK_LINES:
                out.write_lines(buffer)
                buffer.clear()
        out.write_lines(buffer)
    reviewed = len(group_col)
    if book.looked_up:
        keep_parsed_prices(store, ws.prices_dir, prices, recalled)
    first_line = base.review.reviewed + 1 if base else 1
    lines.numbers.extend(range(first_line, first_line + reviewed))
    tonight = ReviewTally(
        reviewed=reviewed,
        unreviewable=unreviewable,
        future=future,
        missing_prices=tuple(sorted(missing)),
        skipped=Reported.of(skips),
        looked_up=tuple(book.looked_up),
        price_rows=Reported.of(price_rows),
        newest_past=pair_setup.newest_past,
        earliest_future=pair_setup.earliest_future,
    )
    tally = base.review.then(tonight, keep) if base else tonight
    # The report says what a review of every line would: the bad lines, then the price files' problems.
    tally.skipped.replay(report, today)
    report.merge(names)
    tally.price_rows.replay(report, today)
    watermark = Watermark(
        offset=reader.offset, lines=reader.numbered, sha256=digest.hexdigest(), whole_lines=reader.whole_lines
    )
    lines = replace(
        lines,
        carry=Carry(
            base=base,
            why=why,
            keep=keep,
            watermark=watermark,
            prices=prices,
            review=tally,
            review_file=file_stamp(ws.verdict_review),
        ),
    )
    hand_off(ws.verdict_review, lines)
    return ReviewSummary(
        source="verdicts",
        reviewed=tally.reviewed,
        unreviewable=tally.unreviewable,
        skipped=tally.skipped.count,
        future=tally.future,
        missing_prices=tally.missing_prices,
        changed=writer.changed,
        read_lines=reader.numbered - watermark_lines(base),
        recomputed=why or None,
    )


def watermark_lines(base: VerdictTallies | None) -> int:
    """Return the lines already read by the nights ``base`` tallies (0 without)."""
    return 0 if base is None else base.watermark.lines


def _read_prefix(ws: Workspace, watermark: Watermark, size: int, digest: Any) -> str:
    """Feed the bytes already read to ``digest``; return why they are not those the tallies were made from, or ""."""
    if size < watermark.offset:
        return f"{ws.relative(ws.verdicts)} is shorter than the {watermark.offset:,} bytes already read"
    if size > watermark.offset and not watermark.whole_lines:
        return f"{ws.relative(ws.verdicts)} grew while its last line read was still open"
    with ws.verdicts.open("rb") as handle:
        remaining = watermark.offset
        while remaining > 0:
            chunk = handle.read(min(_PREFIX_CHUNK, remaining))
            if not chunk:
                break
            digest.update(chunk)
            remaining -= len(chunk)
    if digest.hexdigest() != watermark.sha256:
        return f"{ws.relative(ws.verdicts)} was rewritten within the {watermark.offset:,} bytes already read"
    return ""


_PREFIX_CHUNK = 1 << 20
PRICE_SERIES_FILE = "price-series.json"
"""In ``memory/.dreams``: the price files as the last night that parsed them left them (a cache, by digest)."""


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
        self._bases = array("d")
        self._fields: dict[int, tuple[str, ...]] = {}
        self.newest_past: str | None = None
        """The newest decision date seen on or before today (ISO)."""
        self.earliest_future: str | None = None
        """The earliest decision date seen after today (ISO)."""

    def day(self, raw_date: str) -> tuple[date, int, str] | _Problem:
        """Return a decision date checked as check_verdict_line checks it: the day, its ordinal and ISO, or why not."""
        day = self._days.get(raw_date)
        if day is None:
            checked = check_verdict_line({"decision_date": raw_date, "asset": "x", "verdict": VERDICTS[0]}, self.today)
            if isinstance(checked, str):
                day = checked
                if (future := future_day(checked)) is not None:
                    self.earliest_future = min(future, self.earliest_future or future)
            else:
                day = (checked[0], checked[0].toordinal(), checked[0].isoformat())
                self.newest_past = max(day[2], self.newest_past or day[2])
            self._days[raw_date] = day
        return day

    def check(self, raw_date: str, asset: str) -> _Pair | _Problem | None:
        """Return the pair's rendered fields, None when it cannot be reviewed, or why its line is refused.

        The date and asset are checked as check_verdict_line checks them, in its order.
        """
        day = self.day(raw_date)
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
        index = len(self.groups)
        self.groups.append((decision_day, asset, None if atr == "null" else atr, tuple(changes)))
        self._bases.append(base)
        head = f'{{"asset": {asset_json}, "atr_pct": {atr}, "base_close": {base!r}, "decision_date": "{iso}", '
        return index, head + '"macro_shock": ', f', "outcomes": {{{", ".join(outcomes)}}}'

    def fields(self, index: int, outcomes: str) -> tuple[str, ...]:
        """Return a pair's five rendered ``"key": value`` fields in key order (its ``outcomes`` text given)."""
        fields = self._fields.get(index)
        if fields is None:
            day, asset, atr, _ = self.groups[index]
            fields = (
                f'"asset": {json.dumps(asset, ensure_ascii=False)}',
                f'"atr_pct": {atr or "null"}',
                f'"base_close": {self._bases[index]!r}',
                f'"decision_date": "{day.isoformat()}"',
                outcomes.removeprefix(", "),
            )
            if len(self._fields) < _FIELDS_LIMIT:
                self._fields[index] = fields
        return fields


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


_Shape = tuple[str, str]
"""What the lines with one set of extra keys share: the ``, "key": `` text of a lone extra that sorts between
"outcomes" and "verdict" (else ""), and the line's template (see :func:`_shape_template`)."""
_VERDICT_ENDS = tuple(f', "verdict": "{v}"}}\n' for v in VERDICTS)
_ROLE, _REGIME, _REGIME_ROLE = ("role",), ("regime",), ("regime", "role")


def _shape(extras: tuple[str, ...]) -> _Shape:
    late_key = f", {_key(extras[0])}: " if len(extras) == 1 and "outcomes" < extras[0] < "verdict" else ""
    return late_key, _shape_template(extras)


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
