"""Daily-note ingestion: chunk recent notes and record each chunk as a ``daily`` signal (never a real recall).

The chunker follows OpenClaw: headings become a ``Heading: body`` prefix (date headings dropped), list items keep
their ancestors joined by `` > ``, paragraphs are grouped up to four lines, snippets are 8-280 characters, and
managed dreaming blocks are stripped. A list block that is a staged dreaming candidate is dropped whole, since its
fields are spread over several lines that no single chunk would show as contaminated.

The same reading of a note holds for any stretch of its lines (:func:`note_snippet`): a search hit is recorded so,
and a promotion shows its live lines so, as ``Committee: The CIO asked ...; Risk officer: ...`` and never as
``## Committee - The CIO asked ...``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from dreaming.memory._decode import (
    NAME_NOT_UTF8,
    has_undecodable,
    parse_json_bytes,
    printable,
    read_user_text,
    undecodable_note,
)
from dreaming.memory._secrets import is_secret_path, redact_secrets
from dreaming.memory.files import InputReport, atomic_write_json
from dreaming.memory.recall._contamination import FENCE_END, FENCE_START, is_contaminated_snippet
from dreaming.memory.recall._paths import is_short_term_path, note_day
from dreaming.memory.recall._record import (
    OPENCLAW_RULES,
    RecallQuery,
    RecallResult,
    RecordRules,
    day_bucket_for,
    query_hash,
    record_recall_batch,
)
from dreaming.memory.recall._store import format_iso, read_store
from dreaming.memory.workspace import Workspace

__all__ = [
    "DAILY_INGESTION_SCORE",
    "IngestReport",
    "NoteChunk",
    "chunk_daily_note",
    "daily_ingestion_path",
    "heading_contexts",
    "ingest_daily_notes",
    "list_daily_notes",
    "note_snippet",
]

DAILY_INGESTION_SCORE = 0.62
MIN_LOOKBACK_DAYS = 14
_MIN_CHARS, _MAX_CHARS = 8, 280
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_DATE_HEADING = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}|(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s.*|today|yesterday|daily notes?)$", re.I
)
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_CODE_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def _context(heading: re.Match[str]) -> str:
    """Return what a heading gives the lines under it as context: its title, or nothing for a date or day heading."""
    title = heading.group(2).strip()
    return "" if _DATE_HEADING.match(title) else title


def note_snippet(lines: Sequence[str], *, heading: str = "") -> str:
    """Return note lines read as one snippet line: ``Heading: body``, without markdown's heading and list marks.

    ``heading`` is the context the lines sit under (see :func:`heading_contexts`); a heading that opens the lines
    replaces it (a date or day heading leaves none), and one further down is read as text. List markers are dropped
    and the items joined with ``; `` when every line is one, else the lines with a space: OpenClaw's list-marker-free
    and heading-prefixed readings of a window. Lines in a fenced code block are text; whitespace is collapsed.
    Empty when nothing but headings and blank lines is there.
    """
    body: list[str] = []
    every_item = True
    fenced = False
    for line in lines:
        if not line.strip():
            continue
        if _CODE_FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        item = None if fenced or match else _ITEM.match(line)
        if match and not body:
            heading = _context(match)
        elif match:
            body.append(match.group(2).strip())
            every_item = False
        elif item:
            body.append(item.group(2).strip())
        else:
            body.append(line.strip())
            every_item = False
    text = " ".join(("; " if every_item else " ").join(body).split())
    return f"{heading}: {text}" if heading and text else text


def heading_contexts(lines: Sequence[str]) -> list[str]:
    """Return, for each line of a note, the context of the nearest heading above it (``""`` for none or a date)."""
    contexts: list[str] = []
    heading = ""
    fenced = False
    for line in lines:
        contexts.append(heading)
        if _CODE_FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            heading = _context(match)
    return contexts


@dataclass(frozen=True, kw_only=True, slots=True)
class NoteChunk:
    """One ingestible piece of a daily note."""

    start_line: int
    """First line (1-based)."""
    end_line: int
    """Last line."""
    snippet: str
    """The text with its heading and list context."""


def _emit(out: list[NoteChunk], start: int, end: int, text: str) -> None:
    text = " ".join(text.split())
    if len(text) >= _MIN_CHARS and not is_contaminated_snippet(text):
        out.append(NoteChunk(start_line=start, end_line=end, snippet=text[:_MAX_CHARS]))


def chunk_daily_note(text: str) -> list[NoteChunk]:
    """Split a daily note into chunks (see the module docstring)."""
    lines = text.splitlines()
    out: list[NoteChunk] = []
    heading = ""
    para: list[tuple[int, str]] = []
    stack: list[tuple[int, str]] = []
    in_fence = False
    skip_indent: int | None = None

    def flush() -> None:
        while para:
            group, para[:] = para[:4], para[4:]
            body = " ".join(t for _, t in group)
            _emit(out, group[0][0], group[-1][0], f"{heading}: {body}" if heading else body)

    for number, line in enumerate(lines, start=1):
        if FENCE_START.search(line):
            flush()
            in_fence = True
        if in_fence:
            in_fence = not FENCE_END.search(line)
            continue
        if line.lstrip().startswith("<!--"):
            continue
        if not line.strip():
            flush()
            continue
        match = _HEADING.match(line)
        if match:
            flush()
            stack.clear()
            heading = _context(match)
            continue
        item = _ITEM.match(line)
        if item:
            flush()
            indent, body = len(item.group(1)), item.group(2).strip()
            if skip_indent is not None and indent > skip_indent:
                continue
            skip_indent = None
            while stack and stack[-1][0] >= indent:
                stack.pop()
            if _staged_block(lines, number - 1, indent):
                skip_indent = indent
                continue
            context = " > ".join([*(t for _, t in stack), body])
            stack.append((indent, body))
            _emit(out, number, number, f"{heading}: {context}" if heading else context)
            continue
        if skip_indent is not None and len(line) - len(line.lstrip()) > skip_indent:
            continue
        stack.clear()
        para.append((number, line.strip()))
    flush()
    return out


def _staged_block(lines: list[str], index: int, indent: int) -> bool:
    block = [lines[index]]
    for line in lines[index + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        block.append(line)
    return is_contaminated_snippet(" ".join(" ".join(block).split()))


@dataclass(frozen=True, kw_only=True, slots=True)
class IngestReport:
    """What one ingestion pass did."""

    files_seen: int
    """Daily notes inside the lookback window."""
    files_ingested: int
    """Notes that were new or changed and were chunked."""
    chunks_recorded: int
    """Chunks recorded as daily signals."""
    outside_workspace: tuple[str, ...] = ()
    """Notes skipped unread because their real path is outside the workspace (a symbolic link out of it)."""


OUTSIDE_WORKSPACE = "real path is outside the workspace (a symbolic link); not read"
"""Why a note that links out of the workspace is skipped."""


def daily_ingestion_path(ws: Workspace) -> Path:
    """Return ``memory/.dreams/daily-ingestion.json``."""
    return ws.state_dir / "daily-ingestion.json"


def list_daily_notes(ws: Workspace, *, today: date, lookback_days: int) -> list[tuple[str, str]]:
    """Return ``(relative path, day)`` of daily notes whose day is within ``lookback_days`` of ``today``."""
    if not ws.memory_dir.is_dir():
        return []
    oldest = today - timedelta(days=max(MIN_LOOKBACK_DAYS, lookback_days))
    found = []
    for path in ws.memory_dir.rglob("*.md"):
        rel = path.relative_to(ws.root).as_posix()  # as it appears: a linked note is listed, then skipped unread
        day = note_day(rel)
        if day is None or not is_short_term_path(rel) or is_secret_path(rel) or not path.is_file():
            continue
        try:
            when = date.fromisoformat(day)
        except ValueError:
            continue
        if oldest <= when <= today:
            found.append((rel, day))
    return sorted(found)


def _read_ingestion(ws: Workspace) -> dict[str, Any]:
    try:
        doc = parse_json_bytes(daily_ingestion_path(ws).read_bytes())
    except (FileNotFoundError, ValueError):
        return {"version": 1, "files": {}}
    if not isinstance(doc, dict) or doc.get("version") != 1 or not isinstance(doc.get("files"), dict):
        return {"version": 1, "files": {}}
    return doc


def _pending_landed(
    ws: Workspace, pending: Any, today_s: str, query_text: str, now: datetime
) -> dict[str, dict[str, int]]:
    # The pending notes of a night that failed today after writing the store: {rel: {"mtimeMs", "size"}}.
    if not isinstance(pending, dict) or pending.get("day") != today_s or not isinstance(pending.get("files"), dict):
        return {}
    qhash = query_hash(query_text)
    store = read_store(ws, now=now)
    paths = {
        entry.get("path")
        for entry in store.entries.values()
        if qhash in (entry.get("queryHashes") or []) and today_s in (entry.get("recallDays") or [])
    }
    return {rel: seen for rel, seen in pending["files"].items() if rel in paths and isinstance(seen, dict)}


def ingest_daily_notes(
    ws: Workspace,
    *,
    now: datetime,
    timezone: str = "UTC",
    limit: int = 10,
    lookback_days: int = 2,
    report: InputReport | None = None,
    rules: RecordRules = OPENCLAW_RULES,
) -> IngestReport:
    """Record chunks of recent daily notes as ``daily`` signals (score 0.62), skipping notes already seen today.

    Each chunk is recorded with query ``__dreaming_daily__:<today>`` for the day it was ingested, so a note still
    present over several nights gains one signal per night, never more. Daily notes themselves are only read; the
    recorded snippets have their secrets redacted, and a note under a secret-looking name is never read. A note
    whose real path is outside the workspace is not read: it is skipped, listed in the result and added to ``report``.

    The recall store and the ingestion state are two files, so the notes about to be recorded are first written to
    the state as ``pending``; a night that failed between the two writes and runs again finds the pending notes'
    signals already in the store (today's ingestion query among their entries' hashes) and counts them once. The
    state also keeps what the last night ingested (``lastNight``), so the same night run again reports it.

    A note holding bytes that are not UTF-8 is read with U+FFFD in their place (the rest of the user's note
    counts) and reported to ``report`` with the line of the first one; a note whose name is not UTF-8 is skipped
    and reported.
    """
    today_s = day_bucket_for(now, timezone)
    notes = list_daily_notes(ws, today=date.fromisoformat(today_s), lookback_days=lookback_days)
    state = _read_ingestion(ws)
    files: dict[str, Any] = state["files"]
    query_text = f"__dreaming_daily__:{today_s}"
    landed = _pending_landed(ws, state.pop("pending", None), today_s, query_text, now)
    total_cap = max(20, limit * 4)
    per_file = max(6, math.ceil(total_cap / max(1, len(notes))))
    results: list[RecallResult] = []
    recorded = ingested = 0
    outside: list[str] = []
    for rel, _day in sorted(notes, key=lambda n: n[1], reverse=True):
        if has_undecodable(rel):
            if report is not None:
                report.skip(printable(rel), 0, NAME_NOT_UTF8)
            continue
        path = ws.root / rel
        if not ws.contains(path):
            outside.append(rel)
            if report is not None:
                report.skip(rel, 0, OUTSIDE_WORKSPACE)
            continue
        stat = path.stat()
        seen = files.get(rel) if isinstance(files.get(rel), dict) else None
        mtime_ms = int(stat.st_mtime * 1000)
        unchanged = bool(seen) and (seen or {}).get("mtimeMs") == mtime_ms and (seen or {}).get("size") == stat.st_size
        if unchanged and (seen or {}).get("lastDreamingDayIngested") == today_s:
            continue
        text, bad = read_user_text(path)
        if bad and report is not None:
            report.skip(rel, bad[0], undecodable_note(bad))
        # Recorded snippets are redacted: the recall store and the diary never hold a password a note does.
        chunks = chunk_daily_note(redact_secrets(text))[:per_file]
        room = max(0, total_cap - len(results) - recorded)
        if landed.get(rel) == {"mtimeMs": mtime_ms, "size": stat.st_size}:
            recorded += len(chunks[:room])  # recorded by the failed run: counted, not recorded again
        else:
            for chunk in chunks[:room]:
                results.append(
                    RecallResult(rel, chunk.start_line, chunk.end_line, DAILY_INGESTION_SCORE, chunk.snippet)
                )
        files[rel] = {"mtimeMs": mtime_ms, "size": stat.st_size, "lastDreamingDayIngested": today_s}
        ingested += 1
    if results:
        pending = {r.path: files[r.path] for r in results}
        atomic_write_json(
            daily_ingestion_path(ws),
            {
                **_read_ingestion(ws),
                "pending": {
                    "day": today_s,
                    "files": {rel: {"mtimeMs": seen["mtimeMs"], "size": seen["size"]} for rel, seen in pending.items()},
                },
            },
        )
        query = RecallQuery(
            query=query_text,
            results=results,
            signal_type="daily",
            dedupe_by_query_per_day=False,
            day_bucket=today_s,
        )
        record_recall_batch(ws, [query], now=now, timezone=timezone, rules=rules)
    night = format_iso(now)
    last = state.get("lastNight")
    if not ingested and isinstance(last, dict) and last.get("at") == night:
        # The same night again (it failed after ingesting): report what it ingested, not the nothing left to do.
        return IngestReport(
            files_seen=len(notes), files_ingested=int(last.get("files", 0)), chunks_recorded=int(last.get("chunks", 0))
        )
    if ingested:
        state["lastNight"] = {"at": night, "files": ingested, "chunks": recorded + len(results)}
        atomic_write_json(daily_ingestion_path(ws), state)
    return IngestReport(
        files_seen=len(notes),
        files_ingested=ingested,
        chunks_recorded=recorded + len(results),
        outside_workspace=tuple(outside),
    )
