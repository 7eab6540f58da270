"""Recognise dreaming's own output so it is never recorded or promoted (OpenClaw #67580, #75842).

A snippet is contaminated when it is a staged light/REM candidate (a ``Candidate:``/``Reflections:`` lead near the
start together with ``confidence:``, ``evidence: memory/``, ``status: staged`` and ``recalls: N``), carries a promotion
marker, or echoes the diary prompt. A snippet that merely mentions one of these words is kept.
"""

from __future__ import annotations

import re

from dreaming.memory.search._chunks import FENCE_END, FENCE_START

__all__ = [
    "DIARY_PROMPT",
    "FENCE_END",
    "FENCE_START",
    "PROMOTION_MARKER_PREFIX",
    "is_contaminated_snippet",
    "is_unpromotable_snippet",
    "line_range_overlaps_dreaming_fence",
]

PROMOTION_MARKER_PREFIX = "<!-- openclaw-memory-promotion:"
"""How the marker comment above each promoted entry in MEMORY.md starts (the entry's key follows)."""
DIARY_PROMPT = "Write a dream diary entry from these memory fragments:"
"""The opening of the dream-diary prompt; a snippet that echoes it is contaminated."""

_LEAD_NOISE = re.compile(r"^(?:\s|[\[\(]|@@[^@]*@@|[-*+]\s|>)+")
_LEAD = re.compile(r"\b(?:Candidate|Reflections):")
_CONFIDENCE = re.compile(r"\bconfidence:\s*\d")
_EVIDENCE = re.compile(r"\bevidence:\s*memory/")
_STAGED = re.compile(r"\bstatus:\s*staged\b")
_RECALLS = re.compile(r"\brecalls:\s*\d+")
_NARRATIVE_SOURCE = re.compile(r"dreaming-narrative-[\w-]*\.jsonl")
_SKELETON = re.compile(r"^(?:[#>*_`|~=\-+\s]|<!--.*?-->|\[[ xX]?\])*$")


def is_contaminated_snippet(snippet: str) -> bool:
    """Return whether ``snippet`` is dreaming output rather than something the agent wrote or recalled."""
    # Every marker below holds one of these three: ranking a 20,000-entry store asks this of every snippet, and a
    # one-character scan is several times cheaper than a substring search.
    if not (
        (":" in snippet and ("status:" in snippet or "fragments:" in snippet))
        or ("<" in snippet and "<!--" in snippet)
        or ("." in snippet and ".jsonl" in snippet)
    ):
        return False
    if PROMOTION_MARKER_PREFIX in snippet or DIARY_PROMPT in snippet or _NARRATIVE_SOURCE.search(snippet):
        return True
    head = _LEAD_NOISE.sub("", snippet)[:200]
    if not _LEAD.search(head):
        return False
    return all(p.search(snippet) for p in (_CONFIDENCE, _EVIDENCE, _STAGED, _RECALLS))


def is_unpromotable_snippet(snippet: str) -> bool:
    """Return whether ``snippet`` must never be promoted: contaminated, or only markdown skeleton and markers."""
    if is_contaminated_snippet(snippet):
        return True
    # A snippet that opens with a letter or digit cannot be skeleton: skip the strip and the match.
    return not snippet[:1].isalnum() and bool(_SKELETON.match(snippet.strip()))


def line_range_overlaps_dreaming_fence(lines: list[str], start: int, end: int) -> bool:
    """Return whether 1-based lines ``start..end`` touch an ``openclaw:dreaming:*`` managed block (fences included)."""
    open_at: int | None = None
    for number, line in enumerate(lines, start=1):
        if open_at is None and FENCE_START.search(line):
            open_at = number
        if open_at is not None and FENCE_END.search(line):
            if start <= number and end >= open_at:
                return True
            open_at = None
        if number > end and open_at is None:
            return False
    return open_at is not None and end >= open_at
