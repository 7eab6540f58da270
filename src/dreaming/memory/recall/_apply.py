"""Write promotions into MEMORY.md exactly as OpenClaw 2026.9 does: rehydration, the bytes, the size budget.

Each promoted entry becomes, in a new ``## Promoted From Short-Term Memory (YYYY-MM-DD)`` section::

    <!-- openclaw-memory-promotion:<key> -->
    - <text> [score=S signals=G recalls=R avg=A source=<path>:<start>-<end>] <!-- trigger: T --> <!-- importance: N -->

A new file starts ``# Long-Term Memory`` and two blank lines; the text is the rehydrated snippet without one leading
list mark, cut near ``max_promoted_snippet_tokens * 4`` UTF-16 units; candidates of several projects are grouped. When
the file would pass its budget the oldest sections made only of generated promotions are dropped, but never more
than ``max_prior_entry_loss_fraction`` of the earlier entries; what still does not fit waits ("memory budget").

Two invariants of this project hold in both modes: user text is never rewritten (a dropped section takes only its own
lines; a CRLF file keeps its line endings where OpenClaw would turn them into LF), and nothing that holds a secret is
copied into MEMORY.md. With ``[recall] openclaw_compat = false`` rehydration is this project's (:func:`rehydrate`),
which also finds snippets recorded by older versions and never starts a range on a blank line.
"""

from __future__ import annotations

import math
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
from dreaming.memory.recall._js import (
    js_collapse_whitespace,
    js_round,
    js_trim,
    js_trim_end,
    locale_compare_key,
    to_fixed,
    utf16_len,
    utf16_truncate,
)
from dreaming.memory.recall._ranking import Candidate

__all__ = [
    "MEMORY_PREAMBLE",
    "SECTION_TITLE",
    "WRITE_OVERHEAD_RESERVE",
    "PlannedPromotion",
    "PromotionLine",
    "budgeted_memory_append",
    "build_promotion_section",
    "compact_memory_for_budget",
    "extract_promotion_keys",
    "format_promoted_snippet",
    "overlaps_managed_fence",
    "plan_promotion",
    "promotion_annotations",
    "promotion_marker",
    "rehydrate",
    "relocate_candidate_range",
]

MEMORY_PREAMBLE = "# Long-Term Memory\n\n"
"""What promotion puts before an empty (or whitespace-only) MEMORY.md."""
SECTION_TITLE = "Promoted From Short-Term Memory"
"""The title of the dated ``## <title> (YYYY-MM-DD)`` section that one run's promotions go under."""
WRITE_OVERHEAD_RESERVE = 21
"""Characters of the budget kept back for the preamble (20) and a final newline (1), as OpenClaw keeps them."""
_MAX_TRIGGER_CHARS = 64
_CHARS_PER_TOKEN = 4
_MARKER_TOKEN = re.compile(r"[-*+]|\d+[.)]|#{1,6}")
"""List bullets and heading marks. Snippets are whitespace-collapsed, so they are compared token by token with
these marks dropped wherever they stand: a chunk recorded from lines 3-5 still matches lines 3-5."""


# --- OpenClaw's rehydration (``relocateCandidateRange``, §7.1) -----------------------------------------------------

_LIST_MARKER = re.compile(r"^(?:\d+\.\s+|[-*+]\s+)")
_HEADING_LINE = re.compile(r"^#{1,6}\s+(.+)$", re.S)
_SHORT_TERM_BASENAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:-[^/]+)?\.md$")
_GENERIC_DAY_HEADING = re.compile(
    r"^(?:(?:mon|monday|tue|tues|tuesday|wed|wednesday|thu|thur|thurs|thursday|fri|friday|sat|saturday|sun|sunday)"
    r"(?:,\s+)?)?(?:(?:jan|january|feb|february|mar|march|apr|april|may|jun|june|jul|july|aug|august|sep|sept|"
    r"september|oct|october|nov|november|dec|december)\s+\d{1,2}(?:st|nd|rd|th)?(?:,\s*\d{4})?|"
    r"\d{1,2}[/-]\d{1,2}(?:[/-]\d{2,4})?|\d{4}[/-]\d{2}[/-]\d{2})$",
    re.I,
)
_GENERIC_WORDS = frozenset(
    {"light sleep", "rem sleep", "today", "yesterday", "tomorrow", "morning", "afternoon", "evening", "night"}
)
_FENCE_START = re.compile(r"<!--\s*openclaw:dreaming:[a-z][a-z0-9-]*:start\s*-->", re.I)
_FENCE_END = re.compile(r"<!--\s*openclaw:dreaming:[a-z][a-z0-9-]*:end\s*-->", re.I)


def _range_text(lines: Sequence[str], start: int, end: int) -> str:
    first, last = max(0, start - 1), min(len(lines), end)
    return js_collapse_whitespace(" ".join(lines[first:last])) if first < last else ""


def _marker_free_text(lines: Sequence[str], start: int, end: int) -> str:
    first, last = max(0, start - 1), min(len(lines), end)
    if first >= last:
        return ""
    stripped = []
    for line in lines[first:last]:
        trimmed = js_trim(line)
        text = _LIST_MARKER.sub("", trimmed, count=1)
        stripped.append((text, text != trimmed))
    joiner = "; " if len(stripped) > 1 and all(marked for _, marked in stripped) else " "
    return js_collapse_whitespace(joiner.join(text for text, _ in stripped))


def _is_generic_heading(heading: str) -> bool:
    normalized = re.sub(r"\s+", " ", js_trim(heading))
    return normalized.lower() in _GENERIC_WORDS or bool(_GENERIC_DAY_HEADING.match(normalized))


def _heading_of(line: str) -> str | None:
    match = _HEADING_LINE.match(js_trim(line))
    heading = js_trim(_LIST_MARKER.sub("", match.group(1), count=1)) if match else ""
    normalized = js_collapse_whitespace(heading)
    if not normalized or _SHORT_TERM_BASENAME.match(normalized) or _is_generic_heading(normalized):
        return None
    return normalized


def _heading_lookup(lines: Sequence[str]) -> list[str | None]:
    """Return, for each 1-based line, the nearest non-generic heading above it (a dreaming fence resets it)."""
    headings: list[str | None] = [None] * (len(lines) + 1)
    current: str | None = None
    for index, line in enumerate(lines):
        headings[index + 1] = current
        if _FENCE_START.search(line) or _FENCE_END.search(line):
            current = None
        elif re.match(r"^#{1,6}\s+.+$", js_trim(line), re.S):
            current = _heading_of(line)
    return headings


def _compare(target: str, window: str) -> int:
    """Return 3 when equal, 2 when the window holds the target, 1 when the target holds the window, else 0."""
    if not target or not window:
        return 0
    return 3 if window == target else 2 if target in window else 1 if window in target else 0


def _heading_context_before(target: str, body: str) -> bool:
    if not target or not body or target == body:
        return False
    at = target.find(body)
    return at > 0 and js_trim(target[:at]).endswith(":")


def _target_body(target: str, body: str) -> str | None:
    """Return the part of ``target`` after one of its ``: `` that ``body`` starts with (a heading the note lost)."""
    if not target or not body or target == body or body.startswith(target):
        return None
    normalized_body = js_collapse_whitespace(body)
    at = target.find(": ")
    while at > 0:
        candidate = js_collapse_whitespace(target[at + 2 :])
        if candidate and normalized_body.startswith(candidate):
            return candidate
        at = target.find(": ", at + 2)
    return None


def relocate_candidate_range(lines: Sequence[str], snippet: str, start: int, end: int) -> tuple[int, int, str] | None:
    """Find a recorded snippet in a note as OpenClaw 2026.9's ``relocateCandidateRange`` does.

    Returns the 1-based range and the window's text in the form that matched, or None. The recorded range is kept
    when its lines, joined and normalized, equal the snippet. Otherwise every start line and every span up to
    ``min(lines, max(span + 3, 8))`` is tried, each as plain text, without list marks (items joined with ``; `` when
    every line is one) and with its nearest heading prefixed; the best window has the highest quality (3 equal, 2 it
    holds the snippet, 1 the snippet holds it), then the nearest start, then the span closest to the recorded one,
    and the first found on a full tie.
    """
    target = js_collapse_whitespace(snippet)
    preferred = max(1, end - start + 1)
    if not target:
        fallback = _range_text(lines, start, end)
        return (start, end, fallback) if fallback else None
    exact = _range_text(lines, start, end)
    if exact == target:
        return start, end, exact
    max_span = min(len(lines), max(preferred + 3, 8))
    headings = _heading_lookup(lines)
    best: tuple[int, int, str, int, int] | None = None  # start, end, text, quality, distance
    for first in range(1, len(lines) + 1):
        for span in range(1, max_span + 1):
            last = first + span - 1
            if last > len(lines):
                break
            plain = _range_text(lines, first, last)
            plain_q = _compare(target, plain)
            free = _marker_free_text(lines, first, last)
            heading = headings[first]
            with_heading = js_collapse_whitespace(f"{heading}: {free}") if heading and free else free
            free_q = 0 if free == plain else _compare(target, free)
            context_q = 0 if with_heading == free else _compare(target, with_heading)
            body = _target_body(target, free)
            body_q = _compare(body, free) if body and with_heading != free else 0
            use_body = body_q > 0 and body_q >= plain_q and body_q >= free_q
            use_context = not use_body and context_q > plain_q and context_q >= free_q
            use_free = not use_context and free_q > plain_q
            quality = body_q if use_body else context_q if use_context else free_q if use_free else plain_q
            if not quality:
                continue
            if use_body or use_context:
                text = with_heading
            elif use_free:
                text = with_heading if _heading_context_before(target, free) else free
            else:
                text = plain
            distance = abs(first - start)
            if (
                best is None
                or quality > best[3]
                or (quality == best[3] and distance < best[4])
                or (
                    quality == best[3]
                    and distance == best[4]
                    and abs(span - preferred) < abs(best[1] - best[0] + 1 - preferred)
                )
            ):
                best = (first, last, text, quality, distance)
    return None if best is None else best[:3]


def overlaps_managed_fence(lines: Sequence[str], start: int, end: int) -> bool:
    """Return whether lines ``start..end`` touch an ``openclaw:dreaming:*`` block, its marker lines included."""
    if not lines:
        return False
    safe_start = max(1, min(start, len(lines)))
    safe_end = max(safe_start, min(end, len(lines)))
    inside = False
    for number in range(1, safe_end + 1):
        line = lines[number - 1]
        is_start, is_end = bool(_FENCE_START.search(line)), bool(_FENCE_END.search(line))
        if is_start or is_end:
            if safe_start <= number <= safe_end:
                return True
            inside = is_start
            continue
        if inside and safe_start <= number <= safe_end:
            return True
    return False


# --- The bytes (``buildPromotionSection``) -------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class PromotionLine:
    """What one promoted bullet shows."""

    key: str
    """Store key (the marker)."""
    path: str
    """Note path as stored."""
    start_line: int
    """Rehydrated first line."""
    end_line: int
    """Rehydrated last line."""
    snippet: str
    """The rehydrated snippet (cut for display only)."""
    score: float
    """The candidate's score, clamped."""
    signal_count: int
    """Recalls, ingestion and grounded signals."""
    recall_count: int
    """Recalls alone."""
    avg_score: float
    """Average score per signal."""
    concept_tags: tuple[str, ...]
    """The entry's concept tags (the first three become the trigger)."""
    project_key: str | None = None
    """The entry's project key, if any."""


def promotion_marker(key: str) -> str:
    """Return ``<!-- openclaw-memory-promotion:<key> -->``."""
    return f"{PROMOTION_MARKER_PREFIX}{key} -->"


def format_promoted_snippet(snippet: str, max_tokens: int) -> str:
    """Return a bullet's text: normalized, one leading list mark dropped, cut near ``max_tokens * 4`` UTF-16 units.

    The cut falls at the last ``. ``, ``! `` or ``? `` when that is at least 55% into the limit, else at the last space
    when that is at least 65% in, else at the limit; ``...`` follows.
    """
    text = js_trim(re.sub(r"^[-*+] +", "", js_collapse_whitespace(snippet or "(no snippet captured)"), count=1))
    text = text or "(no snippet captured)"
    limit = max(0, max_tokens) * _CHARS_PER_TOKEN
    if limit == 0 or utf16_len(text) <= limit:
        return text
    units = _utf16_units(utf16_truncate(text, limit))
    sentence = max(units.rfind(". "), units.rfind("! "), units.rfind("? "))
    space = units.rfind(" ")
    # ``Math.floor(limit * 0.55)``: the same double arithmetic, not an exact fraction.
    cut = (
        sentence + 1 if sentence >= math.floor(limit * 0.55) else space if space >= math.floor(limit * 0.65) else limit
    )
    return js_trim_end(_from_units(units[:cut])) + "..."


def _utf16_units(text: str) -> str:
    """Return ``text`` with each UTF-16 code unit as one character (a pair as two), so indices count as JS's do."""
    raw = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(int.from_bytes(raw[i : i + 2], "little")) for i in range(0, len(raw), 2))


def _from_units(units: str) -> str:
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _trigger(tag: str) -> str:
    # One line without comment marks or list separators, at most 64 code points.
    single = js_collapse_whitespace(re.sub(r"[\r\n,;]+", " ", re.sub(r"<!--|-->", " ", tag)))
    return js_trim_end(single[:_MAX_TRIGGER_CHARS])


def promotion_annotations(line: PromotionLine) -> str:
    """Return ``<!-- trigger: T --> <!-- importance: N -->`` (and ``<!-- project: K -->``) for a bullet."""
    triggers = ", ".join(t for t in (_trigger(tag) for tag in line.concept_tags[:3]) if t)
    importance = min(10, max(3, js_round(line.score * 10)))
    project = _project(line)
    tail = f" <!-- project: {project} -->" if project else ""
    return f"<!-- trigger: {triggers} --> <!-- importance: {importance} -->{tail}"


def _project(line: PromotionLine) -> str | None:
    key = line.project_key
    return key if key and not re.search(r"[\r\n<>]", key) else None


def build_promotion_section(lines: Sequence[PromotionLine], day: str, max_tokens: int) -> str:
    """Return the section one run appends: blank line, dated ``##`` heading, blank line, entries, blank line.

    Entries of more than one project go under ``### Global`` / ``### Project: K`` headings, the groups in key order.
    """
    out = ["", f"## {SECTION_TITLE} ({day})", ""]
    groups: dict[str, list[PromotionLine]] = {}
    for line in lines:
        groups.setdefault(_project(line) or "", []).append(line)
    ordered = sorted(groups.items(), key=lambda item: item[0])  # JS ``<`` on strings: code units, like Python's
    for project, members in ordered:
        if len(ordered) > 1:
            out += [f"### Project: {project}" if project else "### Global", ""]
        for line in members:
            source = f"{line.path}:{line.start_line}-{line.end_line}"
            meta = (
                f"[score={to_fixed(line.score, 3)} signals={line.signal_count} recalls={line.recall_count} "
                f"avg={to_fixed(line.avg_score, 3)} source={source}]"
            )
            out.append(promotion_marker(line.key))
            out.append(f"- {format_promoted_snippet(line.snippet, max_tokens)} {meta} {promotion_annotations(line)}")
        if len(ordered) > 1:
            out.append("")
    out.append("")
    return "\n".join(out)


def extract_promotion_keys(text: str) -> set[str]:
    """Return the keys of every promotion marker in ``text``."""
    found = re.finditer(r"<!--\s*openclaw-memory-promotion:([^\n]*?)\s*-->", text, re.I)
    return {key for key in (js_trim(m.group(1)) for m in found) if key}


# --- The budget (``compactMemoryForBudget``) ----------------------------------------------------------------------

_SECTION_HEADING = re.compile(r"^## Promoted From Short-Term Memory \(([^)]+)\)\s*$")
_SUBSECTION_HEADING = re.compile(r"^### (?:Global|Project: .+?)\s*$")
_ENTRY_MARKER = re.compile(r"^<!--\s*openclaw-memory-promotion:.*-->\s*$", re.I)
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")


@dataclass(slots=True)
class _Block:
    first: int
    """Index of its first line."""
    last: int
    """Index past its last line."""
    date: str | None = None
    """The promotion date, when it is a generated promotion section."""
    entries: int = 0
    """Promotion markers in it."""


def _generated(lines: Sequence[str]) -> bool:
    saw = False
    index = 1
    while index < len(lines):
        if not js_trim(lines[index]):
            index += 1
            continue
        if _SUBSECTION_HEADING.match(lines[index]):
            index += 1
            while index < len(lines) and not js_trim(lines[index]):
                index += 1
        if index >= len(lines) or not _ENTRY_MARKER.match(lines[index]):
            return False
        if index + 1 >= len(lines) or not lines[index + 1].startswith("- "):
            return False
        saw = True
        index += 2
    return saw


def _starts_generated_subsection(lines: Sequence[str], index: int) -> bool:
    if not _SUBSECTION_HEADING.match(lines[index]):
        return False
    for line in lines[index + 1 :]:
        if js_trim(line):
            return bool(_ENTRY_MARKER.match(line))
    return False


def _blocks(lines: Sequence[str]) -> list[_Block]:
    """Split MEMORY.md's lines into blocks at headings, as OpenClaw's ``parseMemoryBlocks`` does."""
    blocks: list[_Block] = []
    first = 0
    promotion = False
    date: str | None = None

    def flush(until: int) -> None:
        if until <= first:
            return
        own = lines[first:until]
        if promotion and date is not None and _generated(own):
            blocks.append(_Block(first, until, date, sum(1 for line in own if _ENTRY_MARKER.match(line))))
        else:
            blocks.append(_Block(first, until))

    for index, line in enumerate(lines):
        if promotion and _SETEXT_UNDERLINE.match(line):
            # A setext heading: its text lines (back to a blank line, not the block's first) start a new block.
            start = index
            while start - 1 > first and js_trim(lines[start - 1]):
                start -= 1
            if start < index and not any(_ENTRY_MARKER.match(x) for x in lines[start:index]):
                flush(start)
                first, promotion, date = start, False, None
                continue
        continues = promotion and _starts_generated_subsection(lines, index)
        if _ATX_HEADING.match(line) and not continues:
            flush(index)
            match = _SECTION_HEADING.match(line)
            first, promotion, date = index, bool(match), match.group(1) if match else None
    flush(len(lines))
    return blocks


def compact_memory_for_budget(
    existing: str, new_section: str, budget_chars: int, max_prior_entry_loss_fraction: float = 1.0
) -> tuple[str, list[str]]:
    """Drop the oldest generated promotion sections until ``existing + new_section`` fits; return it and their dates.

    Only blocks made of nothing but markers and their bullets are dropped, oldest date first, and no more than
    ``max_prior_entry_loss_fraction`` of the earlier entries; the caller checks whether the result fits. Sizes count
    UTF-16 units with line breaks as LF, as OpenClaw counts them; the kept text keeps its own line breaks.
    """
    if budget_chars <= 0:
        return existing, []
    effective = max(0, budget_chars - WRITE_OVERHEAD_RESERVE)
    new_size = utf16_len(new_section)
    if utf16_len(existing) + new_size <= effective:
        return existing, []
    parts = re.split(r"(\r?\n)", existing) if existing else []
    lines, breaks = parts[0::2], parts[1::2]
    blocks = _blocks(lines)
    sections = sorted((b for b in blocks if b.date is not None), key=lambda b: locale_compare_key(b.date or ""))
    if not sections:
        return existing, []
    total = sum(b.entries for b in sections)
    fraction = max(0.0, min(1.0, max_prior_entry_loss_fraction))
    separator_cost = 1 if len(blocks) > 1 else 0
    projected = utf16_len(existing)
    dropped: list[_Block] = []
    lost = 0
    for block in sections:
        if projected + new_size <= effective:
            break
        if total > 0 and (lost + block.entries) / total > fraction:
            break
        dropped.append(block)
        lost += block.entries
        projected = max(0, projected - utf16_len("\n".join(lines[block.first : block.last])) - separator_cost)
    if not dropped:
        return existing, []
    gone = {id(b) for b in dropped}
    kept = [b for b in blocks if id(b) not in gone]
    out: list[str] = []
    for n, block in enumerate(kept):
        for index in range(block.first, block.last):
            out.append(lines[index])
            if index < block.last - 1:
                out.append(breaks[index])
        if n < len(kept) - 1:
            out.append(breaks[block.last - 1] if block.last - 1 < len(breaks) else "\n")
    return "".join(out), [b.date or "" for b in dropped]


def budgeted_memory_append(
    existing: str, new_section: str, budget_chars: int, max_prior_entry_loss_fraction: float
) -> tuple[str, list[str]]:
    """Return MEMORY.md after appending ``new_section`` (compacted for the budget) and the dropped sections' dates.

    An empty or whitespace-only file gets the ``# Long-Term Memory`` preamble (its whitespace kept), and a file
    without a final newline gets one before the section.
    """
    compacted, dropped = compact_memory_for_budget(existing, new_section, budget_chars, max_prior_entry_loss_fraction)
    preamble = "" if js_trim(compacted) else MEMORY_PREAMBLE
    separator = "\n" if compacted and not compacted.endswith("\n") else ""
    return f"{preamble}{compacted}{separator}{new_section}", dropped


# --- This project's rehydration (``openclaw_compat = false``) ------------------------------------------------------


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
