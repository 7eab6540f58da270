"""How often light and REM revisited each recall entry, and when: OpenClaw's phase signals.

They live beside the recall store (:mod:`._store_location` picks it): ``memory/.dreams/phase-signals.json``, or the
``short-term-phase-signals`` rows of OpenClaw 2026.9's database, with the same payload per key and the store's
``updatedAt`` in the ``phase`` meta row. Every update is OpenClaw 2026.9's ``updatePhaseSignals``: under the
short-term lock, the signals read as its phase normalizer reads them, only keys the recall store holds counted, and
signals of keys it no longer holds or with neither a light nor a REM hit pruned before the whole store is written. A
database that cannot be used reads as no signals and refuses writes (:class:`~dreaming.errors.RecallStoreError`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from dreaming.errors import RecallStoreError
from dreaming.memory._decode import parse_json_bytes
from dreaming.memory.files import atomic_write_json, move_aside
from dreaming.memory.recall._normalize import normalize_phase_signals, normalize_recall_store
from dreaming.memory.recall._openclaw_db import PHASE_NAMESPACE, OpenClawStore, read_namespace, write_namespace
from dreaming.memory.recall._store import epoch_ms, format_iso, parse_iso, read_store, short_term_lock
from dreaming.memory.recall._store_location import openclaw_store_of
from dreaming.memory.workspace import Workspace

__all__ = [
    "MAX_PHASE_HITS",
    "prune_phase_signals",
    "read_light_staged_keys",
    "read_phase_signals",
    "record_phase_signals",
    "record_rem_considered",
    "remove_phase_signals",
]

MAX_PHASE_HITS = 9999
_VERSION = 1


def _parse(raw: bytes) -> dict[str, Any] | None:
    # The document when it is a version-1 object with an ``entries`` object, else None.
    try:
        doc = parse_json_bytes(raw)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("version") != _VERSION or not isinstance(doc.get("entries"), dict):
        return None
    return doc


def _hits(value: Any) -> int:
    # OpenClaw's toFiniteNonNegativeInt(value, 0) on what JSON can hold: Number(value), floored, 0 when negative.
    if isinstance(value, str):
        try:
            value = float(value.strip() or 0)
        except ValueError:
            return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return max(0, math.floor(value))
    return 0  # null, arrays, objects: 0 or NaN, both 0 here


def _with_hits(entries: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Return the object entries that have a light or REM hit (OpenClaw's phase normalizer drops the others)."""
    return {
        key: value
        for key, value in entries.items()
        if isinstance(value, dict) and (_hits(value.get("lightHits")) or _hits(value.get("remHits")))
    }


def _read_rows(chosen: OpenClawStore, now: datetime) -> dict[str, dict[str, Any]]:
    return _with_hits(read_namespace(chosen, PHASE_NAMESPACE, "phase", now_ms=epoch_ms(now)).entries)


def read_phase_signals(ws: Workspace, *, now: datetime | None = None) -> dict[str, dict[str, Any]]:
    """Return the phase signals by key (empty when missing or unusable).

    ``now`` only decides which database rows have expired (none of OpenClaw's do); the clock by default.
    """
    try:
        chosen = openclaw_store_of(ws)
        if chosen is not None:
            return _read_rows(chosen, now or datetime.now(UTC))
    except RecallStoreError:
        return {}
    try:
        doc = _parse(ws.phase_signals.read_bytes())
    except FileNotFoundError:
        return {}
    if doc is None:
        return {}
    return {str(k): v for k, v in doc["entries"].items() if isinstance(v, dict)}


def _load_for_write(ws: Workspace, now: datetime) -> dict[str, Any]:
    path = ws.phase_signals
    try:
        doc = _parse(path.read_bytes())
    except FileNotFoundError:
        return {"version": _VERSION, "entries": {}}
    if doc is None:
        move_aside(path, now)
        return {"version": _VERSION, "entries": {}}
    return doc


def _read_for_write(ws: Workspace, now: datetime) -> tuple[OpenClawStore | None, dict[str, Any]]:
    """Return the chosen store and its document, entries read as OpenClaw's phase normalizer reads them (locked)."""
    chosen = openclaw_store_of(ws)
    if chosen is not None:
        rows = read_namespace(chosen, PHASE_NAMESPACE, "phase", now_ms=epoch_ms(now)).entries
        return chosen, {"version": _VERSION, "entries": normalize_phase_signals(rows)}
    doc = _load_for_write(ws, now)
    return None, {**doc, "entries": normalize_phase_signals(doc["entries"])}


def _write(ws: Workspace, chosen: OpenClawStore | None, doc: dict[str, Any], now: datetime) -> None:
    stamp = format_iso(now)
    if chosen is not None:
        rows = _with_hits(doc["entries"])
        write_namespace(chosen, PHASE_NAMESPACE, "phase", rows, updated_at=stamp, now_ms=epoch_ms(now))
    else:
        atomic_write_json(ws.phase_signals, {**doc, "updatedAt": stamp})


def remove_phase_signals(ws: Workspace, keys: Iterable[str], *, now: datetime) -> bool:
    """Delete the phase signals of ``keys`` (entries repair removed); return whether any was there.

    Written as OpenClaw's repair writes them: the whole phase store, normalized. Call under the short-term lock.
    """
    doomed = set(keys)
    chosen, doc = _read_for_write(ws, now)
    entries: dict[str, Any] = doc["entries"]
    if not doomed & set(entries):
        return False
    doc["entries"] = {k: v for k, v in entries.items() if k not in doomed}
    _write(ws, chosen, doc, now)
    return True


def prune_phase_signals(ws: Workspace, *, known: set[str], now: datetime) -> bool:
    """Delete the phase signals of every key not in ``known``; return whether any went. Call under the lock."""
    chosen, doc = _read_for_write(ws, now)
    entries: dict[str, Any] = doc["entries"]
    if set(entries) <= known:
        return False
    doc["entries"] = {k: v for k, v in entries.items() if k in known}
    _write(ws, chosen, doc, now)
    return True


def _update(ws: Workspace, keys: Iterable[str], now: datetime, field: Literal["light", "rem", "considered"]) -> int:
    """Count a phase visit of each key the recall store holds, as OpenClaw's ``updatePhaseSignals`` does.

    Signals for keys the recall store does not hold, and signals with no hit left, are pruned on the way.
    """
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return 0
    stamp = format_iso(now)
    with short_term_lock(ws):
        recall = read_store(ws, now=now)
        known = set(normalize_recall_store(recall.entries, now=now).entries)
        chosen, doc = _read_for_write(ws, now)
        entries: dict[str, Any] = doc["entries"]
        counted = 0
        for key in wanted:
            if key not in known:
                continue
            counted += 1
            entry = entries.setdefault(key, {"key": key, "lightHits": 0, "remHits": 0})
            if field == "considered":
                entry["lastRemConsideredAt"] = stamp
                continue
            hits = "lightHits" if field == "light" else "remHits"
            last = "lastLightAt" if field == "light" else "lastRemAt"
            if entry.get(last) == stamp:
                continue  # this very night already counted it (it failed later and runs again)
            entry[hits] = min(MAX_PHASE_HITS, entry[hits] + 1)
            entry[last] = stamp
        doc["entries"] = {k: v for k, v in entries.items() if k in known and (v["lightHits"] > 0 or v["remHits"] > 0)}
        _write(ws, chosen, doc, now)
    return counted


def record_phase_signals(ws: Workspace, *, phase: Literal["light", "rem"], keys: Iterable[str], now: datetime) -> int:
    """Count one light or REM revisit of each key the recall store holds (hits capped at 9999); return how many.

    A key this same night (the same ``now``) already counted is not counted again: a night that failed after this
    write and runs again ends with the counts of a night that never failed.
    """
    return _update(ws, keys, now, phase)


def record_rem_considered(ws: Workspace, *, keys: Iterable[str], now: datetime) -> int:
    """Stamp ``lastRemConsideredAt`` so light's staged keys are not offered to REM again."""
    return _update(ws, keys, now, "considered")


def read_light_staged_keys(ws: Workspace) -> set[str]:
    """Return keys whose last light signal is newer than their last REM signal or REM consideration."""
    staged: set[str] = set()
    for key, entry in read_phase_signals(ws).items():
        light = parse_iso(entry.get("lastLightAt"))
        if light is None:
            continue
        later = [t for t in (parse_iso(entry.get("lastRemAt")), parse_iso(entry.get("lastRemConsideredAt"))) if t]
        if not later or light > max(later):
            staged.add(key)
    return staged
