"""What every reader of the recall store sees: the stored entries normalized as OpenClaw 2026.9.6 reads them.

OpenClaw passes every read through ``normalizeShortTermRecallStore`` and then its 512-entry cap
(``enforceShortTermRecallStoreRetention``), both in ``short-term-promotion-store-*.mjs``; ranking and the explain output
of ``dreaming promote`` read through :func:`normalize_recall_store`, which does the same, and says why each entry it
leaves out was left out. The rules, entry by entry:

- Dropped: not an object; no path (backslashes become ``/``, one leading ``./`` goes); a line that is not an integer
  (as JS ``Number()`` reads it: ``"3"`` is 3); a source other than ``memory``; a contaminated snippet (session corpora
  may hold raw ``User:`` turns).
- The snippet's whitespace is collapsed, then it is cut to 800 UTF-16 units (a surrogate pair is never split) and
  right-trimmed. Counters are floored at 0, ``totalScore`` is at least 0, ``maxScore`` is clamped to [0, 1]. A missing
  timestamp becomes ``now``.
- ``queryHashes`` and ``userQueryHashes`` keep their first 32 distinct non-blank strings. A missing
  ``userQueryHashes`` becomes a copy of ``queryHashes`` only when the entry has no daily and no grounded signal; a
  stored ``[]`` stays ``[]``.
- ``recallDays`` keeps the leading date of each item, duplicates included, the last 16.
- ``conceptTags``, when an array (even ``[]``), keeps its first 8 distinct lowercased strings; otherwise it is derived
  from the full snippet.
- ``provenance``: an unknown class becomes ``untrusted``, an unknown session kind ``unknown``, a missing
  ``observedAt`` the time of ``lastRecalledAt`` (else ``now``). ``claimHash`` is trimmed, ``projectKey`` normalized
  (owner before the first ``/`` lowercased), a blank ``promotedAt`` dropped.
- Fields this code does not know are kept, after the known ones (OpenClaw drops them).

Over 512 entries, the 512 kept are the first by ``lastRecalledAt`` (newest; unparsable last), total signals, total
score, max score, ``promotedAt`` (newest) and key, and are then re-sorted by key (``localeCompare``). Daily ingestion
re-stamps ``lastRecalledAt`` on entries that were never recalled, so in OpenClaw these push real recalls out (#150635);
with ``[recall] openclaw_compat = false`` entries with a real recall or grounded evidence are kept first.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dreaming.memory.recall._concepts import MAX_CONCEPT_TAGS, derive_concept_tags
from dreaming.memory.recall._contamination import is_contaminated_snippet
from dreaming.memory.recall._js import (
    js_collapse_whitespace,
    js_date_parse_ms,
    js_number,
    js_trim,
    js_trim_end,
    locale_compare_key,
    utf16_len,
    utf16_truncate,
)
from dreaming.memory.recall._paths import is_session_corpus_path, normalize_memory_path
from dreaming.memory.recall._store import RecallStore, format_iso

__all__ = [
    "DROP_CONTAMINATED",
    "DROP_DUPLICATE_KEY",
    "DROP_NOT_AN_INTEGER_LINE",
    "DROP_NOT_AN_OBJECT",
    "DROP_NOT_MEMORY",
    "DROP_NO_PATH",
    "DROP_OVER_CAP",
    "MAX_ENTRIES",
    "MAX_QUERY_HASHES",
    "MAX_RECALL_DAYS",
    "MAX_SNIPPET_UNITS",
    "DroppedEntry",
    "NormalizedStore",
    "enforce_retention",
    "js_object_order",
    "normalize_phase_signals",
    "normalize_project_keys",
    "normalize_recall_entry",
    "normalize_recall_store",
    "normalize_store_in_place",
    "truncate_snippet",
]

MAX_ENTRIES = 512
MAX_SNIPPET_UNITS = 800
MAX_QUERY_HASHES = 32
MAX_RECALL_DAYS = 16

DROP_NOT_AN_OBJECT = "not an object"
DROP_NO_PATH = "no path"
DROP_NOT_AN_INTEGER_LINE = "not an integer line"
DROP_NOT_MEMORY = "source is not memory"
DROP_CONTAMINATED = "contaminated snippet"
DROP_DUPLICATE_KEY = "replaced by a later entry with the same key"
DROP_OVER_CAP = f"over the {MAX_ENTRIES} cap"

_ORIGIN_CLASSES = frozenset({"owner", "agent", "system", "untrusted"})
_SESSION_KINDS = frozenset({"interactive", "cron", "heartbeat", "subagent", "unknown"})
_KNOWN_FIELDS = (
    "key", "path", "startLine", "endLine", "source", "snippet", "recallCount", "dailyCount", "groundedCount",
    "totalScore", "maxScore", "firstRecalledAt", "lastRecalledAt", "queryHashes", "userQueryHashes", "recallDays",
    "conceptTags", "provenance", "claimHash", "projectKey", "promotedAt",
)  # fmt: skip
_KNOWN = frozenset(_KNOWN_FIELDS)
_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_PROJECT_KEY_NOISE = re.compile(r"[\r\n<>]")
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,9}")
_MISSING = object()


@dataclass(frozen=True, kw_only=True, slots=True)
class DroppedEntry:
    """A stored entry a reader does not see, and why."""

    key: str
    """Its key in the store."""
    reason: str
    """Why it was left out (one of the ``DROP_*`` texts)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class NormalizedStore:
    """The recall store as a reader sees it."""

    entries: dict[str, dict[str, Any]]
    """Normalized entries by key, in the order OpenClaw iterates them (the last tie-break of ranking)."""
    dropped: tuple[DroppedEntry, ...]
    """Every stored entry that is not in ``entries``, in store order, the cap's evictions last."""


def js_object_order(keys: Iterable[str]) -> list[str]:
    """Return ``keys`` in the order a JS object iterates them: array indices (``"0"``, ``"42"``) first, ascending."""
    ordered = list(keys)
    indices = [k for k in ordered if "0" <= k[:1] <= "9" and _ARRAY_INDEX.fullmatch(k) and int(k) < 2**32 - 1]
    if not indices:
        return ordered
    index_set = set(indices)
    return sorted(indices, key=int) + [k for k in ordered if k not in index_set]


def truncate_snippet(snippet: str) -> str:
    """Cut a collapsed snippet to 800 UTF-16 units, never inside a surrogate pair, and right-trim what is left."""
    if utf16_len(snippet) <= MAX_SNIPPET_UNITS:
        return snippet
    return js_trim_end(utf16_truncate(snippet, MAX_SNIPPET_UNITS))


def _number(entry: Mapping[str, Any], name: str) -> float:
    value = entry.get(name, _MISSING)
    return math.nan if value is _MISSING else js_number(value)


def _count(entry: Mapping[str, Any], name: str) -> int:
    # ``Math.max(0, Math.floor(Number(x) || 0))``. An infinite count (only a hand edit can write 1e999; JSON.stringify
    # writes null) reads as 0 here, where OpenClaw would carry Infinity.
    raw = entry.get(name)
    if raw.__class__ is int:
        return raw if raw > 0 else 0
    value = _number(entry, name)
    return max(0, math.floor(value)) if math.isfinite(value) else 0


def _score(entry: Mapping[str, Any], name: str) -> int | float:
    # ``Number(x) || 0`` as a number of the type it was stored as, so an integral total written as 3 stays 3.
    raw = entry.get(name)
    if raw.__class__ is float or raw.__class__ is int:
        return raw if raw == raw else 0  # NaN (never from JSON, but a caller's float may be) reads as 0
    value = _number(entry, name)
    return 0 if math.isnan(value) else value


def _distinct_strings(values: list[Any], limit: int) -> list[str]:
    # Already distinct, trimmed and within the limit, as OpenClaw writes them: nothing to do.
    if len(values) <= limit and all(v.__class__ is str and v and js_trim(v) is v for v in values):  # noqa: SIM102
        if len(set(values)) == len(values):
            return list(values)
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        if not isinstance(value, str):
            continue
        text = js_trim(value)
        if not text or text in seen:
            continue
        seen.add(text)
        out.append(text)
        if len(out) >= limit:
            break
    return out


def _iso_day(value: object) -> str:
    # The leading ``YYYY-MM-DD`` of a recall day, or "" (days repeat across entries: each is read once).
    return _iso_day_of(value) if isinstance(value, str) else ""


@functools.lru_cache(maxsize=4096)
def _iso_day_of(value: str) -> str:
    match = _ISO_DAY.match(js_trim(value))
    return match.group(0) if match else ""


def _line(entry: Mapping[str, Any], name: str) -> int | None:
    # ``Number(x)`` when it is an integer (``"3"`` and ``null`` are: 3 and 0), else None.
    raw = entry.get(name)
    if raw.__class__ is int:
        return raw
    value = _number(entry, name)
    return int(value) if math.isfinite(value) and value.is_integer() else None


def normalize_project_keys(value: object) -> str | None:
    """Return OpenClaw's normalized ``projectKey`` list: distinct, ``; ``-joined, a remote owner lower-cased."""
    if not isinstance(value, str):
        return None
    keys: dict[str, None] = {}
    for raw in value.split(";"):
        key = js_trim(raw)
        if not key or _PROJECT_KEY_NOISE.search(key):
            continue
        slash = key.find("/")
        keys[key if key.startswith("path:") or slash < 1 else key[:slash].lower() + key[slash:]] = None
    return "; ".join(keys) if keys else None


def _provenance(raw: dict[str, Any] | list[Any], last_recalled_at: str, now_iso: str) -> dict[str, Any]:
    fields = raw if isinstance(raw, dict) else {}
    origin, kind, observed = fields.get("originClass"), fields.get("sessionKind"), fields.get("observedAt")
    if observed.__class__ not in (int, float) or not math.isfinite(observed):
        fallback = js_date_parse_ms(last_recalled_at)
        observed = int(fallback if fallback is not None else js_date_parse_ms(now_iso) or 0)
    out: dict[str, Any] = {
        "originClass": origin if origin in _ORIGIN_CLASSES else "untrusted",
        "sessionKind": kind if kind in _SESSION_KINDS else "unknown",
        "observedAt": observed,
    }
    supersedes = fields.get("supersedesKey")
    if isinstance(supersedes, str) and js_trim(supersedes):
        out["supersedesKey"] = js_trim(supersedes)
    return out


@functools.lru_cache(maxsize=8192)
def _derived_tags(path: str, snippet: str) -> tuple[str, ...]:
    # Every read derives the tags of every entry stored without them: the same few thousand, read after read.
    return tuple(derive_concept_tags(path, snippet))


_Screened = tuple[str, str, int, int, str]
"""An entry every reader keeps: its key (rebuilt when blank), path, lines and collapsed full snippet."""


def _screen(key: str, value: object) -> _Screened | str:
    # What decides whether an entry is read at all, or the reason it is not (a ``DROP_*`` text).
    if not isinstance(value, dict):
        return DROP_NOT_AN_OBJECT
    raw_path = value.get("path")
    path, session = _stored_path(raw_path) if isinstance(raw_path, str) else ("", False)
    if not path:
        return DROP_NO_PATH
    start, end = _line(value, "startLine"), _line(value, "endLine")
    if start is None or end is None:
        return DROP_NOT_AN_INTEGER_LINE
    if value.get("source") != "memory":
        return DROP_NOT_MEMORY
    raw_snippet = value.get("snippet")
    full = js_collapse_whitespace(raw_snippet) if isinstance(raw_snippet, str) else ""
    if full and is_contaminated_snippet(full, allow_transcript_turn=session, collapsed=True):
        return DROP_CONTAMINATED
    if not key:
        claim = _claim_hash(value)
        key = f"memory:{path}:{_js_int_text(start)}:{_js_int_text(end)}" + (f":{claim}" if claim else "")
    return key, path, start, end, full


@functools.lru_cache(maxsize=4096)
def _stored_path(raw: str) -> tuple[str, bool]:
    # A stored path as read, and whether it is a session corpus. Entries share their notes' paths: each is read once.
    path = normalize_memory_path(raw)
    return path, is_session_corpus_path(path)


def _js_int_text(value: int) -> str:
    # How JS prints an integral number: in exponent form from 1e21 on (Python's repr of the float agrees).
    return str(value) if abs(value) < 10**21 else repr(float(value))


def _claim_hash(entry: Mapping[str, Any]) -> str | None:
    claim = entry.get("claimHash")
    return js_trim(claim) if isinstance(claim, str) and js_trim(claim) else None


def _finish(screened: _Screened, entry: dict[str, Any], now_iso: str) -> dict[str, Any]:
    # The normalized entry, fields in OpenClaw's order, unknown fields after them.
    key, path, start, end, full = screened
    daily, grounded = _count(entry, "dailyCount"), _count(entry, "groundedCount")
    first, last = entry.get("firstRecalledAt"), entry.get("lastRecalledAt")
    first = first if isinstance(first, str) else now_iso
    last = last if isinstance(last, str) else now_iso
    raw_hashes, raw_user, raw_days, raw_tags = (
        entry.get("queryHashes"), entry.get("userQueryHashes"), entry.get("recallDays"), entry.get("conceptTags")
    )  # fmt: skip
    hashes = _distinct_strings(raw_hashes, MAX_QUERY_HASHES) if isinstance(raw_hashes, list) else []
    user_hashes: list[str] | None = None
    if isinstance(raw_user, list):
        user_hashes = _distinct_strings(raw_user, MAX_QUERY_HASHES)
    elif daily == 0 and grounded == 0:
        user_hashes = list(hashes)  # an entry from before userQueryHashes, fed by user recalls only
    days = [d for d in map(_iso_day, raw_days) if d] if isinstance(raw_days, list) else []
    if isinstance(raw_tags, list):
        tags = _distinct_strings([js_trim(t).lower() if isinstance(t, str) else t for t in raw_tags], MAX_CONCEPT_TAGS)
    else:
        tags = list(_derived_tags(path, full))
    claim = _claim_hash(entry)
    max_score = _score(entry, "maxScore")
    out: dict[str, Any] = {
        "key": key,
        "path": path,
        "startLine": start,
        "endLine": end,
        "source": "memory",
        "snippet": truncate_snippet(full),
        "recallCount": _count(entry, "recallCount"),
        "dailyCount": daily,
        "groundedCount": grounded,
        "totalScore": max(0, _score(entry, "totalScore")),
        "maxScore": min(1, max(0, max_score)) if math.isfinite(max_score) else 0,
        "firstRecalledAt": first,
        "lastRecalledAt": last,
        "queryHashes": hashes,
    }
    if user_hashes is not None:
        out["userQueryHashes"] = user_hashes
    out["recallDays"] = days[-MAX_RECALL_DAYS:]
    out["conceptTags"] = tags
    provenance = entry.get("provenance")
    if isinstance(provenance, (dict, list)):
        out["provenance"] = _provenance(provenance, last, now_iso)
    if claim:
        out["claimHash"] = claim
    project = normalize_project_keys(entry.get("projectKey"))
    if project:
        out["projectKey"] = project
    promoted = entry.get("promotedAt")
    if isinstance(promoted, str) and promoted:
        out["promotedAt"] = promoted
    if entry.keys() - _KNOWN:
        out.update((name, field) for name, field in entry.items() if name not in _KNOWN)
    return out


def normalize_recall_entry(key: str, value: object, *, now_iso: str) -> dict[str, Any] | str:
    """Return one stored entry as OpenClaw reads it, or the reason it is dropped (a ``DROP_*`` text).

    Args:
        key: its key in the store; a blank one is rebuilt from path, lines and claim hash.
        value: the stored entry, as parsed from JSON.
        now_iso: what a missing timestamp becomes (``Date.toISOString`` form).
    """
    screened = _screen(key, value)
    if isinstance(screened, str):
        return screened
    assert isinstance(value, dict)
    return _finish(screened, value, now_iso)


def _timestamp(value: object) -> float:
    # OpenClaw's ``parseStoreTimestampMs``: unparsable or missing sorts before every date.
    ms = js_date_parse_ms(value)
    return -math.inf if ms is None else ms


def _retention_key(key: str, entry: Mapping[str, Any], now_iso: str | None) -> tuple[Any, ...]:
    # Ascending sorts best first: newest, most signals, highest total and max score, newest promotion, key. Read
    # through the normalizer's coercions, so a stored entry sorts as its normal form would (a missing
    # ``lastRecalledAt`` reads as ``now_iso``).
    get = entry.get
    recall, daily, grounded, total, max_score = (
        get("recallCount"), get("dailyCount"), get("groundedCount"), get("totalScore"), get("maxScore")
    )  # fmt: skip
    # Counts stored as ints and scores as numbers (as every writer stores them) are read in place.
    if recall.__class__ is int and daily.__class__ is int and grounded.__class__ is int:
        signals = (recall if recall > 0 else 0) + (daily if daily > 0 else 0) + (grounded if grounded > 0 else 0)
    else:
        signals = _count(entry, "recallCount") + _count(entry, "dailyCount") + _count(entry, "groundedCount")
    if not (total.__class__ is float or total.__class__ is int):  # (a NaN reads as 0 below either way)
        total = _score(entry, "totalScore")
    if not (max_score.__class__ is float or max_score.__class__ is int):
        max_score = _score(entry, "maxScore")
    last = get("lastRecalledAt")
    return (
        -_timestamp(last if isinstance(last, str) or now_iso is None else now_iso),
        -signals,
        -(total if total > 0 else 0),
        -(min(1, max(0, max_score)) if math.isfinite(max_score) else 0),
        -_timestamp(promoted) if (promoted := get("promotedAt")) is not None else math.inf,
        locale_compare_key(key),
    )


def _has_real_signal(entry: Mapping[str, Any]) -> bool:
    return _count(entry, "recallCount") + _count(entry, "groundedCount") > 0


def enforce_retention(
    entries: Mapping[str, Mapping[str, Any]],
    *,
    cap: int = MAX_ENTRIES,
    openclaw_compat: bool = True,
    now_iso: str | None = None,
) -> tuple[list[str], list[str]]:
    """Return the keys of the best ``cap`` entries, re-sorted by key (``localeCompare``), and the evicted keys.

    With ``openclaw_compat`` false, entries with a real recall or grounded evidence outrank every entry that only has
    ingestion signals (OpenClaw #150635); within each group OpenClaw's order applies. At or under the cap nothing
    changes, order included. Entries are read through the normalizer's coercions, a missing ``lastRecalledAt`` as
    ``now_iso`` (as unparsable without it).
    """
    if len(entries) <= cap:
        return list(entries), []
    if openclaw_compat:
        ranked = sorted(entries, key=lambda k: _retention_key(k, entries[k], now_iso))
    else:
        ranked = sorted(
            entries, key=lambda k: (not _has_real_signal(entries[k]), *_retention_key(k, entries[k], now_iso))
        )
    return sorted(ranked[:cap], key=locale_compare_key), ranked[cap:]


def normalize_recall_store(
    raw: Mapping[str, Any], *, now: datetime, openclaw_compat: bool = True, cap: int = MAX_ENTRIES
) -> NormalizedStore:
    """Normalize stored entries (key to entry, in store order) and apply the entry cap, as OpenClaw reads a store.

    Pure: ``raw`` is not changed; unknown fields of the result are shared with it, not copied.

    Args:
        raw: the entries as stored.
        now: what a missing timestamp becomes.
        openclaw_compat: evict as OpenClaw does (see :func:`enforce_retention`).
        cap: the entry cap.
    """
    now_iso = format_iso(now)
    screened: dict[str, _Screened] = {}
    stored: dict[str, dict[str, Any]] = {}
    source_of: dict[str, str] = {}
    dropped: list[DroppedEntry] = []
    for stored_key in js_object_order(raw):
        value = raw[stored_key]
        result = _screen(stored_key, value)
        if isinstance(result, str):
            dropped.append(DroppedEntry(key=stored_key, reason=result))
            continue
        key = result[0]
        if key in source_of:  # a blank key rebuilt into one that exists: the later entry wins, as in JS
            dropped.append(DroppedEntry(key=source_of[key], reason=DROP_DUPLICATE_KEY))
        source_of[key] = stored_key
        screened[key], stored[key] = result, value
    # The cap first, on the stored values read as the normalizer reads them: only the kept entries are normalized.
    kept, evicted = enforce_retention(stored, cap=cap, openclaw_compat=openclaw_compat, now_iso=now_iso)
    dropped.extend(DroppedEntry(key=source_of[k], reason=DROP_OVER_CAP) for k in evicted)
    entries = {k: _finish(screened[k], stored[k], now_iso) for k in kept}
    return NormalizedStore(entries=entries, dropped=tuple(dropped))


def normalize_store_in_place(
    store: RecallStore, *, now: datetime, openclaw_compat: bool = True, cap: int = MAX_ENTRIES
) -> NormalizedStore:
    """Make ``store`` hold what OpenClaw's ``readStore`` yields: its entries normalized and capped; return that read.

    Every read-modify-write starts here, so that what it writes back is the normalized store with its changes, as
    OpenClaw's ``writeStore`` writes it (derived concept tags, the ``userQueryHashes`` fallback, provenance...).
    Unknown fields are kept. ``cap`` ``sys.maxsize`` normalizes without the cap (repair caps after its own steps).
    """
    read = normalize_recall_store(store.entries, now=now, openclaw_compat=openclaw_compat, cap=cap)
    store.entries = read.entries
    return read


def _hits(value: object) -> int:
    # ``toFiniteNonNegativeInt(value, 0)``.
    number = js_number(value) if value is not _MISSING else math.nan
    return max(0, math.floor(number)) if math.isfinite(number) else 0


def normalize_phase_signals(raw: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Return phase-signal entries as OpenClaw reads them: hits floored, entries with no hit at all dropped.

    An entry is filed under its own non-blank ``key`` field when it has one, else under its store key.
    """
    out: dict[str, dict[str, Any]] = {}
    for map_key in js_object_order(raw):
        entry = raw[map_key]
        if not isinstance(entry, dict):
            continue
        own = entry.get("key")
        key = own if isinstance(own, str) and js_trim(own) else map_key
        light, rem = _hits(entry.get("lightHits", _MISSING)), _hits(entry.get("remHits", _MISSING))
        if light == 0 and rem == 0:
            continue
        signal: dict[str, Any] = {"key": key, "lightHits": light, "remHits": rem}
        for name in ("lastLightAt", "lastRemAt", "lastRemConsideredAt"):
            value = entry.get(name)
            if isinstance(value, str) and js_trim(value):
                signal[name] = value
        out[key] = signal
    return out
