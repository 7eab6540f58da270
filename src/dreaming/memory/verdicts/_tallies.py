"""What the verdict path remembers between nights, so that a night costs in proportion to what is new.

Verdicts are appended, not rewritten, in practice. ``memory/.dreams/verdict-tallies.json`` keeps how far the review
read ``verdicts.jsonl`` (a byte offset and the sha256 of every byte before it) and each step's mergeable tallies:
the review's and light sleep's counts and reported lines, and REM's per-bucket counts, sums and last-seen dates, from
which ``candidates.json`` (and so deep sleep's gate and aging) is recomputed exactly. A night then reads only the
lines added since, appends their review and signal lines, and merges their tallies in.

The tallies depend on, and are dropped (the night recomputes everything, as the first one did) when any changes:

- the bytes of ``verdicts.jsonl`` before the offset: a rewrite, a truncation, or a last line that was still open;
- the price files, each by a digest of its bytes (a new, changed or removed file). An outcome that had not matured
  is a function of the prices alone, so it matures only through a price change, which recomputes it;
- the constants of the verdict path and this file's format (:func:`constants`). No ``[verdicts]`` setting feeds a
  tally: the gate is applied when ``candidates.json`` is written, every night, and aging runs every night;
- the date, through the review's "dated after now" rule: the tallies hold while today is on or after the newest
  decision date they accepted and before the earliest one they refused as future;
- the outputs they describe: ``verdict_review.jsonl`` and ``verdict-signals.jsonl`` must be as the night that wrote
  the tallies left them (size, mtime, inode and a digest of their last 64 KiB). The tallies are written last, after
  ``candidates.json``; a crash in between leaves outputs they do not describe, and the next night recomputes.

An unreadable tallies file, or one of an unknown version, is moved aside and the night recomputes; it is never fatal.

The steps run as separate graph nodes: tonight's progress (:class:`Carry`) travels with the lines each step hands to
the next (``_handoff``). A step that finds no hand-off (a resumed run in a new process) works from the files as
before, and no tallies are written that night.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import msgspec

from dreaming.memory.files import InputReport, atomic_write_json, move_aside, read_state
from dreaming.memory.verdicts._prices import ATR_DAYS, MIN_REGIME_ROWS, REGIMES, SLOPE_LOOKBACK, SMA_DAYS
from dreaming.memory.verdicts._records import (
    FLAT_CAP_PCT,
    K_FLAT,
    SIZE_SATURATION,
    VERDICTS,
    WINDOWS,
    future_day,
    future_message,
)
from dreaming.memory.workspace import Workspace

__all__ = [
    "TALLIES_VERSION",
    "BucketTally",
    "Carry",
    "LightTally",
    "RemTally",
    "Reported",
    "ReviewTally",
    "Stamp",
    "VerdictTallies",
    "Watermark",
    "constants",
    "file_stamp",
    "load_tallies",
    "mismatch",
    "save_tallies",
    "tallies_path",
]

TALLIES_VERSION = 1
_TAIL_BYTES = 64 * 1024


@functools.cache
def constants() -> str:
    """Return a digest of every fixed number the tallies are computed with: a code change to one recomputes them."""
    fixed = {
        "format": TALLIES_VERSION,
        "K_FLAT": K_FLAT,
        "FLAT_CAP_PCT": FLAT_CAP_PCT,
        "SIZE_SATURATION": SIZE_SATURATION,
        "WINDOWS": WINDOWS,
        "SMA_DAYS": SMA_DAYS,
        "SLOPE_LOOKBACK": SLOPE_LOOKBACK,
        "MIN_REGIME_ROWS": MIN_REGIME_ROWS,
        "ATR_DAYS": ATR_DAYS,
        "VERDICTS": VERDICTS,
        "REGIMES": REGIMES,
    }
    return hashlib.sha256(json.dumps(fixed, sort_keys=True).encode()).hexdigest()[:16]


def tallies_path(ws: Workspace) -> Path:
    """Return ``memory/.dreams/verdict-tallies.json``."""
    return ws.state_dir / "verdict-tallies.json"


Entry = tuple[str, int, str, str | None]
"""A reported line: file label, line number, reason, and for a verdict "dated after now" its date (ISO), since the
reason names today and is written anew each night."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Reported:
    """Lines a step reported: how many, and the first ones (as many as a report keeps)."""

    count: int = 0
    first: tuple[Entry, ...] = ()

    @classmethod
    def of(cls, report: InputReport) -> Reported:
        """Return what ``report`` holds."""
        return cls(
            count=report.count, first=tuple((b.path, b.line, b.reason, future_day(b.reason)) for b in report.bad)
        )

    def then(self, later: Reported, keep: int) -> Reported:
        """Return these lines followed by ``later`` ones, as one report keeping ``keep`` would hold them."""
        return Reported(count=self.count + later.count, first=(self.first + later.first)[:keep])

    def replay(self, report: InputReport, today: date) -> None:
        """Report these lines again into ``report``, exactly as reporting them one by one did (dated for ``today``)."""
        for path, line, reason, future in self.first:
            report.skip(path, line, reason if future is None else future_message(date.fromisoformat(future), today))
        report.count += self.count - len(self.first)


@dataclass(frozen=True, kw_only=True, slots=True)
class ReviewTally:
    """The review step's counts over every line read so far (see ``ReviewSummary``)."""

    reviewed: int = 0
    unreviewable: int = 0
    future: int = 0
    missing_prices: tuple[str, ...] = ()
    skipped: Reported = field(default_factory=Reported)
    """The verdict lines skipped, in line order."""
    looked_up: tuple[str, ...] = ()
    """The assets whose price file was looked up, in order."""
    price_rows: Reported = field(default_factory=Reported)
    """What loading those price files reported, in that order."""
    newest_past: str | None = None
    """The newest decision date (ISO) on or before that night's date: the tallies hold while today is not before it."""
    earliest_future: str | None = None
    """The earliest decision date refused as dated after now: the tallies hold while today is before it."""

    def then(self, later: ReviewTally, keep: int) -> ReviewTally:
        """Return the tally of these lines followed by ``later``'s (read with these assets looked up already)."""
        return ReviewTally(
            reviewed=self.reviewed + later.reviewed,
            unreviewable=self.unreviewable + later.unreviewable,
            future=self.future + later.future,
            missing_prices=tuple(sorted({*self.missing_prices, *later.missing_prices})),
            skipped=self.skipped.then(later.skipped, keep),
            looked_up=_then(self.looked_up, later.looked_up),
            price_rows=self.price_rows.then(later.price_rows, keep),
            newest_past=max(filter(None, (self.newest_past, later.newest_past)), default=None),
            earliest_future=min(filter(None, (self.earliest_future, later.earliest_future)), default=None),
        )

    def holds_on(self, today: date) -> bool:
        """Return whether every line would be accepted or refused as "dated after now" on ``today`` as it was."""
        iso = today.isoformat()
        return (self.newest_past is None or self.newest_past <= iso) and (
            self.earliest_future is None or iso < self.earliest_future
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class LightTally:
    """Light sleep's counts over every review line so far (see ``LightSummary``)."""

    ingested: int = 0
    immature: int = 0
    regime_from_prices: int = 0
    atr_filled: int = 0
    looked_up: tuple[str, ...] = ()
    price_rows: Reported = field(default_factory=Reported)

    def then(self, later: LightTally, keep: int) -> LightTally:
        """Return the tally of these lines followed by ``later``'s."""
        return LightTally(
            ingested=self.ingested + later.ingested,
            immature=self.immature + later.immature,
            regime_from_prices=self.regime_from_prices + later.regime_from_prices,
            atr_filled=self.atr_filled + later.atr_filled,
            looked_up=_then(self.looked_up, later.looked_up),
            price_rows=self.price_rows.then(later.price_rows, keep),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class BucketTally:
    """One bucket ``(asset, verdict, regime, window)`` of REM: everything its candidate is computed from."""

    asset: str
    verdict: str
    regime: str
    window: str
    n: int
    hits: int
    missed_up: int
    avoided_down: int
    wrong_way: int
    total_change_pct: float
    """The changes of the ``n`` samples added up in line order (the order decides the last bits of the mean)."""
    last_seen: str
    """The newest decision date among the samples (ISO)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RemTally:
    """REM's counts and buckets over every signal line so far, the buckets in the order of their first sample."""

    samples: int = 0
    exempted: int = 0
    unknown_regime: int = 0
    unclassifiable: int = 0
    buckets: tuple[BucketTally, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Watermark:
    """How far the review read ``verdicts.jsonl``."""

    offset: int = 0
    """Bytes read."""
    lines: int = 0
    """Lines read (the number of the last one)."""
    sha256: str = hashlib.sha256().hexdigest()
    """Of the bytes read."""
    whole_lines: bool = True
    """Whether they end with a newline: an open last line may still grow, so more bytes mean a new prefix."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Stamp:
    """An output file as a night left it."""

    size: int
    mtime_ns: int
    inode: int
    tail_sha256: str
    """Of its last 64 KiB."""


def file_stamp(path: Path) -> Stamp | None:
    """Return the stamp of ``path`` as it is now, or None when it cannot be read."""
    try:
        with path.open("rb") as handle:
            st = os.fstat(handle.fileno())
            handle.seek(max(0, st.st_size - _TAIL_BYTES))
            tail = handle.read(_TAIL_BYTES)
    except OSError:
        return None
    return Stamp(
        size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino, tail_sha256=hashlib.sha256(tail).hexdigest()
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class VerdictTallies:
    """The stored state: what tonight's review continues from, and what REM merges tonight's samples into."""

    version: int = TALLIES_VERSION
    constants: str
    """:func:`constants` when written."""
    keep: int
    """How many reported lines a report keeps (``InputReport.keep``)."""
    watermark: Watermark
    prices: dict[str, str]
    """A digest of each price file by name."""
    review_file: Stamp
    signals_file: Stamp
    review: ReviewTally
    light: LightTally
    rem: RemTally


@dataclass(frozen=True, kw_only=True, slots=True)
class Carry:
    """Tonight's progress along review -> light -> REM, handed on with the lines (see ``_handoff``)."""

    base: VerdictTallies | None
    """The tallies tonight continues from; None when it recomputes everything."""
    why: str
    """Why everything is recomputed ("" when tonight continues)."""
    keep: int
    watermark: Watermark
    prices: dict[str, str]
    review: ReviewTally
    review_file: Stamp | None = None
    light: LightTally | None = None
    signals_file: Stamp | None = None


def _then(first: tuple[str, ...], later: tuple[str, ...]) -> tuple[str, ...]:
    seen = set(first)
    return first + tuple(a for a in later if a not in seen)


def load_tallies(ws: Workspace, *, now: datetime) -> tuple[VerdictTallies | None, str]:
    """Read the stored tallies; return them, or None and why not (an unusable file is moved aside)."""
    path = tallies_path(ws)
    loaded = read_state(path, versions=(TALLIES_VERSION,), now=now)
    if loaded.data is None:
        if loaded.problem:
            return None, f"{ws.relative(path)} {loaded.problem}; moved aside to {loaded.moved_aside}"
        return None, "no tallies yet"
    try:
        return msgspec.convert(loaded.data, VerdictTallies, strict=True), ""
    except msgspec.ValidationError as exc:
        moved = move_aside(path, now)
        return None, f"{ws.relative(path)} is not usable ({exc}); moved aside to {moved}"


def mismatch(ws: Workspace, tallies: VerdictTallies, *, today: date, prices: dict[str, str], keep: int) -> str:
    """Return why ``tallies`` cannot be continued tonight, or "" when they can (the watermark is checked apart)."""
    if tallies.constants != constants():
        return "the verdict path's constants changed"
    if tallies.keep != keep:
        return "the report keeps another number of lines"
    if tallies.prices != prices:
        changed = sorted(set(tallies.prices.items()) ^ set(prices.items()))
        return f"price files changed: {', '.join(sorted({name for name, _ in changed}))}"
    if not tallies.review.holds_on(today):
        return f"today ({today.isoformat()}) moves a verdict across the 'dated after now' line"
    for name, path, stamp in (
        ("verdict_review.jsonl", ws.verdict_review, tallies.review_file),
        ("verdict-signals.jsonl", ws.verdict_signals, tallies.signals_file),
    ):
        if file_stamp(path) != stamp:
            return f"{name} is not as the last night left it"
    return ""


def save_tallies(ws: Workspace, carry: Carry, rem: RemTally, *, now: datetime, prices: dict[str, str]) -> bool:
    """Write the tallies of tonight's chain, last; return False (writing nothing) when they would not be exact.

    They are not written when light sleep did not run on tonight's review, or when the outputs or price files
    changed since the steps used them (``prices`` is their digest now).
    """
    if carry.light is None or carry.review_file is None or carry.signals_file is None or prices != carry.prices:
        return False
    if file_stamp(ws.verdict_review) != carry.review_file or file_stamp(ws.verdict_signals) != carry.signals_file:
        return False
    tallies = VerdictTallies(
        constants=constants(),
        keep=carry.keep,
        watermark=carry.watermark,
        prices=carry.prices,
        review_file=carry.review_file,
        signals_file=carry.signals_file,
        review=carry.review,
        light=carry.light,
        rem=rem,
    )
    atomic_write_json(tallies_path(ws), msgspec.to_builtins(tallies))
    return True
