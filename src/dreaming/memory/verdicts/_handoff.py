"""An in-process hand-off between verdict steps: the lines a step just wrote, kept so the next step need not parse.

The steps run as separate graph nodes in one process; light sleep would otherwise re-parse the million lines review
has just rendered, and REM those light sleep rendered. A step that writes its output offers the parsed form of that
output here (:func:`hand_off`); the next step takes it (:func:`take_over`) only when the file on disk is still the one
it describes, else it parses the file as usual. Correctness never depends on it: a resumed run in a new process finds
nothing here and parses, and both paths feed the same code (``tests/memory/verdicts`` runs every step with and without
the hand-off and compares the bytes).

One generation only: offering replaces what was held, and taking drops it whether it matched or not. The file is
recognised by ``(path, device, inode, size, mtime_ns)``: every write of these files is an atomic replace (a new
inode), and an edit in place changes the size or the mtime, so no content hash is needed.

The records are columns (arrays of small ints) plus one tuple per distinct ``(asset, decision date)``: about 7 bytes a
line, so a million lines cost a few MiB, not the ~150 bytes of a tuple (or ~600 of a dict) per line.
"""

from __future__ import annotations

import os
import threading
from array import array
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from dreaming.memory.files import InputReport
from dreaming.memory.verdicts._tallies import Carry

__all__ = ["ReviewedLines", "SignalLines", "drop", "drop_future", "hand_off", "no_lines", "take_over"]

_T = TypeVar("_T", "ReviewedLines", "SignalLines")


@dataclass(frozen=True, slots=True)
class ReviewedLines:
    """``verdict_review.jsonl`` as light sleep reads it: valid lines only, in file order, repeated parts shared."""

    groups: list[tuple[date, str, str | None, tuple[str | None, ...]]]
    """Per group: decision date, asset, ``atr_pct`` as rendered (None for null), and the outcome ``change_pct`` of each
    window in ``_WINDOW_KEYS`` order as rendered by :func:`format_number` (None when the window has not matured)."""
    group: array[int]
    """Per line: its index in ``groups``."""
    verdict: bytearray
    """Per line: its index in ``VERDICTS``."""
    shock: bytearray
    """Per line: 1 when ``macro_shock``."""
    regime: bytearray
    """Per line: the index in ``REGIMES`` of the line's own ``regime`` field (``unknown`` when absent or invalid)."""
    numbers: array[int]
    """Per line: its line number in the file (for reports)."""
    carry: Carry | None = None
    """Tonight's progress towards the stored tallies, when these lines continue them or start them anew."""


@dataclass(frozen=True, slots=True)
class SignalLines:
    """``verdict-signals.jsonl`` as REM sleep reads it: valid lines only, in file order, repeated parts shared."""

    groups: list[tuple[date, str, float | None, tuple[float | None, ...]]]
    """Per group: decision date, asset, ``atr_pct`` (None for null), and the ``change_pct`` of each window in
    ``WINDOWS`` order (None when missing or not a number: that window is left out)."""
    group: array[int]
    """Per line: its index in ``groups``."""
    verdict: bytearray
    """Per line: its index in ``VERDICTS``."""
    shock: bytearray
    """Per line: 1 when ``macro_shock``."""
    regime: bytearray
    """Per line: the index of its regime in ``REGIMES``."""
    numbers: array[int]
    """Per line: its line number in the file (for reports)."""
    carry: Carry | None = None
    """Tonight's progress towards the stored tallies, when these lines continue them or start them anew."""


def no_lines(kind: type[_T], groups: list[Any] | None = None) -> _T:
    """Return a ``kind`` with no lines yet, over ``groups`` (a new empty list when None)."""
    return kind([] if groups is None else groups, array("I"), bytearray(), bytearray(), bytearray(), array("I"))


_Stamp = tuple[str, int, int, int, int]
_lock = threading.Lock()
_held: tuple[_Stamp, ReviewedLines | SignalLines] | None = None


def _stamp(path: Path) -> _Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.fspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def hand_off(path: Path, lines: ReviewedLines | SignalLines) -> None:
    """Hold ``lines``, the parsed form of ``path`` as just written, for the next step (replacing anything held)."""
    global _held
    stamp = _stamp(path)
    with _lock:
        _held = None if stamp is None else (stamp, lines)


def take_over(path: Path, kind: type[_T]) -> _T | None:
    """Return the held lines when they describe ``path`` as it is now on disk, else None; drop them either way."""
    global _held
    with _lock:
        held, _held = _held, None
    if held is None or not isinstance(held[1], kind) or held[0] != _stamp(path):
        return None
    return held[1]


def drop() -> None:
    """Forget whatever is held (tests use it to run a step as a fresh process would)."""
    global _held
    with _lock:
        _held = None


def drop_future(lines: _T, today: date, report: InputReport, label: str) -> _T:
    """Return ``lines`` without those dated after ``today``, each reported as parsing would have reported it.

    Held lines were valid for the ``now`` of the step that wrote them; the next step may run with an earlier one.
    """
    late = {g for g, group in enumerate(lines.groups) if group[0] > today}
    if not late:
        return lines
    keep = [i for i, g in enumerate(lines.group) if g not in late]
    for i, g in enumerate(lines.group):
        if g in late:
            day = lines.groups[g][0]
            report.skip(label, lines.numbers[i], f"decision_date {day.isoformat()} is after now ({today.isoformat()})")
    return replace(
        lines,
        group=array("I", (lines.group[i] for i in keep)),
        verdict=bytearray(lines.verdict[i] for i in keep),
        shock=bytearray(lines.shock[i] for i in keep),
        regime=bytearray(lines.regime[i] for i in keep),
        numbers=array("I", (lines.numbers[i] for i in keep)),
    )
