"""The review step: each committee verdict with what the market did next (``verdict_review.jsonl``)."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from dreaming.memory._io import InputReport
from dreaming.memory._workspace import Workspace
from dreaming.memory.verdicts._prices import PriceBook, PriceSeries
from dreaming.memory.verdicts._records import WINDOWS, check_verdict_line
from dreaming.memory.verdicts._stream import AtomicLineWriter, format_number, read_objects

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


def _window_outcomes(series: PriceSeries, day: date, base: float) -> str:
    parts = []
    for window in sorted(WINDOWS, key=lambda w: f"{w}d"):  # the order json.dumps(sort_keys=True) gives
        target = series.index_on_or_after((day + timedelta(days=window)).toordinal())
        if target < 0:
            parts.append(f'"{window}d": null')
        else:
            change = (series.closes[target] / base - 1) * 100
            parts.append(f'"{window}d": {{"change_pct": {format_number(change)}}}')
    return "{" + ", ".join(parts) + "}"


def review_verdicts(ws: Workspace, *, now: datetime, report: InputReport) -> ReviewSummary:
    """Review every verdict in ``verdicts.jsonl`` against ``prices/`` and write ``verdict_review.jsonl`` atomically.

    When ``verdicts.jsonl`` is absent but ``verdict_review.jsonl`` exists, the file was supplied by the committee's
    own system: the step is skipped and the file left untouched (light sleep fills any missing ``atr_pct`` from
    ``prices/``). Bad lines and verdicts dated after ``now`` are skipped and reported in ``report``.
    """
    if not ws.verdicts.exists():
        return ReviewSummary(source="supplied" if ws.verdict_review.exists() else "none")
    label = ws.relative(ws.verdicts)
    today = now.date()
    first_count = report.count
    price_report = InputReport()
    book = PriceBook(ws.prices_dir, price_report, label_prefix=ws.relative(ws.prices_dir) + "/")
    # Per (asset, decision date): the rendered line around the per-verdict fields, or None when unreviewable.
    cache: dict[tuple[str, date], tuple[str, str, list[tuple[str, str]]] | None] = {}
    reviewed = unreviewable = skipped = future = 0
    missing: set[str] = set()
    dumps = json.dumps
    rendered: dict[str, str] = {}  # extra string values repeat (roles, notes): render each once
    with AtomicLineWriter(ws.verdict_review) as out:
        for number, obj in read_objects(ws.verdicts, report, label):
            checked = check_verdict_line(obj, today)
            if isinstance(checked, str):
                report.skip(label, number, checked)
                future += "is after now" in checked
                continue
            day, asset, verdict, shock = checked
            key = (asset, day)
            try:
                parts = cache[key]
            except KeyError:
                parts = cache[key] = _render_parts(book, asset, day, missing)
            if parts is None:
                unreviewable += 1
                continue
            head, mid, fields = parts
            extras = obj.keys() - _COMPUTED
            if not extras:
                out.write(f'{head}{"true" if shock else "false"}{mid}{verdict}"}}\n')
            else:
                items = [*fields, ("macro_shock", "true" if shock else "false"), ("verdict", f'"{verdict}"')]
                for k in extras:
                    value = obj[k]
                    text = rendered.get(value) if type(value) is str else None
                    if text is None:
                        text = dumps(value, ensure_ascii=False, sort_keys=True)
                        if type(value) is str and len(rendered) < 100_000:
                            rendered[value] = text
                    items.append((k, text))
                items.sort()
                out.write("{" + ", ".join(f"{_key(k)}: {v}" for k, v in items) + "}\n")
            reviewed += 1
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


@functools.lru_cache(maxsize=4096)
def _key(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)


def _render_parts(
    book: PriceBook, asset: str, day: date, missing: set[str]
) -> tuple[str, str, list[tuple[str, str]]] | None:
    series = book.get(asset)
    if series is None:
        missing.add(asset)
        return None
    t0 = series.index_on_or_before(day.toordinal())
    if t0 < 0:
        return None
    base = series.closes[t0]
    fields = [
        ("asset", json.dumps(asset, ensure_ascii=False)),
        ("atr_pct", format_number(series.atr_pct[t0])),
        ("base_close", repr(base)),
        ("decision_date", f'"{day.isoformat()}"'),
        ("outcomes", _window_outcomes(series, day, base)),
    ]
    head = "{" + ", ".join(f'"{k}": {v}' for k, v in fields[:4]) + ', "macro_shock": '
    mid = f', "outcomes": {fields[4][1]}, "verdict": "'
    return head, mid, fields
