"""Write promotions into MEMORY.md: rehydrate from the live note, refuse fenced ranges, mark idempotently, budget.

Each promoted entry becomes, under ``## Promoted From Short-Term Memory (YYYY-MM-DD)``::

    <!-- openclaw-memory-promotion:<key> -->
    - <text> [score=0.000 recalls=N avg=0.000 source=<path>:<start>-<end>]

An entry whose marker is already in MEMORY.md is reconciled (marked promoted, nothing appended). When the file would
pass the size budget, the oldest sections made only of generated promotions are dropped; user text never is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dreaming.memory._secrets import redact_secrets
from dreaming.memory.recall._contamination import (
    PROMOTION_MARKER_PREFIX,
    is_unpromotable_snippet,
    line_range_overlaps_dreaming_fence,
)
from dreaming.memory.recall._ingest import heading_contexts, note_snippet
from dreaming.memory.recall._ranking import Candidate

__all__ = [
    "MEMORY_HEADER",
    "SECTION_TITLE",
    "PlannedPromotion",
    "compact_memory_for_budget",
    "plan_promotion",
    "promotion_marker",
    "rehydrate",
    "render_memory_update",
]

MEMORY_HEADER = "# Long-Term Memory"
"""The first line of a MEMORY.md that promotion creates."""
SECTION_TITLE = "Promoted From Short-Term Memory"
"""The title of the dated ``## <title> (YYYY-MM-DD)`` section that one night's promotions go under."""
_SECTION = re.compile(r"^## Promoted From Short-Term Memory \((\d{4}-\d{2}-\d{2})\)\s*$")
"""A promotion section's heading; group 1 is its date."""
_MARKER_TOKEN = re.compile(r"[-*+]|\d+[.)]|#{1,6}")
"""List bullets and heading marks. Snippets are whitespace-collapsed, so they are compared token by token with
these marks dropped wherever they stand: a chunk recorded from lines 3-5 still matches lines 3-5."""


def promotion_marker(key: str) -> str:
    """Return ``<!-- openclaw-memory-promotion:<key> -->``."""
    return f"{PROMOTION_MARKER_PREFIX}{key} -->"


def _norm(text: str) -> str:
    return " ".join(text.split())


def _norm_lines(lines: Sequence[str]) -> str:
    return " ".join(token for token in " ".join(lines).split() if not _MARKER_TOKEN.fullmatch(token))


def _kind(target: str, text: str) -> int:
    """Return how a window's text matches: 3 equal, 2 it holds the target, 1 the target holds it, 0 not at all."""
    return 3 if text == target else 2 if target in text else 1 if text and text in target else 0


def _match(
    lines: Sequence[str], contexts: Sequence[str], target: str, marks: str, first: int, last: int
) -> tuple[int, str]:
    """Return how well lines ``first..last`` match a snippet, and the window as a snippet line to show.

    A window is compared as a snippet read without and with the heading it sits under (:func:`note_snippet`, how
    snippets are recorded), and token by token with markdown marks dropped (``marks``: how older stores recorded a
    chunk, ``## Committee - The CIO ...``). It is shown in the reading the snippet has when that reading is equal,
    else with its heading.
    """
    window = lines[first - 1 : last]
    own, under = note_snippet(window), note_snippet(window, heading=contexts[first - 1])
    kind = max(_kind(target, own), _kind(target, under), _kind(marks, _norm_lines(window)))
    return kind, own if own == target else under


def _locate(lines: Sequence[str], snippet: str, start: int, end: int) -> tuple[int, int, str] | None:
    """Return the 1-based range ``snippet`` now occupies in the live note and the window as a snippet line."""
    target, marks = _norm(snippet), _norm_lines(snippet.splitlines())
    if not target or not marks:
        return None
    contexts = heading_contexts(lines)
    lo, hi = max(1, start), min(len(lines), end)
    while lo <= hi and not lines[lo - 1].strip():
        lo += 1
    while hi >= lo and not lines[hi - 1].strip():
        hi -= 1
    if lo <= hi:
        kind, text = _match(lines, contexts, target, marks, lo, hi)
        if kind == 3:
            return lo, hi, text
    span = max(1, end - start + 1)
    best: tuple[tuple[int, int, int], tuple[int, int, str]] | None = None
    for first in range(1, len(lines) + 1):
        if not lines[first - 1].strip():
            continue
        for size in range(1, max(span + 3, 8) + 1):
            last = first + size - 1
            if last > len(lines):
                break
            kind, text = _match(lines, contexts, target, marks, first, last)
            if not kind:
                continue
            rank = (-kind, abs(first - start), abs(size - span))
            if best is None or rank < best[0]:
                best = (rank, (first, last, text))
    return best[1] if best else None


def rehydrate(lines: Sequence[str], snippet: str, start: int, end: int) -> tuple[int, int] | None:
    """Find ``snippet`` in the live note; return the 1-based range it now occupies, or None.

    The recorded range wins when it still holds the text (blank edge lines trimmed). Otherwise every window of up to
    ``max(span + 3, 8)`` lines is tried: exact match beats a window containing the text, which beats a window the text
    contains; then the nearest start, then the span closest to the recorded one. A window matches as OpenClaw reads
    one: as a snippet line with or without the heading it sits under, or with its markdown marks dropped.
    """
    found = _locate(lines, snippet, start, end)
    return None if found is None else found[:2]


@dataclass(frozen=True, kw_only=True, slots=True)
class PlannedPromotion:
    """A candidate resolved against its live note, ready to be written."""

    candidate: Candidate
    """The ranked candidate."""
    start_line: int
    """Rehydrated first line."""
    end_line: int
    """Rehydrated last line."""
    text: str
    """The live lines as one snippet line, with the heading they sit under (``Committee: The CIO asked ...``)."""


def plan_promotion(candidate: Candidate, note_lines: Sequence[str] | None) -> PlannedPromotion | str:
    """Resolve a candidate against its note; return the plan or the reason it is refused.

    Reasons: ``unpromotable``, ``note_missing``, ``snippet_not_found``, ``fenced``, ``holds_secret`` (the live lines
    hold a secret :func:`dreaming.memory.redact_secrets` would hide: never copied into MEMORY.md).
    """
    if is_unpromotable_snippet(candidate.snippet):
        return "unpromotable"
    if note_lines is None:
        return "note_missing"
    found = _locate(note_lines, candidate.snippet, candidate.start_line, candidate.end_line)
    if found is None:
        return "snippet_not_found"
    first, last, text = found
    if line_range_overlaps_dreaming_fence(list(note_lines), first, last):
        return "fenced"
    raw = _norm(" ".join(line.strip() for line in note_lines[first - 1 : last]))
    if is_unpromotable_snippet(raw) or is_unpromotable_snippet(text):
        return "unpromotable"
    if redact_secrets(raw) != raw:
        return "holds_secret"  # the note is the one place a secret may stay; MEMORY.md is read by every session
    return PlannedPromotion(candidate=candidate, start_line=first, end_line=last, text=text)


def _bullet(plan: PlannedPromotion) -> str:
    c = plan.candidate
    body = plan.text if plan.text.startswith(("- ", "* ")) else f"- {plan.text}"
    source = f"{c.path}:{plan.start_line}-{plan.end_line}"
    return f"{body} [score={c.score:.3f} recalls={c.recall_count} avg={c.avg_score:.3f} source={source}]"


def render_memory_update(current: str | None, plans: Sequence[PlannedPromotion], day: str) -> str:
    """Return MEMORY.md with a section for ``day`` holding ``plans`` appended (the file is created if absent)."""
    text = current if current is not None else f"{MEMORY_HEADER}\n"
    if not plans:
        return text
    block = []
    for plan in plans:
        block += [promotion_marker(plan.candidate.key), _bullet(plan)]
    header = f"## {SECTION_TITLE} ({day})"
    headers = [line for line in text.splitlines() if line.startswith("## ")]
    body = text.rstrip("\n")
    if headers and headers[-1].strip() == header:
        return body + "\n" + "\n".join(block) + "\n"
    return body + "\n\n" + header + "\n" + "\n".join(block) + "\n"


def _sections(lines: list[str]) -> list[tuple[int, int, str | None]]:
    starts = [i for i, line in enumerate(lines) if line.startswith("## ")]
    out = []
    for n, first in enumerate(starts):
        last = starts[n + 1] if n + 1 < len(starts) else len(lines)
        match = _SECTION.match(lines[first])
        out.append((first, last, match.group(1) if match else None))
    return out


def _generated_only(lines: list[str]) -> bool:
    previous_marker = False
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(PROMOTION_MARKER_PREFIX):
            previous_marker = True
            continue
        if not (previous_marker and stripped.startswith("- ")):
            return False
        previous_marker = False
    return True


def compact_memory_for_budget(text: str, max_chars: int, *, keep_day: str | None = None) -> tuple[str, list[str]]:
    """Drop the oldest fully generated promotion sections until ``text`` fits ``max_chars``.

    Sections holding anything but markers and their bullets (user text) are never dropped, nor is ``keep_day``'s.
    Returns the new text and the dates of the dropped sections.
    """
    if len(text) <= max_chars or max_chars <= 0:
        return text, []
    lines = text.splitlines()
    droppable = [
        (day, first, last)
        for first, last, day in _sections(lines)
        if day is not None and day != keep_day and _generated_only(lines[first + 1 : last])
    ]
    droppable.sort()
    dropped: set[int] = set()
    dates: list[str] = []
    size = len(text)
    for day, first, last in droppable:
        if size <= max_chars:
            break
        size -= sum(len(line) + 1 for line in lines[first:last])
        dropped.update(range(first, last))
        dates.append(day)
    kept = [line for i, line in enumerate(lines) if i not in dropped]
    result = "\n".join(kept).rstrip("\n") + "\n"
    return re.sub(r"\n{3,}", "\n\n", result), dates
