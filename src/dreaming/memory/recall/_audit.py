"""Doctor for the recall artifacts: audit the store and its lock, and repair what can be repaired.

Repair is OpenClaw 2026.9's ``repairShortTermPromotionArtifacts`` (:func:`sweep_repair`), which both ``dreaming doctor
--repair`` and the nightly sweep run: the store read through OpenClaw's normalizer, concept tags derived again (the
derived list replaces the stored one unless it is empty), recall days made distinct with the day of
``lastRecalledAt`` appended, entries whose note is gone removed with their phase signals, the 512 cap; the store is
rewritten only when that changes anything, and a stale lock is removed. The audit counts what that repair would do.

With ``[recall] openclaw_compat = false`` repair is this project's normalization instead (distinct query hashes and
days, counters floored, snippets cut to 800 characters, missing concept tags and days derived, invalid and
contaminated entries dropped, the overflow past 512 with real recalls kept first); the sweep then removes entries whose
note is gone as well. In both modes a healthy store is left byte-identical.
"""

from __future__ import annotations

import errno
import json
import math
import re
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from dreaming.memory.recall._concepts import derive_concept_tags, script_of
from dreaming.memory.recall._contamination import is_contaminated_snippet
from dreaming.memory.recall._js import js_trim
from dreaming.memory.recall._normalize import (
    MAX_ENTRIES,
    MAX_QUERY_HASHES,
    MAX_RECALL_DAYS,
    MAX_SNIPPET_UNITS,
    normalize_recall_store,
    normalize_store_in_place,
)
from dreaming.memory.recall._paths import is_short_term_path, normalize_memory_path
from dreaming.memory.recall._phase_signals import remove_phase_signals
from dreaming.memory.recall._record import apply_retention, merge_recent_distinct
from dreaming.memory.recall._store import (
    RecallStore,
    format_iso,
    lock_is_stale,
    parse_iso,
    promotion_lock_path,
    read_store,
    recall_store_exists,
    short_term_lock,
    write_store,
)
from dreaming.memory.workspace import Workspace

__all__ = [
    "AuditIssue",
    "AuditReport",
    "RepairReport",
    "SweepRepair",
    "audit_recall_artifacts",
    "normalize_entry",
    "note_candidates",
    "repair_recall_artifacts",
    "sweep_repair",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditIssue:
    """One finding of the audit."""

    severity: str
    """``warn`` or ``error``."""
    code: str
    """OpenClaw's issue code, e.g. ``recall-store-invalid``."""
    message: str
    """What is wrong, for people."""
    fixable: bool
    """Whether repair fixes it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditReport:
    """What the audit found."""

    issues: tuple[AuditIssue, ...]
    """Findings, in a stable order."""
    entry_count: int
    """Entries in the store."""
    invalid_entry_count: int
    """Entries repair would drop as invalid."""
    promoted_count: int
    """Entries with ``promotedAt``."""
    spaced_count: int
    """Entries recalled on more than one day."""
    concept_tagged_count: int
    """Entries with concept tags."""
    latin_entry_count: int
    """Entries whose snippet is Latin script only."""
    cjk_entry_count: int
    """Entries whose snippet is CJK only."""
    mixed_entry_count: int
    """Entries mixing Latin and CJK."""
    other_entry_count: int
    """Everything else."""
    dangling_entry_count: int = 0
    """Entries whose note no longer exists (repair removes them; counted with ``openclaw_compat``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RepairReport:
    """What repair changed."""

    changed: bool
    """Anything at all."""
    rewrote_store: bool
    """The store file was rewritten."""
    removed_invalid_entries: int
    """Invalid or contaminated entries dropped."""
    removed_overflow_entries: int
    """Entries dropped to respect the 512-entry cap."""
    removed_stale_lock: bool
    """A stale lock file was deleted."""
    removed_dangling_entries: int = 0
    """Entries dropped because their note is gone (with ``openclaw_compat``)."""


def normalize_entry(key: str, entry: Any) -> dict[str, Any] | None:
    """Return the normalized form of a store entry, or None when it is invalid (unknown fields are kept).

    The result is a new dict; values it does not rewrite (unknown fields among them) are shared with ``entry``, not
    copied: repair replaces the whole store with the results, and a deep copy of 20,000 entries took half a second.
    """
    if not isinstance(entry, dict):
        return None
    path, snippet = entry.get("path"), entry.get("snippet")
    start, end = entry.get("startLine"), entry.get("endLine")
    if not isinstance(path, str) or not path.strip() or not is_short_term_path(path):
        return None
    if entry.get("source") != "memory":
        return None  # OpenClaw reads only memory-corpus entries; another source must not become a candidate
    if not isinstance(snippet, str) or not snippet.strip() or is_contaminated_snippet(snippet):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (start, end)):
        return None
    out = dict(entry)
    out["key"] = entry.get("key") if isinstance(entry.get("key"), str) and entry.get("key") else key
    out["source"] = "memory"
    if len(snippet) > MAX_SNIPPET_UNITS:
        out["snippet"] = snippet[:MAX_SNIPPET_UNITS]
    for name in ("recallCount", "dailyCount", "groundedCount"):
        value = entry.get(name, 0)
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            out[name] = max(0, math.floor(value)) if isinstance(value, float) and math.isfinite(value) else 0
    for name in ("totalScore", "maxScore"):
        value = entry.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            out[name] = 0
    hashes = entry.get("queryHashes")
    hashes = [h for h in hashes if isinstance(h, str)] if isinstance(hashes, list) else []
    out["queryHashes"] = list(dict.fromkeys(hashes))[-MAX_QUERY_HASHES:]
    days = entry.get("recallDays")
    days = sorted(dict.fromkeys(d for d in days if isinstance(d, str))) if isinstance(days, list) else []
    if not days:
        last = parse_iso(entry.get("lastRecalledAt"))
        days = [last.date().isoformat()] if last else []
    out["recallDays"] = days[-MAX_RECALL_DAYS:]
    tags = entry.get("conceptTags")
    if not isinstance(tags, list) or not tags:
        out["conceptTags"] = derive_concept_tags(path, str(out["snippet"]))
    return out


def _normalized(store: RecallStore) -> tuple[dict[str, dict[str, Any]], int, int]:
    entries: dict[str, dict[str, Any]] = {}
    invalid = 0
    for key, entry in store.entries.items():
        norm = normalize_entry(key, entry)
        if norm is None:
            invalid += 1
        else:
            entries[key] = norm
    trimmed = RecallStore(entries=entries)
    overflow = len(apply_retention(trimmed, MAX_ENTRIES, openclaw_compat=False))
    return trimmed.entries, invalid, overflow


def _script(text: str) -> str:
    kinds = {script_of(c) for c in text if c.isalpha()}
    cjk = bool(kinds & {"han", "kana", "hangul"})
    latin = "latin" in kinds
    return "mixed" if cjk and latin else "cjk" if cjk else "latin" if latin else "other"


def audit_recall_artifacts(ws: Workspace, *, now: datetime, openclaw_compat: bool = True) -> AuditReport:
    """Inspect the recall store and its lock without changing anything.

    With ``openclaw_compat`` entries are judged as OpenClaw's audit judges them: invalid is what its read normalizer
    drops, dangling an entry whose note is gone, over the limit a store of more than 512 normalized entries.
    """
    issues: list[AuditIssue] = []
    store = read_store(ws, now=now)
    if store.problem == "empty":
        issues.append(
            AuditIssue(severity="warn", code="recall-store-empty", message="Recall store is empty.", fixable=True)
        )
    elif store.problem:
        msg = f"Recall store is {store.problem}."
        issues.append(AuditIssue(severity="error", code="recall-store-unreadable", message=msg, fixable=True))
    dangling = 0
    if openclaw_compat:
        entries = normalize_recall_store(store.entries, now=now, cap=sys.maxsize).entries
        invalid = len(store.entries) - len(entries)
        dangling = sum(1 for e in entries.values() if not _note_exists(ws, e["path"]))
        oversized = len(entries) > MAX_ENTRIES
    else:
        entries, invalid, overflow = _normalized(store)
        oversized = bool(overflow) or any(
            len(str(e.get("snippet", ""))) > MAX_SNIPPET_UNITS for e in store.entries.values() if isinstance(e, dict)
        )
    if invalid:
        msg = f"{invalid} recall entr{'y is' if invalid == 1 else 'ies are'} invalid."
        issues.append(AuditIssue(severity="warn", code="recall-store-invalid", message=msg, fixable=True))
    if dangling:
        msg = f"{dangling} recall entr{'y names a note that is' if dangling == 1 else 'ies name notes that are'} gone."
        issues.append(AuditIssue(severity="warn", code="recall-store-dangling", message=msg, fixable=True))
    if oversized:
        msg = f"Recall store holds {len(store.entries)} entries (limit {MAX_ENTRIES}) or oversized snippets."
        issues.append(AuditIssue(severity="warn", code="recall-store-over-limit", message=msg, fixable=True))
    lock = promotion_lock_path(ws)
    try:
        lock.stat()
    except FileNotFoundError:
        pass
    except OSError as exc:
        code = errno.errorcode.get(exc.errno or 0, str(exc.errno))
        msg = f"Short-term promotion lock could not be inspected: {code}."
        issues.append(AuditIssue(severity="warn", code="recall-lock-unreadable", message=msg, fixable=False))
    else:
        if lock_is_stale(lock, now_s=now.timestamp()):
            msg = "Short-term promotion lock is stale."
            issues.append(AuditIssue(severity="warn", code="recall-lock-stale", message=msg, fixable=True))
    scripts = [_script(str(e.get("snippet", ""))) for e in entries.values()]
    return AuditReport(
        issues=tuple(issues),
        entry_count=len(store.entries),
        invalid_entry_count=invalid,
        promoted_count=sum(1 for e in entries.values() if e.get("promotedAt")),
        spaced_count=sum(1 for e in entries.values() if len(e.get("recallDays", [])) > 1),
        concept_tagged_count=sum(1 for e in entries.values() if e.get("conceptTags")),
        latin_entry_count=scripts.count("latin"),
        cjk_entry_count=scripts.count("cjk"),
        mixed_entry_count=scripts.count("mixed"),
        other_entry_count=scripts.count("other"),
        dangling_entry_count=dangling,
    )


def repair_in_place(store: RecallStore) -> tuple[bool, int, int]:
    """Normalize ``store`` in memory; return (changed, invalid removed, overflow removed). Call under the lock."""
    entries, invalid, overflow = _normalized(store)
    changed = store.problem is not None or entries != store.entries or list(entries) != list(store.entries)
    store.entries = entries
    return changed, invalid, overflow


def repair_recall_artifacts(ws: Workspace, *, now: datetime, openclaw_compat: bool = True) -> RepairReport:
    """Remove a stale lock, then (under the lock) repair the store and rewrite it when that changes anything.

    With ``openclaw_compat`` the repair is OpenClaw's (:func:`sweep_repair`, which also drops the phase signals of the
    entries it removes); without it, this project's normalization (:func:`repair_in_place`).
    """
    lock = promotion_lock_path(ws)
    removed_lock = False
    if lock_is_stale(lock, now_s=now.timestamp()):
        lock.unlink(missing_ok=True)
        removed_lock = True
    exists = recall_store_exists(ws, now=now)  # the JSON file, or OpenClaw's rows when the store is SQLite
    dangling = 0
    with short_term_lock(ws):
        store = read_store(ws, now=now, move_unreadable=True)
        if openclaw_compat:
            fixed = sweep_repair(ws, store, now=now, write_signals=exists)
            changed, invalid, overflow = fixed.changed, fixed.removed_invalid_entries, fixed.removed_overflow_entries
            dangling = fixed.removed_dangling_entries
        else:
            changed, invalid, overflow = repair_in_place(store)
        rewrote = bool(exists and changed)
        if rewrote:
            write_store(ws, store, now=now)
    return RepairReport(
        changed=rewrote or removed_lock,
        rewrote_store=rewrote,
        removed_invalid_entries=invalid,
        removed_overflow_entries=overflow,
        removed_stale_lock=removed_lock,
        removed_dangling_entries=dangling,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class SweepRepair:
    """What the nightly sweep's repair changed in the store it was given."""

    changed: bool
    """The store differs from what was read (so it must be written)."""
    removed_invalid_entries: int
    """Entries that were not valid recall entries, or carried dreaming output."""
    removed_dangling_entries: int
    """Entries whose note no longer exists."""
    removed_overflow_entries: int
    """Entries past the 512 cap."""


def note_candidates(ws: Workspace, path: str) -> list[Path]:
    """Return where a stored path may live, as OpenClaw looks: the path, then ``memory/<basename>`` if elsewhere."""
    text = normalize_memory_path(path)
    names = [text] if text.startswith("memory/") else [text, f"memory/{text.rsplit('/', 1)[-1]}"]
    return list(dict.fromkeys(ws.root / name for name in names))


def _note_exists(ws: Workspace, path: str) -> bool:
    # A candidate whose real path leaves the workspace is never looked at; such an entry is kept, not judged gone.
    for candidate in note_candidates(ws, path):
        if not ws.contains(candidate):
            return True
        if candidate.is_file():
            return True
    return False


def sweep_repair(
    ws: Workspace, store: RecallStore, *, now: datetime, compat: bool = True, write_signals: bool = True
) -> SweepRepair:
    """Repair ``store`` in memory as the nightly sweep does, and drop the phase signals of removed entries.

    With ``compat`` this is OpenClaw 2026.9's ``repairShortTermPromotionArtifacts`` (module docstring): the store read
    through OpenClaw's normalizer (without the cap), concept tags derived again, recall days made distinct with the day
    of ``lastRecalledAt``, entries whose note is gone removed, the 512 cap; ``changed`` when anything was removed or
    the result differs from the normalized read. Without ``compat``, this project's normalization
    (:func:`repair_in_place`), then the same removal of entries whose note is gone. Call under the lock; the caller
    writes the store when ``changed``. ``write_signals=False`` (a dry run) leaves the phase signals alone.
    """
    if compat:
        stored = len(store.entries)
        normalize_store_in_place(store, now=now, cap=sys.maxsize)
        invalid = max(0, stored - len(store.entries))
        before = json.dumps(store.entries, ensure_ascii=False)
        fallback = format_iso(now)[:10]
        entries: dict[str, dict[str, Any]] = {}
        for key, entry in store.entries.items():
            tags = derive_concept_tags(entry["path"], entry["snippet"])
            day = _iso_day(entry["lastRecalledAt"]) or fallback
            entries[key] = {
                **entry,
                "recallDays": merge_recent_distinct(entry["recallDays"], day, MAX_RECALL_DAYS),
                "conceptTags": tags or entry["conceptTags"],
            }
        store.entries = entries
        changed = store.problem is not None or invalid > 0
    else:
        changed, invalid, _ = repair_in_place(store)
        before = ""
    gone = [key for key, entry in store.entries.items() if not _note_exists(ws, str(entry.get("path", "")))]
    for key in gone:
        del store.entries[key]
    overflow = len(apply_retention(store, MAX_ENTRIES, openclaw_compat=compat))
    if compat:
        changed = changed or json.dumps(store.entries, ensure_ascii=False) != before
    changed = changed or bool(gone) or overflow > 0
    if gone and write_signals:
        remove_phase_signals(ws, gone, now=now)
    return SweepRepair(
        changed=changed, removed_invalid_entries=invalid, removed_dangling_entries=len(gone),
        removed_overflow_entries=overflow,
    )  # fmt: skip


def _iso_day(value: str) -> str | None:
    # OpenClaw's ``normalizeIsoDay``: the leading ``YYYY-MM-DD`` of the trimmed text.
    match = re.match(r"([0-9]{4}-[0-9]{2}-[0-9]{2})", js_trim(value))
    return match.group(1) if match else None
