"""Record search hits in the recall store: OpenClaw 2026.9's ``recordShortTermRecalls``, one rule for every signal.

A ``recall`` is an organic search hit, ``daily`` an ingested chunk of a daily note, ``grounded`` backfilled evidence.
One call is one locked read-modify-write of the store as OpenClaw reads it (normalized and capped: what is written back
is that store with the new signals, as OpenClaw's ``writeStore`` writes it); :func:`record_recall_batch` folds many
queries into one, which is how bulk recording stays fast without changing the format.

The rule, as OpenClaw 2026.9 applies it (reference §6):

- the key: a recall uses an existing ``memory:claim:<claimHash>`` entry, else ``memory:<path>:<s>:<e>:<claimHash>``
  when that entry exists, else ``memory:<path>:<s>:<e>`` with the hit's lines as given (``:2.7:0``; the entry stores
  them floored, at least 1); a daily chunk (whose claim is that of its ``identity_snippet`` when given) folds into a
  non-claim entry of the same claim that holds recalls or grounded evidence, else into ``memory:claim:<claimHash>``;
  grounded evidence uses an existing claim entry, else the key with the claim hash appended;
- a duplicate (the per-day flag set, the query already among ``queryHashes`` and the day among ``recallDays``) adds no
  signal and counts 0 towards ``maxScore``;
- ``queryHashes`` and ``recallDays`` merge distinct, keeping the last 32 and 16; ``userQueryHashes`` takes the query of
  a ``recall`` only, so ingestion never passes for a user's question;
- concept tags are derived again from the stored snippet (the old ones stay when none come out), provenance (the
  hit's own, else the agent's) merges towards the least trusted origin, ``projectKey`` lists merge, ``claimHash`` is
  always written, ``firstRecalledAt`` and ``promotedAt`` are kept, and a daily chunk or a recall folded into a claim
  entry keeps the entry's first path and lines.

With ``[recall] openclaw_compat = false`` two of this project's fixes apply (see :class:`RecordRules`). In both modes a
hit whose note lies outside the workspace is never recorded, and fields this code does not know survive.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from dreaming.memory.files import record_event
from dreaming.memory.recall._concepts import derive_concept_tags
from dreaming.memory.recall._contamination import is_contaminated_snippet
from dreaming.memory.recall._js import js_collapse_whitespace, js_number_text, js_trim
from dreaming.memory.recall._normalize import (
    MAX_ENTRIES,
    MAX_QUERY_HASHES,
    MAX_RECALL_DAYS,
    enforce_retention,
    normalize_project_keys,
    normalize_store_in_place,
    truncate_snippet,
)
from dreaming.memory.recall._paths import (
    is_session_corpus_path,
    is_short_term_path,
    normalize_memory_path,
    readable_note,
)
from dreaming.memory.recall._phase_signals import prune_phase_signals
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
    "OPENCLAW_RULES",
    "ORIGIN_CLASSES",
    "GroundedItem",
    "RecallQuery",
    "RecallResult",
    "RecordRules",
    "apply_retention",
    "claim_entry_key",
    "claim_hash",
    "day_bucket_for",
    "entry_key",
    "merge_project_keys",
    "merge_provenance",
    "merge_recent_distinct",
    "now_ms",
    "query_hash",
    "record_grounded_short_term_candidates",
    "record_recall_batch",
    "record_short_term_recalls",
    "remove_grounded_short_term_candidates",
]

ORIGIN_CLASSES = ("owner", "agent", "system", "untrusted")
"""Provenance origins from most to least trusted; a merge keeps the later of the two."""

SignalType = Literal["recall", "daily", "grounded"]

_ISO_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})")


@dataclass(frozen=True, slots=True)
class RecallResult(SearchHit):
    """One hit handed to the recorder: a search hit, with what OpenClaw's callers may add to one.

    A plain :class:`~dreaming.memory.search.SearchHit` is recorded as one of these with none of the extras.
    """

    identity_snippet: str | None = None
    """For a daily signal: the text whose claim hash identifies it (the chunk without its heading), if not the
    snippet."""
    provenance: Mapping[str, Any] | None = None
    """Where the hit came from (``originClass``, ``sessionKind``, ``observedAt``); by default the agent, an unknown
    session kind, now."""
    project_key: str | None = None
    """The project(s) the hit belongs to (``;``-separated), merged into the entry's."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordRules:
    """Which recording rule applies: OpenClaw 2026.9's exactly, or with this project's fixes.

    ``compat=False`` keeps a workspace's recall days sorted, so that the 16 kept are the 16 newest even when a signal
    is recorded for an earlier day than one already stored (ingestion that buckets by a note's own date wrote such
    days: OpenClaw #67061), and when the 512 cap bites it evicts entries without a real recall or grounded evidence
    first (OpenClaw #150635). Organic searches de-duplicate per query and day under ``compat=False`` (that choice is
    the caller's: :func:`dreaming.tools.search_and_record`).
    """

    compat: bool = True
    """Record exactly as OpenClaw 2026.9 does."""


OPENCLAW_RULES = RecordRules()
"""Record exactly as OpenClaw 2026.9 does (the default)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RecallQuery:
    """One query's hits, for :func:`record_recall_batch`."""

    query: str
    """The query text (hashed, never stored)."""
    results: Sequence[SearchHit]
    """Its hits."""
    signal_type: Literal["recall", "daily"] = "recall"
    """``recall`` for organic search, ``daily`` for ingestion."""
    dedupe_by_query_per_day: bool = False
    """Count the same query only once per entry per day (OpenClaw's ``memory_search`` does not)."""
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
    day_bucket: str | None = None
    """The day it counts for, when not today."""


def query_hash(query: str) -> str:
    """Return ``sha1(trim(lower(query)))[:12]``."""
    return hashlib.sha1(js_trim(query).lower().encode("utf-8")).hexdigest()[:12]


def claim_hash(snippet: str) -> str:
    """Return ``sha1(normalized snippet)[:12]``: the identity of a claim whatever lines it sits on."""
    return hashlib.sha1(js_collapse_whitespace(snippet).encode("utf-8")).hexdigest()[:12]


def entry_key(path: str, start_line: int, end_line: int, claim: str | None = None) -> str:
    """Return ``memory:<path>:<start>:<end>[:<claimHash>]``."""
    base = f"memory:{normalize_memory_path(path)}:{start_line}:{end_line}"
    return f"{base}:{claim}" if claim else base


def claim_entry_key(claim: str) -> str:
    """Return ``memory:claim:<claimHash>``, the key daily ingestion gives a claim that no line range owns yet."""
    return f"memory:claim:{claim}"


def day_bucket_for(now: datetime, timezone: str) -> str:
    """Return the ``YYYY-MM-DD`` of ``now`` in ``timezone``."""
    return now.astimezone(ZoneInfo(timezone)).date().isoformat()


def now_ms(now: datetime) -> int:
    """Return ``now`` as JS ``Date.now()`` milliseconds (floored, like the ISO stamps)."""
    return (now.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


def merge_recent_distinct(existing: object, value: str, limit: int, *, sort: bool = False) -> list[str]:
    """Return OpenClaw's ``mergeRecentDistinct``: distinct non-empty strings, ``value`` appended, the last ``limit``.

    ``sort`` orders the result first (this project's recall days, see :class:`RecordRules`).
    """
    values = existing if isinstance(existing, list) else []
    merged = list(dict.fromkeys(v for v in values if isinstance(v, str) and v))
    if value and value not in merged:
        merged.append(value)
    if sort:
        merged.sort()
    return merged[-limit:] if len(merged) > limit else merged


def merge_provenance(existing: object, incoming: dict[str, Any]) -> dict[str, Any]:
    """Merge an entry's provenance with a new signal's: the less trusted origin, ``unknown`` kinds unless equal.

    ``observedAt`` is the later of the two, and ``supersedesKey`` survives only when both carry the same one.
    """
    if not isinstance(existing, dict):
        return dict(incoming)
    classes = {existing.get("originClass"), incoming.get("originClass")}
    origin = next((c for c in reversed(ORIGIN_CLASSES) if c in classes), "untrusted")
    same_kind = existing.get("sessionKind") == incoming.get("sessionKind")
    merged: dict[str, Any] = {
        "originClass": origin,
        "sessionKind": incoming.get("sessionKind") if same_kind else "unknown",
        "observedAt": _js_max(existing.get("observedAt"), incoming.get("observedAt")),
    }
    supersedes = existing.get("supersedesKey")
    if supersedes and supersedes == incoming.get("supersedesKey"):
        merged["supersedesKey"] = supersedes
    return merged


def _js_max(a: object, b: object) -> Any:
    # ``Math.max`` of two stored numbers; a value that is not a number makes it NaN in JS, stored as null.
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return None
    return max(a, b)


def merge_project_keys(*values: object) -> str | None:
    """Return OpenClaw's ``mergeProjectKeyLists``: every list normalized, joined, normalized again."""
    parts = [key for key in (normalize_project_keys(v) for v in values) if key]
    return normalize_project_keys(";".join(parts))


def _count(value: object) -> int:
    # A stored counter as OpenClaw's arithmetic sees it: ``Math.floor(x ?? 0)``, anything unusable counting 0.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return math.floor(value)


def _score_of(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return float(value)


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _user_hashes(entry: dict[str, Any]) -> list[str] | None:
    """Return an entry's ``userQueryHashes`` as OpenClaw's reader yields them.

    A stored list is kept; a missing one stands for the entry's query hashes when it has only recall signals (the
    legacy rule of the read normalizer, reference §3.3), and stays absent otherwise. On a store already read through
    that normalizer the field is there and this is the identity.
    """
    stored = entry.get("userQueryHashes")
    if isinstance(stored, list):
        return _strings(stored)
    if _count(entry.get("dailyCount")) == 0 and _count(entry.get("groundedCount")) == 0:
        return _strings(entry.get("queryHashes"))
    return None


@dataclass(frozen=True, kw_only=True, slots=True)
class _Signal:
    """One hit to record, resolved: where it is, what it says, and how it counts."""

    path: str
    start: int
    end: int
    snippet: str
    score: float
    qhash: str
    day: str
    kind: SignalType
    dedupe: bool
    count: int = 1
    lines_text: str = ""
    """``<start>:<end>`` as the hit gave them (JS number text): a plain recall key keeps them unfloored."""
    identity: str | None = None
    provenance: Mapping[str, Any] | None = None
    project_key: str | None = None


def _choose_key(store: RecallStore, signal: _Signal, claim: str) -> tuple[str, bool]:
    """Return the entry key a signal lands on, and whether it folds into a ``memory:claim:`` entry."""
    entries = store.entries
    if signal.kind == "daily":
        for key, entry in entries.items():
            if (
                not key.startswith("memory:claim:")
                and isinstance(entry, dict)
                and _count(entry.get("recallCount")) + _count(entry.get("groundedCount")) > 0
                and entry.get("claimHash") == claim
            ):
                return key, False
        return claim_entry_key(claim), False
    if claim_entry_key(claim) in entries:
        return claim_entry_key(claim), True
    claimed = entry_key(signal.path, signal.start, signal.end, claim)
    if signal.kind != "recall" or claimed in entries:
        return claimed, False
    # OpenClaw builds the plain key from the hit as given: its line numbers unfloored (``:2.7:0``).
    return f"memory:{signal.path}:{signal.lines_text}", False


def _apply_signal(store: RecallStore, signal: _Signal, *, moment: datetime, rules: RecordRules) -> str:
    """Fold one signal into its entry (OpenClaw's update rule); return the entry's key."""
    stamp, observed = format_iso(moment), now_ms(moment)
    raw = js_collapse_whitespace(signal.snippet)
    snippet = truncate_snippet(raw)
    # A daily chunk is identified by its text without the heading it was read under, when the caller says which.
    claim = claim_hash(signal.identity if signal.kind == "daily" and signal.identity is not None else raw)
    key, folded = _choose_key(store, signal, claim)
    found = store.entries.get(key)
    existing: dict[str, Any] = found if isinstance(found, dict) else {}
    days_before, hashes_before = _strings(existing.get("recallDays")), _strings(existing.get("queryHashes"))
    duplicate = signal.dedupe and signal.qhash in hashes_before and signal.day in days_before
    added = 0 if duplicate else signal.count
    counts = {name: _count(existing.get(name)) for name in ("recallCount", "dailyCount", "groundedCount")}
    counts[{"recall": "recallCount", "daily": "dailyCount", "grounded": "groundedCount"}[signal.kind]] += added
    user_hashes = _user_hashes(existing) if existing else None
    if signal.kind == "recall":
        user_hashes = merge_recent_distinct(user_hashes or [], signal.qhash, MAX_QUERY_HASHES)
    tags = derive_concept_tags(signal.path, snippet)
    incoming = signal.provenance or {"originClass": "agent", "sessionKind": "unknown", "observedAt": observed}
    provenance = merge_provenance(existing.get("provenance") if existing else None, dict(incoming))
    project = merge_project_keys(existing.get("projectKey"), signal.project_key)
    repeated = (signal.dedupe or signal.kind == "daily") and signal.qhash in hashes_before
    last = _or(existing.get("lastRecalledAt"), stamp) if repeated and existing.get("snippet") == snippet else stamp
    keep_source = bool(existing) and (signal.kind == "daily" or folded)
    entry: dict[str, Any] = {
        "key": key,
        "path": existing.get("path") if keep_source else signal.path,
        "startLine": existing.get("startLine") if keep_source else signal.start,
        "endLine": existing.get("endLine") if keep_source else signal.end,
        "source": "memory",
        "snippet": snippet or existing.get("snippet") or "",
        **counts,
        "totalScore": max(0.0, _score_of(existing.get("totalScore")) + signal.score * added),
        "maxScore": max(_score_of(existing.get("maxScore")), 0.0 if duplicate else signal.score),
        "firstRecalledAt": _or(existing.get("firstRecalledAt"), stamp),
        "lastRecalledAt": last,
        "queryHashes": merge_recent_distinct(hashes_before, signal.qhash, MAX_QUERY_HASHES),
        **({"userQueryHashes": user_hashes} if user_hashes is not None else {}),
        "recallDays": merge_recent_distinct(days_before, signal.day, MAX_RECALL_DAYS, sort=not rules.compat),
        "conceptTags": tags if tags else _strings(existing.get("conceptTags")),
        "provenance": provenance,
        "claimHash": claim,
        **({"projectKey": project} if project else {}),
        **({"promotedAt": existing["promotedAt"]} if existing.get("promotedAt") else {}),
    }
    # Fields a newer OpenClaw (or anyone) wrote that this rule does not know are carried over, not dropped.
    entry.update({k: v for k, v in existing.items() if k not in entry and k not in _OWN_FIELDS})
    store.entries[key] = entry
    return key


_OWN_FIELDS = frozenset(
    {"key", "path", "startLine", "endLine", "source", "snippet", "recallCount", "dailyCount", "groundedCount",
     "totalScore", "maxScore", "firstRecalledAt", "lastRecalledAt", "queryHashes", "userQueryHashes", "recallDays",
     "conceptTags", "provenance", "claimHash", "projectKey", "promotedAt"}
)  # fmt: skip
"""The fields the update rule writes (or, for ``userQueryHashes``, ``projectKey`` and ``promotedAt``, may omit)."""


def _line(value: float) -> int:
    # ``Math.max(1, Math.floor(line))``.
    return max(1, math.floor(value)) if math.isfinite(value) else 1


def _or(value: object, default: str) -> Any:
    # JS ``value ?? default``: only a missing value (None) falls back.
    return default if value is None else value


def _day(value: str | None, today: str) -> str:
    match = _ISO_DAY.match(js_trim(value)) if value else None
    return match.group(1) if match else today


def apply_retention(store: RecallStore, cap: int = MAX_ENTRIES, *, openclaw_compat: bool) -> list[str]:
    """Keep the store's best ``cap`` entries (:func:`enforce_retention`); return the evicted keys.

    ``openclaw_compat`` is ``[recall] openclaw_compat``: OpenClaw's order, or entries without a real recall evicted
    first (#150635).
    """
    entries = {k: v if isinstance(v, dict) else {} for k, v in store.entries.items()}  # read as they would be
    kept, evicted = enforce_retention(entries, cap=cap, openclaw_compat=openclaw_compat)
    if evicted:
        store.entries = {k: store.entries[k] for k in kept}
    return evicted


@contextmanager
def _updating_store(ws: Workspace, now: datetime, rules: RecordRules) -> Iterator[RecallStore]:
    """Hold the store's lock over one read-modify-write: read it normalized, let the caller change it, cap, write.

    The store is read as OpenClaw's ``readStore`` reads it (normalized and capped), so what is written back is the
    normalized store with the caller's changes, as OpenClaw's ``writeStore`` writes it.
    """
    with short_term_lock(ws):
        store = read_store(ws, now=now, move_unreadable=True)
        normalize_store_in_place(store, now=now, openclaw_compat=rules.compat)
        yield store
        apply_retention(store, openclaw_compat=rules.compat)
        write_store(ws, store, now=now)


def _accepts(ws: Workspace, result: SearchHit, *, grounded: bool = False) -> bool:
    # A hit is recorded only from short-term memory, with something to say that is not dreaming's own output (a
    # session corpus is made of raw ``User:`` turns: those pass, except as grounded evidence), and never from a note
    # whose real path is outside the workspace (a symbolic link out of it): in both modes.
    raw = js_collapse_whitespace(result.snippet)
    session = not grounded and is_session_corpus_path(result.path)
    return (
        result.source == "memory"
        and is_short_term_path(result.path)
        and bool(raw)
        and not is_contaminated_snippet(raw, allow_transcript_turn=session)
        and readable_note(ws, result.path) is not None
    )


def record_recall_batch(
    ws: Workspace,
    queries: Sequence[RecallQuery],
    *,
    now: datetime,
    timezone: str = "UTC",
    event: bool = True,
    rules: RecordRules = OPENCLAW_RULES,
) -> int:
    """Record many queries' hits in one locked read-modify-write; return the number of entries touched.

    Hits outside short-term memory, of another source, carrying dreaming output, or in a note whose real path is
    outside the workspace are ignored; when nothing is left the store is not touched at all (nor created).
    """
    accepted = [(q, [r for r in q.results if _accepts(ws, r)]) for q in queries]
    if not any(hits for _, hits in accepted):
        return 0
    today = day_bucket_for(now, timezone)
    touched: set[str] = set()
    with _updating_store(ws, now, rules) as store:
        for q, hits in accepted:
            qhash = query_hash(q.query)
            for hit in hits:
                extra = hit if isinstance(hit, RecallResult) else None
                identity = extra.identity_snippet if extra else None
                signal = _Signal(
                    path=normalize_memory_path(hit.path), start=_line(hit.start_line), end=_line(hit.end_line),
                    snippet=hit.snippet, score=clamp_unit(hit.score), qhash=qhash, day=_day(q.day_bucket, today),
                    kind=q.signal_type, dedupe=q.dedupe_by_query_per_day,
                    lines_text=f"{js_number_text(hit.start_line)}:{js_number_text(hit.end_line)}",
                    identity=js_collapse_whitespace(identity) if identity is not None else None,
                    provenance=extra.provenance if extra else None, project_key=extra.project_key if extra else None,
                )  # fmt: skip
                touched.add(_apply_signal(store, signal, moment=now, rules=rules))
    if event:
        record_event(ws.events, "memory.recall.recorded", now, entries=len(touched), queries=len(queries))
    return len(touched)


def record_short_term_recalls(
    ws: Workspace,
    *,
    query: str,
    results: Sequence[SearchHit],
    now: datetime,
    timezone: str = "UTC",
    signal_type: Literal["recall", "daily"] = "recall",
    dedupe_by_query_per_day: bool = False,
    day_bucket: str | None = None,
    rules: RecordRules = OPENCLAW_RULES,
) -> int:
    """Record one query's hits (OpenClaw's update rule); return the number of entries touched."""
    batch = RecallQuery(query=query, results=results, signal_type=signal_type,
                        dedupe_by_query_per_day=dedupe_by_query_per_day, day_bucket=day_bucket)  # fmt: skip
    return record_recall_batch(ws, [batch], now=now, timezone=timezone, rules=rules)


def record_grounded_short_term_candidates(
    ws: Workspace,
    items: Sequence[GroundedItem],
    *,
    now: datetime,
    timezone: str = "UTC",
    dedupe_by_query_per_day: bool = False,
    rules: RecordRules = OPENCLAW_RULES,
) -> int:
    """Record grounded evidence: ``groundedCount += signal_count``, ``totalScore += score * signal_count``."""
    usable = [
        i
        for i in items
        if _accepts(ws, RecallResult(i.path, i.start_line, i.end_line, i.score, i.snippet), grounded=True)
    ]
    if not usable:
        return 0
    today = day_bucket_for(now, timezone)
    touched: set[str] = set()
    with _updating_store(ws, now, rules) as store:
        for item in usable:
            signal = _Signal(
                path=normalize_memory_path(item.path), start=_line(item.start_line), end=_line(item.end_line),
                snippet=item.snippet, score=clamp_unit(item.score),
                qhash=query_hash(js_collapse_whitespace(item.query) or item.query), day=_day(item.day_bucket, today),
                kind="grounded", dedupe=dedupe_by_query_per_day, count=max(1, int(item.signal_count)),
            )  # fmt: skip
            touched.add(_apply_signal(store, signal, moment=now, rules=rules))
    return len(touched)


def remove_grounded_short_term_candidates(ws: Workspace, *, now: datetime, rules: RecordRules = OPENCLAW_RULES) -> int:
    """Delete entries whose only signals are grounded ones (rollback of a backfill); return how many.

    As OpenClaw's ``removeGroundedShortTermCandidates``: the store read normalized, and when anything goes, it is
    written back with the phase signals of keys it no longer holds pruned.
    """
    with short_term_lock(ws):
        store = read_store(ws, now=now)
        normalize_store_in_place(store, now=now, openclaw_compat=rules.compat)
        doomed = [
            key
            for key, e in store.entries.items()
            if e["groundedCount"] > 0 and e["recallCount"] == 0 and e["dailyCount"] == 0
        ]
        for key in doomed:
            del store.entries[key]
        if doomed:
            write_store(ws, store, now=now)
            prune_phase_signals(ws, known=set(store.entries), now=now)
    return len(doomed)
