"""The dream diary ``DREAMS.md``: one entry per run, appended atomically, never a promotion source."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from dreaming.memory._io import atomic_write_text
from dreaming.memory._workspace import Workspace

__all__ = ["DIARY_HEADING", "DiaryEntry", "DiarySection", "append_diary_entry", "render_diary_entry"]

DIARY_HEADING = "# Dream Diary\n"
MAX_LISTED = 12
"""Longer lists in a section are cut to this many lines plus a count of the rest."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DiarySection:
    """One titled block of an entry."""

    title: str
    """Heading text, e.g. ``Verdicts``."""
    lines: Sequence[str] = ()
    """Bullet lines, without the leading ``- ``."""
    raw: str = ""
    """Pre-rendered markdown placed after the bullets (e.g. the REM Research section)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DiaryEntry:
    """Everything one run writes into the diary."""

    run_id: str
    """The run; its marker makes appending idempotent."""
    now: datetime
    """The night's 'now'."""
    trigger: str = "run"
    """``run`` (scheduled), ``now`` (on demand) or ``eval``."""
    narrative: str | None = None
    """An optional model-written paragraph."""
    sections: Sequence[DiarySection] = field(default_factory=tuple)
    """The factual blocks."""


def _marker(run_id: str) -> str:
    return f"<!-- dreaming:run:{run_id} -->"


def render_diary_entry(entry: DiaryEntry) -> str:
    """Render one entry as markdown (no trailing separator)."""
    out = [
        f"## {entry.now.date().isoformat()} ({entry.trigger}, {entry.now.strftime('%H:%M')} UTC)",
        _marker(entry.run_id),
        "",
    ]
    if entry.narrative:
        out += [entry.narrative.strip(), ""]
    for section in entry.sections:
        out.append(f"### {section.title}")
        lines = list(section.lines)
        shown = lines[:MAX_LISTED]
        out += [f"- {line}" for line in shown]
        if len(lines) > len(shown):
            out.append(f"- ... and {len(lines) - len(shown)} more")
        if section.raw:
            if lines:
                out.append("")
            out.append(section.raw.rstrip("\n"))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def append_diary_entry(ws: Workspace, entry: DiaryEntry) -> bool:
    """Append ``entry`` to DREAMS.md atomically; return False when this run's entry is already there."""
    try:
        current = ws.dreams_md.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = DIARY_HEADING
    if _marker(entry.run_id) in current:
        return False
    if not current.endswith("\n"):
        current += "\n"
    text = current + "\n" + render_diary_entry(entry)
    atomic_write_text(ws.dreams_md, text)
    return True
