"""A workspace's history read once: its verdicts and price files, and their as-of views at a night ``t``.

The view at night ``t`` holds the verdicts dated on or before ``t`` and the price rows dated on or before ``t``,
nothing else. It is written into the scratch workspace the night runs on (:meth:`History.write_view`), as the
verdict path's own files, so that the real steps read it exactly as they read a live workspace.

Prices are parsed once, from the user's files. A price file cut at ``t`` parses to the full series cut at ``t``: the
per-row measures (ATR, regime) use the rows up to that row only, and a duplicated date keeps the last of its rows in
either file. So the cut series is handed to the steps along with the cut file (:func:`remember_parsed_prices`), and
the night does not parse it again.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import date
from itertools import pairwise
from pathlib import Path
from typing import Any

from dreaming.memory import InputReport, Workspace, atomic_write_bytes
from dreaming.memory.verdicts import REGIMES, PriceBook, PriceSeries, parse_date
from dreaming.memory.verdicts._prices import remember_parsed_prices
from dreaming.memory.verdicts._records import check_verdict_line
from dreaming.memory.verdicts._stream import read_objects

__all__ = ["History", "PriceFile", "VerdictRecord", "cut_series", "load_history"]


@dataclass(frozen=True, kw_only=True, slots=True)
class VerdictRecord:
    """One valid verdict of the history: its core fields and the line the view writes for it."""

    day: date
    """The decision date."""
    asset: str
    """The asset, as written."""
    verdict: str
    """BUY, ACCUMULATE, HOLD, TRIM or SELL."""
    macro_shock: bool
    """The black-swan flag."""
    line_regime: str
    """The line's own ``regime`` field when it names one (used only for an asset without prices), else unknown."""
    line: str
    """The JSON line (with its newline) the view writes: every field of the original line."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PriceFile:
    """One price file: its header, its rows with a readable date (in file order), and the full parsed series."""

    name: str
    """The file name under ``prices/``."""
    header: str
    """The header row as the view writes it."""
    ordinals: list[int]
    """The date of each row below, as ``date.toordinal()``."""
    rows: list[str]
    """Each row with a readable date, as the view writes it (CSV with its newline), in file order."""
    series: PriceSeries | None
    """The whole file parsed by the verdict path (None when it refuses the file)."""
    sorted_rows: bool
    """Whether the rows come in date order (then a view is a prefix)."""

    def rows_until(self, limit: int) -> int:
        """Return how many rows are dated on or before the ordinal ``limit``."""
        if self.sorted_rows:
            return bisect_right(self.ordinals, limit)
        return sum(1 for o in self.ordinals if o <= limit)

    def view(self, t: date) -> bytes:
        """Return the file as it stood at night ``t``: the header and the rows dated on or before ``t``."""
        limit = t.toordinal()
        if self.sorted_rows:
            kept = self.rows[: bisect_right(self.ordinals, limit)]
        else:
            kept = [row for o, row in zip(self.ordinals, self.rows, strict=True) if o <= limit]
        return (self.header + "".join(kept)).encode("utf-8", "surrogateescape")


@dataclass(slots=True)
class History:
    """Everything the backtest reads from a workspace, read once."""

    verdicts: list[VerdictRecord]
    """The valid verdicts, in file order (or the scripted committee's, in date order)."""
    prices: dict[str, PriceFile]
    """The price files by asset (the file's stem)."""
    committee: str
    """``recorded`` (the workspace's verdicts), ``scripted`` (made from prices) or ``none``."""
    _written: dict[str, int] = field(default_factory=dict)
    """Per asset, how many rows the price file last written into the scratch workspace holds."""

    def series(self, asset: str) -> PriceSeries | None:
        """Return the full price series of ``asset`` (exact name first, then case-insensitively), or None."""
        found = self.prices.get(asset)
        if found is None:
            folded = asset.casefold()
            found = next((f for name, f in sorted(self.prices.items()) if name.casefold() == folded), None)
        return None if found is None else found.series

    def regime_on(self, record: VerdictRecord) -> str:
        """Return the regime on the record's decision day, from prices up to that day only (as light sleep does)."""
        series = self.series(record.asset)
        if series is None:
            return record.line_regime
        row = series.index_on_or_before(record.day.toordinal())
        return "unknown" if row < 0 else series.regimes[row]

    def write_view(self, scratch: Workspace, t: date) -> None:
        """Write the as-of view at night ``t`` into ``scratch``: its ``prices/`` and ``verdicts.jsonl``.

        A price file is written again only when it gained rows since the last view; the cut series goes with it so
        that the night's steps do not parse it again.
        """
        limit = t.toordinal()
        for asset, price_file in self.prices.items():
            kept = price_file.rows_until(limit)
            if self._written.get(asset) == kept:
                continue
            path = scratch.prices_dir / price_file.name
            data = price_file.view(t)
            atomic_write_bytes(path, data)
            remember_parsed_prices(
                path, data, None if price_file.series is None else cut_series(price_file.series, limit)
            )
            self._written[asset] = kept
        lines = [r.line for r in self.verdicts if r.day <= t]
        atomic_write_bytes(scratch.verdicts, "".join(lines).encode("utf-8"))


def cut_series(series: PriceSeries, limit: int) -> PriceSeries:
    """Return ``series`` cut after the ordinal ``limit``: what parsing the file's rows up to that day gives."""
    end = bisect_right(series.ordinals, limit)
    return PriceSeries(
        asset=series.asset,
        ordinals=series.ordinals[:end],
        closes=series.closes[:end],
        atr_pct=series.atr_pct[:end],
        regimes=series.regimes[:end],
        has_high_low=series.has_high_low,
    )


def load_history(ws: Workspace, report: InputReport, *, end: date) -> History:
    """Read the workspace's verdicts and price files; bad lines and rows are skipped and reported in ``report``.

    Without a valid verdict, a workspace with prices gets the scripted committee's verdicts up to ``end``
    (``_committee_scripted``), decided from prices up to each decision date only.
    """
    book = PriceBook(ws.prices_dir, report, label_prefix=ws.relative(ws.prices_dir) + "/")
    prices = {path.stem: _read_rows(path, book.get(path.stem)) for path in book.paths}
    verdicts = _read_verdicts(ws, report)
    committee = "recorded" if verdicts else "none"
    if not verdicts and any(f.series is not None for f in prices.values()):
        verdicts = _scripted(prices, end)
        committee = "scripted"
    return History(verdicts=verdicts, prices=prices, committee=committee)


def _read_rows(path: Path, series: PriceSeries | None) -> PriceFile:
    """Return the file's rows with a readable date, re-written as CSV lines (the bytes of each cell kept)."""
    try:
        text = path.read_bytes().decode("utf-8-sig", "surrogateescape")
    except OSError:
        text = ""
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    ordinals: list[int] = []
    rows: list[str] = []
    d_col = -1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error:  # the verdict path skips it too
            continue
        if header is None:
            header = row
            columns = {cell.strip().lower(): i for i, cell in reversed(list(enumerate(row)))}
            d_col = columns.get("date", -1)
            continue
        if d_col < 0 or d_col >= len(row):
            continue
        day = parse_date(row[d_col])
        if day is None:
            continue
        ordinals.append(day.toordinal())
        rows.append(_csv_line(row))
    ordered = all(a <= b for a, b in pairwise(ordinals))
    return PriceFile(
        name=path.name,
        header=_csv_line(header or []),
        ordinals=ordinals,
        rows=rows,
        series=series,
        sorted_rows=ordered,
    )


def _csv_line(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    return out.getvalue()


def _read_verdicts(ws: Workspace, report: InputReport) -> list[VerdictRecord]:
    label = ws.relative(ws.verdicts)
    out: list[VerdictRecord] = []
    for number, obj in read_objects(ws.verdicts, report, label):
        record = _record(obj)
        if isinstance(record, str):
            report.skip(label, number, record)
        else:
            out.append(record)
    return out


def _record(obj: dict[str, Any]) -> VerdictRecord | str:
    checked = check_verdict_line(obj, date.max)
    if isinstance(checked, str):
        return checked
    day, asset, verdict, shock = checked
    regime = obj.get("regime")
    return VerdictRecord(
        day=day,
        asset=asset,
        verdict=verdict,
        macro_shock=shock,
        line_regime=regime if regime in REGIMES else "unknown",
        line=json.dumps(obj, ensure_ascii=False) + "\n",
    )


def _scripted(prices: dict[str, PriceFile], end: date) -> list[VerdictRecord]:
    """Return the scripted committee's verdicts from the first price row to ``end``, in date order.

    Raises:
        ValueError: the committee made a verdict the verdict path would refuse (a defect of the committee, not input).
    """
    # Imported by name: the scripted committee is its own module, needed only by a workspace without verdicts.
    scripted_verdicts = importlib.import_module("dreaming.backtest._committee_scripted").scripted_verdicts
    series = {asset: f.series for asset, f in prices.items() if f.series is not None}
    first = min((s.ordinals[0] for s in series.values() if s.ordinals), default=end.toordinal())
    records = []
    for obj in scripted_verdicts(series, date.fromordinal(first), end):
        day = obj.get("decision_date")
        record = _record({**obj, "decision_date": day.isoformat()} if isinstance(day, date) else dict(obj))
        if isinstance(record, str):
            raise ValueError(f"the scripted committee made a verdict the verdict path refuses: {record} ({obj!r})")
        records.append(record)
    return sorted(records, key=lambda r: (r.day, r.asset))
