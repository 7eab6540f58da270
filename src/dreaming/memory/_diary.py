"""The dream diary ``DREAMS.md``: one entry per run, appended atomically, never a promotion source."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from dreaming.memory._decode import decode_keeping_bytes, encode_keeping_bytes
from dreaming.memory._io import atomic_write_bytes
from dreaming.memory._workspace import Workspace

__all__ = ["DIARY_HEADING", "DiaryEntry", "DiarySection", "append_diary_entry", "render_diary_entry"]

DIARY_HEADING = "# Dream Diary\n"
DIARY_MAX_BYTES = 512 * 1024
"""Past this size the diary is moved to ``memory/dreaming/diary/`` and a new one begins (stores stay bounded)."""
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


def _rotate(ws: Workspace, current: str, entry: DiaryEntry) -> str:
    """Move a diary past :data:`DIARY_MAX_BYTES` to ``memory/dreaming/diary/`` and return the fresh diary's text."""
    folder = ws.reports_dir / "diary"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"DREAMS-until-{entry.now.date().isoformat()}.md"
    counter = 1
    while target.exists():
        target = folder / f"DREAMS-until-{entry.now.date().isoformat()}-{counter}.md"
        counter += 1
    atomic_write_bytes(target, encode_keeping_bytes(current))
    return f"{DIARY_HEADING}\nEarlier entries: `{ws.relative(target)}`.\n"


def append_diary_entry(ws: Workspace, entry: DiaryEntry) -> bool:
    """Append ``entry`` to DREAMS.md atomically; return False when this run's entry is already there.

    The diary stays bounded: once it passes :data:`DIARY_MAX_BYTES`, it is kept whole under
    ``memory/dreaming/diary/`` (never indexed as memory) and a fresh DREAMS.md starts with a link to it.
    Bytes a user left in it that are not UTF-8 are kept byte for byte.
    """
    try:
        current = decode_keeping_bytes(ws.dreams_md.read_bytes())
    except FileNotFoundError:
        current = DIARY_HEADING
    if _marker(entry.run_id) in current:
        return False
    if len(encode_keeping_bytes(current)) > DIARY_MAX_BYTES:
        current = _rotate(ws, current, entry)
    if not current.endswith("\n"):
        current += "\n"
    text = current + "\n" + render_diary_entry(entry)
    atomic_write_bytes(ws.dreams_md, encode_keeping_bytes(text))
    return True
