"""Price files ``prices/<ASSET>.csv``: parsing, and per-row ATR and regime computed without look-ahead."""

from __future__ import annotations

import csv
import hashlib
import io
import math
import os
import re
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import msgspec

from dreaming.memory._decode import NAME_NOT_UTF8, NOT_UTF8, has_undecodable, printable
from dreaming.memory.files import InputReport, atomic_write_bytes

__all__ = [
    "ATR_DAYS",
    "MIN_REGIME_ROWS",
    "REGIMES",
    "SLOPE_LOOKBACK",
    "SMA_DAYS",
    "PriceBook",
    "PriceSeries",
    "keep_parsed_prices",
    "load_prices",
    "parse_date",
    "price_fingerprints",
    "recall_parsed_prices",
    "remember_parsed_prices",
]

SMA_DAYS = 50
"""The simple moving average of the regime rule spans this many closes."""
SLOPE_LOOKBACK = 10
"""The SMA slope compares ``SMA(t0)`` with the SMA this many trading rows earlier."""
MIN_REGIME_ROWS = 60
"""With fewer rows up to the decision day, the regime is ``unknown``."""
ATR_DAYS = 14
"""The average true range spans this many trading rows (and needs one more for the previous close)."""
REGIMES = ("uptrend", "downtrend", "range_bound", "unknown")

_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_US = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")


def parse_date(text: str) -> date | None:
    """Parse an ISO (``2008-10-06``) or US (``10/6/2008``) date; return None when it is neither."""
    text = text.strip()
    try:
        if m := _ISO.fullmatch(text):
            return date(int(m[1]), int(m[2]), int(m[3]))
        if m := _US.fullmatch(text):
            return date(int(m[3]), int(m[1]), int(m[2]))
    except ValueError:
        return None
    return None


@dataclass(frozen=True, kw_only=True, slots=True)
class PriceSeries:
    """One asset's trading rows, sorted by date, with the per-row measures the verdict path needs."""

    asset: str
    """The asset name (the file's stem)."""
    ordinals: list[int]
    """Trading dates as ``date.toordinal()``, strictly increasing."""
    closes: list[float]
    """The close of each row."""
    atr_pct: list[float | None]
    """ATR of the ``ATR_DAYS`` rows ending at each row, as a percent of that row's close (4 decimals), or None."""
    regimes: list[str]
    """The regime of each row, from closes up to that row only."""
    has_high_low: bool
    """Whether the file had both ``high`` and ``low`` columns."""

    def index_on_or_before(self, ordinal: int) -> int:
        """Return the last row dated on or before ``ordinal``, or -1 when there is none."""
        return bisect_right(self.ordinals, ordinal) - 1

    def index_on_or_after(self, ordinal: int) -> int:
        """Return the first row dated on or after ``ordinal``, or -1 when the prices end before it."""
        i = bisect_left(self.ordinals, ordinal)
        return i if i < len(self.ordinals) else -1


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)  # the usual cell; float() allows the same surrounding whitespace as strip()
    except ValueError:
        if not text.strip():
            return None
        try:
            value = float(text.replace(",", ""))
        except ValueError:
            return None
    return value if math.isfinite(value) else None


_ORDINALS: dict[str, int | None] = {}
"""Date cell -> its ordinal (None when unreadable): every price file of a workspace shares one calendar."""
_ORDINALS_LIMIT = 100_000


def _ordinal(text: str) -> int | None:
    try:
        return _ORDINALS[text]
    except KeyError:
        pass
    day = parse_date(text)
    ordinal = None if day is None else day.toordinal()
    if len(_ORDINALS) < _ORDINALS_LIMIT:
        _ORDINALS[text] = ordinal
    return ordinal


def load_prices(path: Path, report: InputReport, *, label: str | None = None) -> PriceSeries | None:
    """Read one price file; bad rows are skipped and reported, a file without date or close is refused (None).

    A row holding bytes that are not UTF-8 is skipped and reported as ``not UTF-8`` like any other bad row; the
    other rows are read. A file that cannot be read at all is reported at line 0.

    A file whose bytes were parsed before in this process is not parsed again (review and light sleep both read
    every price file): the parsed series is kept with a digest of the bytes it came from, and its bad rows are
    reported again as parsing reports them. The digest, not the file's stat, decides: a price file may be edited in
    place, and within one tick of the file system's clock an edit of the same size leaves the stat unchanged.
    """
    name = label or path.name
    try:
        data = path.read_bytes()
    except OSError as exc:
        report.skip(name, 0, f"price file unreadable: {exc}")
        return None
    key, digest = os.fspath(path), hashlib.blake2b(data, digest_size=16).digest()
    with _parsed_lock:
        held = _parsed.get(key)
    if held is not None and held[0] == digest:
        series, problems = held[1], held[2]
    else:
        problems = []
        series = _parse_prices(data.decode("utf-8-sig", "surrogateescape"), path.stem, problems)
        _keep_parsed(key, (digest, series, problems))
    for line, why in problems:
        report.skip(name, line, why)
    return series


def remember_parsed_prices(
    path: Path, data: bytes, series: PriceSeries | None, problems: list[tuple[int, str]] | None = None
) -> None:
    """Keep ``series`` as what parsing ``data`` (the bytes of ``path``) gives, so :func:`load_prices` does not parse it.

    For a caller that already holds that series exactly (the backtest cuts a series parsed once at each night,
    which equals parsing the cut file: every per-row measure uses the rows up to that row only). ``problems`` are
    the bad rows :func:`load_prices` then reports, as (line, reason).
    """
    _keep_parsed(os.fspath(path), (hashlib.blake2b(data, digest_size=16).digest(), series, list(problems or [])))


_Parsed = tuple[bytes, PriceSeries | None, list[tuple[int, str]]]
"""A parsed price file: the digest of its bytes, the series (None when refused), its bad rows (line, reason)."""
_PARSED_ROWS = 500_000
"""At most this many rows of parsed price files are kept (about 50 MiB), the oldest files dropped first."""
_parsed: dict[str, _Parsed] = {}
_parsed_lock = threading.Lock()


def _keep_parsed(key: str, parsed: _Parsed) -> None:
    def rows(item: _Parsed) -> int:
        return 0 if item[1] is None else len(item[1].ordinals)

    with _parsed_lock:
        _parsed.pop(key, None)
        if rows(parsed) > _PARSED_ROWS:
            return
        _parsed[key] = parsed
        total = sum(rows(item) for item in _parsed.values())
        while total > _PARSED_ROWS:
            oldest = next(iter(_parsed))
            total -= rows(_parsed.pop(oldest))


class _StoredSeries(msgspec.Struct, forbid_unknown_fields=True):
    """A parsed price file as ``price-series.json`` keeps it (see :func:`recall_parsed_prices`)."""

    digest: str
    problems: list[tuple[int, str]]
    refused: bool = False
    has_high_low: bool = False
    ordinals: list[int] = msgspec.field(default_factory=list)
    closes: list[float] = msgspec.field(default_factory=list)
    atr_pct: list[float | None] = msgspec.field(default_factory=list)
    regimes: str = ""
    """One digit a row: the index of its regime in ``REGIMES``."""


class _StoredPrices(msgspec.Struct):
    version: int
    files: dict[str, _StoredSeries]


PRICE_SERIES_VERSION = 1
_REGIME_DIGITS = {name: str(i) for i, name in enumerate(REGIMES)}


def recall_parsed_prices(store: Path, prices_dir: Path, digests: Mapping[str, str]) -> set[str]:
    """Take the parsed price files kept in ``store`` whose bytes still have ``digests``; return their names.

    A night that reads prices parses every price file it looks up (about 4 us a row); the series and bad rows parsed
    from the same bytes are the same, so a night keeps them (:func:`keep_parsed_prices`) and the next one starts from
    them. A store that cannot be read, of another version, or whose entry does not hold together is ignored: it is a
    cache, rewritten by the next night that parses.
    """
    try:
        stored = msgspec.json.decode(store.read_bytes(), type=_StoredPrices)
    except (OSError, msgspec.DecodeError):
        return set()
    if stored.version != PRICE_SERIES_VERSION:
        return set()
    taken: set[str] = set()
    for name, entry in stored.files.items():
        rows = len(entry.ordinals)
        if digests.get(name) != entry.digest or (
            not entry.refused
            and (
                {len(entry.closes), len(entry.atr_pct), len(entry.regimes)} != {rows}
                or any(a >= b for a, b in zip(entry.ordinals, entry.ordinals[1:], strict=False))
                or not set(entry.regimes) <= set(_REGIME_DIGITS.values())
            )
        ):
            continue
        path = prices_dir / name
        series = None
        if not entry.refused:
            series = PriceSeries(
                asset=path.stem,
                ordinals=entry.ordinals,
                closes=entry.closes,
                atr_pct=entry.atr_pct,
                regimes=[REGIMES[int(d)] for d in entry.regimes],
                has_high_low=entry.has_high_low,
            )
        _keep_parsed(os.fspath(path), (bytes.fromhex(entry.digest), series, list(entry.problems)))
        taken.add(name)
    return taken


def keep_parsed_prices(store: Path, prices_dir: Path, digests: Mapping[str, str], recalled: set[str]) -> None:
    """Write the price files of ``prices_dir`` parsed in this process to ``store``, unless it holds them already."""
    with _parsed_lock:
        held = {name: _parsed.get(os.fspath(prices_dir / name)) for name in digests}
    files = {name: item for name, item in held.items() if item is not None and item[0].hex() == digests[name]}
    if not files or files.keys() <= recalled:
        return
    out: dict[str, _StoredSeries] = {}
    for name, (digest, series, problems) in sorted(files.items()):
        if series is None:
            out[name] = _StoredSeries(digest=digest.hex(), problems=problems, refused=True)
        else:
            out[name] = _StoredSeries(
                digest=digest.hex(),
                problems=problems,
                has_high_low=series.has_high_low,
                ordinals=series.ordinals,
                closes=series.closes,
                atr_pct=series.atr_pct,
                regimes="".join(_REGIME_DIGITS[r] for r in series.regimes),
            )
    atomic_write_bytes(store, msgspec.json.encode(_StoredPrices(version=PRICE_SERIES_VERSION, files=out)) + b"\n")


def _rows(
    reader: Iterator[list[str]], problems: list[tuple[int, str]], line_num: Callable[[], int]
) -> Iterator[list[str]]:
    # The rows of ``reader``; a row the csv module refuses (a field over its size limit) is reported and skipped.
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problems.append((line_num(), f"not a CSV row: {exc}"))
            continue
        yield row


def _parse_prices(text: str, asset: str, problems: list[tuple[int, str]]) -> PriceSeries | None:
    # ``text`` was decoded with surrogateescape: a lone surrogate marks a byte that is not UTF-8.
    rows: dict[int, tuple[float, float | None, float | None]] = {}
    reader = csv.reader(io.StringIO(text, newline=""))
    lines = _rows(reader, problems, lambda: reader.line_num)
    header = next(lines, None)
    undecodable = has_undecodable(text)
    header_bad = undecodable and header is not None and any(has_undecodable(cell) for cell in header)
    columns = {cell.strip().lower(): i for i, cell in reversed(list(enumerate(header or [])))}
    if "date" not in columns or "close" not in columns:
        missing = [c for c in ("date", "close") if c not in columns]
        why = "header is not UTF-8" if header_bad else f"no {' or '.join(repr(c) for c in missing)} column"
        problems.append((1, f"price file refused: {why}"))
        return None
    if header_bad:
        problems.append((1, f"{NOT_UTF8} (the header's other columns were read)"))
    d_col, c_col = columns["date"], columns["close"]
    has_hl = "high" in columns and "low" in columns
    h_col, l_col = columns.get("high", -1), columns.get("low", -1)
    number, ordinal_of = _number, _ordinal
    for row in lines:
        if not row or (not row[0].strip() and not any(cell.strip() for cell in row)):
            continue
        if undecodable and any(has_undecodable(cell) for cell in row):
            problems.append((reader.line_num, NOT_UTF8))
            continue
        width = len(row)
        ordinal = ordinal_of(row[d_col]) if d_col < width else None
        if ordinal is None:
            problems.append((reader.line_num, "unreadable date"))
            continue
        close = number(row[c_col]) if c_col < width else None
        if close is None or close <= 0:
            problems.append((reader.line_num, "close is missing, not a number or not positive"))
            continue
        high = number(row[h_col]) if has_hl and h_col < width else None
        low = number(row[l_col]) if has_hl and l_col < width else None
        rows[ordinal] = (close, high, low)  # a duplicated date keeps the last row
    ordinals = sorted(rows)
    closes = [rows[o][0] for o in ordinals]
    return PriceSeries(
        asset=asset,
        ordinals=ordinals,
        closes=closes,
        atr_pct=_atr_pct(closes, [rows[o][1] for o in ordinals], [rows[o][2] for o in ordinals]),
        regimes=_regimes(closes),
        has_high_low=has_hl,
    )


def _atr_pct(closes: list[float], highs: list[float | None], lows: list[float | None]) -> list[float | None]:
    true_range = [0.0]
    for i in range(1, len(closes)):
        prev, close = closes[i - 1], closes[i]
        high, low = highs[i], lows[i]
        if high is None or low is None:
            true_range.append(abs(close - prev))
        else:
            true_range.append(max(high - low, abs(high - prev), abs(low - prev)))
    out: list[float | None] = [None] * min(ATR_DAYS, len(closes))
    sums = window_sums(true_range[1:], ATR_DAYS)  # the window ending at row i starts at row i - ATR_DAYS + 1 >= 1
    for i, total in enumerate(sums, start=ATR_DAYS):
        out.append(round(total / ATR_DAYS / closes[i] * 100, 4))
    return out


def _regimes(closes: list[float]) -> list[str]:
    sma: list[float] = [0.0] * min(SMA_DAYS - 1, len(closes))
    sma += [total / SMA_DAYS for total in window_sums(closes, SMA_DAYS)]
    out = ["unknown"] * min(MIN_REGIME_ROWS - 1, len(closes))
    for t0 in range(MIN_REGIME_ROWS - 1, len(closes)):
        now_sma, before = sma[t0], sma[t0 - SLOPE_LOOKBACK]
        if closes[t0] > now_sma and now_sma > before:
            out.append("uptrend")
        elif closes[t0] < now_sma and now_sma < before:
            out.append("downtrend")
        else:
            out.append("range_bound")
    return out


def window_sums(values: list[float], width: int) -> list[float]:
    """Return ``math.fsum`` of each run of ``width`` values (ending at index ``width - 1``, ``width``, ...) in a pass.

    Every finite float is an integer over a power of two, so over a common power of two the running sum is kept
    exactly in integers; Python's int true division rounds correctly, as fsum does. An exact zero is left to fsum
    itself (the sign of a zero sum).
    """
    if len(values) < width:
        return []
    ratios = [v.as_integer_ratio() for v in values]
    scale = max(d for _, d in ratios).bit_length() - 1
    ints = [n << (scale - d.bit_length() + 1) for n, d in ratios]
    denominator = 1 << scale
    total = sum(ints[:width])
    out = [total / denominator if total else math.fsum(values[:width])]
    for i in range(width, len(ints)):
        total += ints[i] - ints[i - width]
        out.append(total / denominator if total else math.fsum(values[i - width + 1 : i + 1]))
    return out


class PriceBook:
    """The price files of a workspace, each loaded at most once, looked up by asset name."""

    def __init__(
        self,
        prices_dir: Path,
        report: InputReport,
        *,
        label_prefix: str = "prices/",
        loads: InputReport | None = None,
        reported: Collection[str] = (),
    ) -> None:
        """Index ``prices_dir`` (a missing folder means no prices at all).

        Unreadable file names go to ``report``; the bad rows found while loading a file go to ``loads`` (by default
        ``report`` too), except for the assets in ``reported``: an earlier night reported those, and its report is
        replayed by the caller (see ``_tallies``).
        """
        self._report = report if loads is None else loads
        self._prefix = label_prefix
        self._reported = frozenset(reported)
        self._loaded: dict[str, PriceSeries | None] = {}
        self.looked_up: list[str] = []
        """Every asset looked up, in the order of its first lookup (the order its file's problems are reported in)."""
        unnamed, paths = _price_files(prices_dir)
        for name in unnamed:  # no report or state file could name it; see memory._decode
            report.skip(printable(label_prefix + name), 0, NAME_NOT_UTF8)
        self._files = {path.stem: path for path in paths}
        self.paths: tuple[Path, ...] = tuple(paths)
        """The price files found, in name order."""
        folded: dict[str, Path] = {}
        for path in paths:
            folded.setdefault(path.stem.casefold(), path)
        self._folded = folded

    def has_file(self, asset: str) -> bool:
        """Return whether a price file exists for ``asset`` (exact name first, then case-insensitively)."""
        return asset in self._files or asset.casefold() in self._folded

    def get(self, asset: str) -> PriceSeries | None:
        """Return the asset's prices, or None when there is no usable file."""
        try:
            return self._loaded[asset]
        except KeyError:
            pass
        path = self._files.get(asset) or self._folded.get(asset.casefold())
        report = InputReport() if asset in self._reported else self._report
        series = None if path is None else load_prices(path, report, label=self._prefix + path.name)
        self._loaded[asset] = series
        self.looked_up.append(asset)
        return series


def _price_files(prices_dir: Path) -> tuple[list[str], list[Path]]:
    """Return the names that are not UTF-8 (skipped), and the price files, in name order."""
    unnamed: list[str] = []
    files: list[Path] = []
    if prices_dir.is_dir():
        for path in sorted(prices_dir.iterdir()):
            if has_undecodable(path.name):
                unnamed.append(path.name)
            elif path.suffix.lower() == ".csv" and path.is_file():
                files.append(path)
    return unnamed, files


def price_fingerprints(prices_dir: Path) -> dict[str, str]:
    """Read every price file and return a digest of its bytes by file name (``unreadable`` when it cannot be read)."""
    out: dict[str, str] = {}
    for path in _price_files(prices_dir)[1]:
        try:
            out[path.name] = hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
        except OSError:
            out[path.name] = "unreadable"
    return out
