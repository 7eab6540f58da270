"""How often light and REM revisited each recall entry, and when: OpenClaw's phase signals.

They live beside the recall store (:mod:`._store_location` picks it): ``memory/.dreams/phase-signals.json``, or the
``short-term-phase-signals`` rows of OpenClaw 2026.9's database, with the same payload per key and the store's
``updatedAt`` in the ``phase`` meta row. In the database an entry with neither a light nor a REM hit is dropped on
read and never written, as OpenClaw's phase normalizer drops it; a database that cannot be used reads as no signals
and refuses writes (:class:`~dreaming.errors.RecallStoreError`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from dreaming.errors import RecallStoreError
from dreaming.memory._decode import parse_json_bytes
from dreaming.memory.files import atomic_write_json, move_aside
from dreaming.memory.recall._openclaw_db import PHASE_NAMESPACE, OpenClawStore, read_namespace, write_namespace
from dreaming.memory.recall._store import epoch_ms, format_iso, parse_iso, short_term_lock
from dreaming.memory.recall._store_location import openclaw_store_of
from dreaming.memory.workspace import Workspace

__all__ = [
    "MAX_PHASE_HITS",
    "read_light_staged_keys",
    "read_phase_signals",
    "record_phase_signals",
    "record_rem_considered",
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


def _update(ws: Workspace, keys: Iterable[str], now: datetime, field: Literal["light", "rem", "considered"]) -> int:
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return 0
    stamp = format_iso(now)
    with short_term_lock(ws):
        chosen = openclaw_store_of(ws)
        doc: dict[str, Any] = {"entries": _read_rows(chosen, now)} if chosen else _load_for_write(ws, now)
        entries: dict[str, Any] = doc["entries"]
        for key in wanted:
            entry = entries.setdefault(key, {"key": key, "lightHits": 0, "remHits": 0})
            if field == "considered":
                entry["lastRemConsideredAt"] = stamp
                continue
            hits = "lightHits" if field == "light" else "remHits"
            last = "lastLightAt" if field == "light" else "lastRemAt"
            if entry.get(last) == stamp:
                continue  # this very night already counted it (it failed later and runs again)
            previous = entry.get(hits)
            count = previous if isinstance(previous, int) and not isinstance(previous, bool) and previous > 0 else 0
            entry[hits] = min(MAX_PHASE_HITS, count + 1)
            entry[last] = stamp
        if chosen is not None:
            rows = _with_hits(entries)
            write_namespace(chosen, PHASE_NAMESPACE, "phase", rows, updated_at=stamp, now_ms=epoch_ms(now))
        else:
            doc["updatedAt"] = stamp
            atomic_write_json(ws.phase_signals, doc)
    return len(wanted)


def record_phase_signals(ws: Workspace, *, phase: Literal["light", "rem"], keys: Iterable[str], now: datetime) -> int:
    """Count one light or REM revisit of each key (hits capped at 9999); return how many keys.

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
