"""OpenClaw's ``phase-signals.json``: how often light and REM revisited each recall entry, and when."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from dreaming.memory._decode import parse_json_bytes
from dreaming.memory.files import atomic_write_json, move_aside
from dreaming.memory.recall._store import format_iso, parse_iso, short_term_lock
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


def read_phase_signals(ws: Workspace) -> dict[str, dict[str, Any]]:
    """Return the entries of ``phase-signals.json`` by key (empty when missing or unusable)."""
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
        doc = _load_for_write(ws, now)
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
