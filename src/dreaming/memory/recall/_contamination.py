"""Recognise dreaming's own output so it is never recorded or promoted (OpenClaw #67580, #75842).

Exactly OpenClaw 2026.9.6's ``isContaminatedDreamingSnippet`` (``short-term-promotion-store-*.mjs``), on the snippet
with its whitespace collapsed. A snippet is contaminated when it holds any of:

- a promotion marker (``<!-- openclaw-memory-promotion:``);
- the diary prompt echoed from a narrative transcript (``[...dreaming-narrative...] User: Write a dream diary entry
  from these memory fragments``);
- raw session metadata (``Session Key`` and ``Session ID`` within 260 characters), a ``Conversation Summary:`` lead,
  a raw ``User:``/``Assistant:`` turn (allowed in session corpora, which are made of them), the memory-flush prompt,
  or a promoted bullet's ``[score=... recalls=... avg=... source=memory/`` annotation;
- a staged light/REM block: a ``Candidate:``/``Reflections:`` lead near the start (after brackets, bullets and diff
  hunks) with ``confidence: <digit>`` and ``evidence: memory/...``, and either ``status: staged`` with ``recalls: N``
  or ``note: reflection``.

A snippet that merely mentions one of these words is kept. OpenClaw's patterns are JS regular expressions without the
``u`` flag: ASCII word boundaries and digits, ASCII-only case folding for their ASCII letters, and ``.`` counting UTF-16
units; they run here on the UTF-16 form of the snippet, so all of that holds.
"""

from __future__ import annotations

import re

from dreaming.memory.recall._js import js_collapse_whitespace, utf16_truncate
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
"""The opening of the dream-diary prompt; a narrative transcript line that echoes it is contaminated."""

# On a collapsed snippet the only whitespace left is " ", so ASCII ``\s`` sees what JS ``\s`` sees.
_FLAGS = re.ASCII | re.IGNORECASE
_ANYWHERE = re.compile(
    "|".join(
        (
            r"<!--\s*openclaw-memory-promotion:",
            r"\[[^\]]*dreaming-narrative[^\]]*]\s*(?:User|Assistant):\s*"
            r"Write a dream diary entry from these memory fragments:?",
            r"\bSession Key\b.{0,260}\bSession ID\b|\bSession ID\b.{0,260}\bSession Key\b",
            r"^(?:[-*+]\s*)?Conversation Summary:",
            r"Save important context from this session to the daily memory file\.\s*STRICT RULES:",
            r"\[\s*score=\d+(?:\.\d+)?\s+(?:signals=\d+\s+)?recalls=\d+\s+avg=\d+(?:\.\d+)?\s+source=memory/",
        )
    ),
    _FLAGS,
)
_TRANSCRIPT_TURN = re.compile(r"^(?:[-*+]\s*)?(?:user|assistant):\s", _FLAGS)
_DIFF_PREFIX = re.compile(r"@@\s*-\d+(?:,\d+)?\s+[-*+]\s+", _FLAGS)
_LEAD_AT_START = re.compile(r"(?:Candidate|Reflections?):", _FLAGS)
_LEAD_IN_HEAD = re.compile(r"\b(?:Candidate|Reflections?):|#{1,6}\s+Reflections?\b", _FLAGS)
_CONFIDENCE = re.compile(r"\bconfidence:\s*\d", _FLAGS)
_EVIDENCE = re.compile(r"\bevidence:\s*(?:memory/\.dreams/session-corpus/|memory/)", _FLAGS)
_STAGED = re.compile(r"\bstatus:\s*staged\b", _FLAGS)
_RECALLS = re.compile(r"\brecalls:\s*\d+\b", _FLAGS)
_REFLECTION_NOTE = re.compile(r"\bnote:\s*reflection\b", _FLAGS)
_SKELETON = re.compile(r"^(?:[#>*_`|~=\-+\s]|<!--.*?-->|\[[ xX]?\])*$")


def _as_utf16_units(text: str) -> str:
    # Each character outside the BMP as its two surrogates, so ``.{0,260}`` counts what a JS regex counts.
    if text.isascii() or max(text) <= "\uffff":
        return text
    return "".join(c if c <= "\uffff" else chr(0xD7C0 + (ord(c) >> 10)) + chr(0xDC00 + (ord(c) & 0x3FF)) for c in text)


def _lead_prefix_end(snippet: str) -> int:
    # Skip what may stand before a staged block's lead: diff hunks, opening brackets, bullets and quote markers.
    index = 0
    while index < len(snippet):
        hunk = _DIFF_PREFIX.match(snippet, index)
        if hunk:
            index = hunk.end()
            continue
        char = snippet[index]
        if char in "[(":
            index += 1
            while index < len(snippet) and snippet[index] == " ":
                index += 1
            continue
        if char in "-*+>" and snippet[index + 1 : index + 2] == " ":
            index += 2
            continue
        break
    return index


def _has_narrative_lead(snippet: str) -> bool:
    rest = snippet[_lead_prefix_end(snippet) :]
    if _LEAD_AT_START.match(rest):
        return True
    return bool(_LEAD_IN_HEAD.search(utf16_truncate(rest, 200)))


def is_contaminated_snippet(snippet: str, *, allow_transcript_turn: bool = False, collapsed: bool = False) -> bool:
    """Return whether ``snippet`` is dreaming output or a raw transcript rather than something worth keeping.

    Args:
        snippet: the snippet as recorded or stored (its whitespace is collapsed first).
        allow_transcript_turn: accept a snippet that opens with ``User:``/``Assistant:``; OpenClaw passes this for
            session-corpus paths, whose lines are such turns.
        collapsed: ``snippet`` is already collapsed (as a normalized entry's is): skip that step.
    """
    text = snippet if collapsed else js_collapse_whitespace(snippet)
    if not text:
        return False
    units = _as_utf16_units(text)
    if not allow_transcript_turn and _TRANSCRIPT_TURN.match(units):
        return True
    # Each pattern holds one of these words: most snippets are cleared by a few substring tests, not six regexes.
    # A word is only looked for when its punctuation is there (a one-character test is the cheapest).
    low = text.lower()
    colon = ":" in low
    if (
        "session" in low
        or ("<" in low and "<!--" in low)
        or ("=" in low and "score=" in low)
        or ("-" in low and "dreaming-narrative" in low)
        or (colon and ("summary:" in low or "strict rules:" in low))
    ) and _ANYWHERE.search(units):
        return True
    if not colon or "confidence:" not in low or not _CONFIDENCE.search(units) or not _EVIDENCE.search(units):
        return False
    if not _has_narrative_lead(text):
        return False
    return bool((_STAGED.search(units) and _RECALLS.search(units)) or _REFLECTION_NOTE.search(units))


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
