"""Record search hits in the recall store (OpenClaw's ``recordShortTermRecalls`` and grounded backfill).

One call is one locked read-modify-write of the store; :func:`record_recall_batch` folds many queries into one, which
is how bulk recording stays fast without changing the file format.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from dreaming.memory.files import record_event
from dreaming.memory.recall._concepts import derive_concept_tags
from dreaming.memory.recall._contamination import is_contaminated_snippet
from dreaming.memory.recall._normalize import enforce_retention
from dreaming.memory.recall._paths import is_short_term_path, normalize_memory_path, readable_note
from dreaming.memory.recall._store import (
    RecallStore,
    clamp_unit,
    format_iso,
    read_store,
    short_term_lock,
    write_store,
)
from dreaming.memory.search._search import SearchHit
from dreaming.memory.workspace import Workspace

__all__ = [
    "MAX_ENTRIES",
    "MAX_QUERY_HASHES",
    "MAX_RECALL_DAYS",
    "MAX_SNIPPET_CHARS",
    "GroundedItem",
    "RecallQuery",
    "RecallResult",
    "apply_retention",
    "claim_hash",
    "day_bucket_for",
    "entry_key",
    "normalize_snippet",
    "query_hash",
    "record_grounded_short_term_candidates",
    "record_recall_batch",
    "record_short_term_recalls",
    "remove_grounded_short_term_candidates",
]

MAX_QUERY_HASHES = 32
MAX_RECALL_DAYS = 16
MAX_SNIPPET_CHARS = 800
MAX_ENTRIES = 512

SignalType = Literal["recall", "daily", "grounded"]


RecallResult = SearchHit
"""One search hit handed to the recorder: the search's own hit type."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RecallQuery:
    """One query's hits, for :func:`record_recall_batch`."""

    query: str
    """The query text (hashed, never stored)."""
    results: Sequence[RecallResult]
    """Its hits."""
    signal_type: Literal["recall", "daily"] = "recall"
    """``recall`` for organic search, ``daily`` for ingestion."""
    dedupe_by_query_per_day: bool = True
    """Count the same query only once per entry per day."""
    day_bucket: str | None = None
    """Override the day (``YYYY-MM-DD``) the signal counts for."""


@dataclass(frozen=True, kw_only=True, slots=True)
class GroundedItem:
    """One grounded evidence item (backfill): counts ``signal_count`` times at ``score``."""

    path: str
    """Note path."""
    start_line: int
    """First line."""
    end_line: int
    """Last line."""
    snippet: str
    """The grounded claim."""
    score: float
    """Its score."""
    query: str
    """The query it was grounded by."""
    signal_count: int = 1
    """How many signals it stands for."""


def normalize_snippet(snippet: str) -> str:
    """Collapse whitespace (OpenClaw stores snippets on one line)."""
    return " ".join(snippet.split())


def query_hash(query: str) -> str:
    """Return ``sha1(lower(query))[:12]``."""
    return hashlib.sha1(query.strip().lower().encode("utf-8")).hexdigest()[:12]


def claim_hash(snippet: str) -> str:
    """Return ``sha1(normalized snippet)[:12]``: the identity of a claim whatever lines it sits on."""
    return hashlib.sha1(normalize_snippet(snippet).encode("utf-8")).hexdigest()[:12]


def entry_key(path: str, start_line: int, end_line: int, claim: str | None = None) -> str:
    """Return ``memory:<path>:<start>:<end>[:<claimHash>]``."""
    base = f"memory:{path}:{start_line}:{end_line}"
    return f"{base}:{claim}" if claim else base


def day_bucket_for(now: datetime, timezone: str) -> str:
    """Return the ``YYYY-MM-DD`` of ``now`` in ``timezone``."""
    return now.astimezone(ZoneInfo(timezone)).date().isoformat()


def _merge_tail(values: list[Any], new: str, cap: int, *, sort: bool = False) -> list[Any]:
    merged = list(dict.fromkeys([*values, new]))
    if sort:
        merged.sort()
    return merged[-cap:]


def _touch(
    store: RecallStore,
    *,
    path: str,
    start: int,
    end: int,
    snippet: str,
    score: float,
    qhash: str,
    day: str,
    stamp: str,
    signal: SignalType,
    dedupe: bool,
    count: int = 1,
    grounded: bool = False,
) -> str:
    full = normalize_snippet(snippet)
    claim = claim_hash(full)
    grounded_key = entry_key(path, start, end, claim)
    key = grounded_key if grounded or grounded_key in store.entries else entry_key(path, start, end)
    entry = store.entries.get(key)
    if entry is None:
        entry = {
            "key": key,
            "path": path,
            "startLine": start,
            "endLine": end,
            "source": "memory",
            "snippet": full[:MAX_SNIPPET_CHARS],
            "recallCount": 0,
            "dailyCount": 0,
            "groundedCount": 0,
            "totalScore": 0,
            "maxScore": 0,
            "firstRecalledAt": stamp,
            "lastRecalledAt": stamp,
            "queryHashes": [],
            "recallDays": [],
            "conceptTags": [],
        }
        if key == grounded_key:
            entry["claimHash"] = claim
        store.entries[key] = entry
    hashes = (
        [h for h in entry.get("queryHashes") or [] if isinstance(h, str)]
        if isinstance(entry.get("queryHashes"), list)
        else []
    )
    days = (
        [d for d in entry.get("recallDays") or [] if isinstance(d, str)]
        if isinstance(entry.get("recallDays"), list)
        else []
    )
    skip = dedupe and qhash in hashes and day in days
    counter = {"recall": "recallCount", "daily": "dailyCount", "grounded": "groundedCount"}[signal]
    if not skip:
        # Hand-edited or foreign values ("3", null, NaN) read as 0, as OpenClaw's reader does: never a crash.
        entry[counter] = max(0, math.floor(_num(entry, counter))) + count
        entry["totalScore"] = _num(entry, "totalScore") + score * count
    entry["maxScore"] = max(_num(entry, "maxScore"), score)
    entry["snippet"] = full[:MAX_SNIPPET_CHARS]
    entry["queryHashes"] = _merge_tail(hashes, qhash, MAX_QUERY_HASHES)
    entry["recallDays"] = _merge_tail(days, day, MAX_RECALL_DAYS, sort=True)
    entry["conceptTags"] = derive_concept_tags(path, full)
    entry["lastRecalledAt"] = stamp
    entry.setdefault("firstRecalledAt", stamp)
    return key


def _num(entry: dict[str, Any], name: str) -> float:
    value = entry.get(name)
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else 0.0


def apply_retention(store: RecallStore, cap: int = MAX_ENTRIES, *, openclaw_compat: bool = False) -> list[str]:
    """Keep the store's best ``cap`` entries (:func:`enforce_retention`); return the evicted keys.

    Writers here still evict entries without real recalls first unless told ``openclaw_compat``; reads cap as
    ``[recall] openclaw_compat`` says.
    """
    entries = {k: v if isinstance(v, dict) else {} for k, v in store.entries.items()}  # read as they would be
    kept, evicted = enforce_retention(entries, cap=cap, openclaw_compat=openclaw_compat)
    if evicted:
        store.entries = {k: store.entries[k] for k in kept}
    return evicted


@contextmanager
def _updating_store(ws: Workspace, now: datetime) -> Iterator[RecallStore]:
    """Hold the store's lock over one read-modify-write: read it, let the caller change it, cap it and write it."""
    with short_term_lock(ws):
        store = read_store(ws, now=now, move_unreadable=True)
        yield store
        apply_retention(store)
        write_store(ws, store, now=now)


def _accepts(ws: Workspace, result: RecallResult) -> bool:
    return (
        result.source == "memory"
        and is_short_term_path(result.path)
        and bool(result.snippet.strip())
        and not is_contaminated_snippet(result.snippet)
        and readable_note(ws, result.path) is not None
    )


def record_recall_batch(
    ws: Workspace, queries: Sequence[RecallQuery], *, now: datetime, timezone: str = "UTC", event: bool = True
) -> int:
    """Record many queries' hits in one locked read-modify-write; return the number of entries touched.

    Hits outside short-term memory, of another source, carrying dreaming output, or in a note whose real path is
    outside the workspace are ignored; when nothing is left the store is not touched at all (nor created).
    """
    accepted = [(q, [r for r in q.results if _accepts(ws, r)]) for q in queries]
    if not any(hits for _, hits in accepted):
        return 0
    stamp = format_iso(now)
    today = day_bucket_for(now, timezone)
    touched: set[str] = set()
    with _updating_store(ws, now) as store:
        for q, hits in accepted:
            qhash = query_hash(q.query)
            for hit in hits:
                key = _touch(
                    store,
                    path=normalize_memory_path(hit.path),
                    start=int(hit.start_line),
                    end=int(hit.end_line),
                    snippet=hit.snippet,
                    score=clamp_unit(hit.score),
                    qhash=qhash,
                    day=q.day_bucket or today,
                    stamp=stamp,
                    signal=q.signal_type,
                    dedupe=q.dedupe_by_query_per_day,
                )
                touched.add(key)
    if event:
        record_event(ws.events, "memory.recall.recorded", now, entries=len(touched), queries=len(queries))
    return len(touched)


def record_short_term_recalls(
    ws: Workspace,
    *,
    query: str,
    results: Sequence[RecallResult],
    now: datetime,
    timezone: str = "UTC",
    signal_type: Literal["recall", "daily"] = "recall",
    dedupe_by_query_per_day: bool = True,
    day_bucket: str | None = None,
) -> int:
    """Record one query's hits (OpenClaw's update rule); return the number of entries touched."""
    batch = RecallQuery(query=query, results=results, signal_type=signal_type,
                        dedupe_by_query_per_day=dedupe_by_query_per_day, day_bucket=day_bucket)  # fmt: skip
    return record_recall_batch(ws, [batch], now=now, timezone=timezone)


def record_grounded_short_term_candidates(
    ws: Workspace, items: Sequence[GroundedItem], *, now: datetime, timezone: str = "UTC"
) -> int:
    """Record grounded evidence: ``groundedCount += signal_count``, ``totalScore += score * signal_count``."""
    usable = [i for i in items if _accepts(ws, RecallResult(i.path, i.start_line, i.end_line, i.score, i.snippet))]
    if not usable:
        return 0
    stamp = format_iso(now)
    day = day_bucket_for(now, timezone)
    touched: set[str] = set()
    with _updating_store(ws, now) as store:
        for item in usable:
            key = _touch(
                store,
                path=normalize_memory_path(item.path),
                start=item.start_line,
                end=item.end_line,
                snippet=item.snippet,
                score=clamp_unit(item.score),
                qhash=query_hash(item.query),
                day=day,
                stamp=stamp,
                signal="grounded",
                dedupe=False,
                count=max(0, int(item.signal_count)),
                grounded=True,
            )
            touched.add(key)
    return len(touched)


def remove_grounded_short_term_candidates(ws: Workspace, *, now: datetime) -> int:
    """Delete entries whose only signals are grounded ones (rollback of a backfill); return how many."""
    with short_term_lock(ws):
        store = read_store(ws, now=now)
        doomed = [
            key
            for key, e in store.entries.items()
            if _num(e, "groundedCount") > 0 and _num(e, "recallCount") == 0 and _num(e, "dailyCount") == 0
        ]
        for key in doomed:
            del store.entries[key]
        if doomed:
            write_store(ws, store, now=now)
    return len(doomed)
