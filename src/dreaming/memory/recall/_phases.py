"""Light and REM sleep for recalls, as OpenClaw runs them in its separate storage mode.

Light ingests recent daily notes, stages the freshest entries and writes ``memory/dreaming/light/<day>.md``; REM finds
recurring themes and possible lasting truths and writes ``memory/dreaming/rem/<day>.md``. Both record phase signals,
which lift an entry's promotion score. Neither writes into daily notes.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from dreaming.config import DreamingConfig
from dreaming.memory.files import InputReport, atomic_write_text
from dreaming.memory.recall._contamination import is_unpromotable_snippet
from dreaming.memory.recall._ingest import IngestReport, ingest_daily_notes
from dreaming.memory.recall._normalize import normalize_recall_store
from dreaming.memory.recall._paths import readable_note
from dreaming.memory.recall._phase_signals import read_light_staged_keys, record_phase_signals, record_rem_considered
from dreaming.memory.recall._ranking import _count
from dreaming.memory.recall._record import RecordRules, day_bucket_for
from dreaming.memory.recall._store import parse_iso, read_store
from dreaming.memory.workspace import Workspace

__all__ = [
    "LIGHT_LOOKBACK_DAYS",
    "REM_LOOKBACK_DAYS",
    "RecallPhaseSummary",
    "light_sleep_recall",
    "phase_report_path",
    "rem_sleep_recall",
    "text_similarity",
]

LIGHT_LOOKBACK_DAYS = 2
"""Light considers entries recalled on the dreaming day or this many days before it."""
REM_LOOKBACK_DAYS = 7
"""REM considers entries recalled on the dreaming day or this many days before it."""
LIGHT_DEDUPE_SIMILARITY = 0.9
"""Light skips an entry at least this similar (:func:`text_similarity`) to one already staged from the same note."""
REM_TRUTH_SIMILARITY = 0.88
"""REM skips a possible truth at least this similar to one already offered."""
REM_MIN_PATTERN_STRENGTH = 0.75
"""A concept tag is a REM theme when its strength (twice its share of the pool, capped at 1) reaches this."""
REM_MIN_TRUTH_CONFIDENCE = 0.45
"""An entry is offered as a possible lasting truth only from this confidence up."""
STAGE_LIMIT = 20
"""Light stages at most this many entries per night."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RecallPhaseSummary:
    """What one light or REM pass did."""

    phase: str
    """``light`` or ``rem``."""
    day: str
    """The dreaming day (``YYYY-MM-DD`` in the configured timezone)."""
    report_path: Path
    """The report written under ``memory/dreaming/<phase>/``."""
    keys: tuple[str, ...]
    """Entries staged (light) or offered as lasting truths (REM); they received a phase signal."""
    themes: tuple[str, ...] = ()
    """REM reflections: concept tags that kept surfacing."""
    ingest: IngestReport | None = None
    """Daily-note ingestion (light only)."""
    lines: tuple[str, ...] = field(default=(), repr=False)
    """The report's body lines."""


def phase_report_path(ws: Workspace, phase: str, day: str) -> Path:
    """Return ``memory/dreaming/<phase>/<day>.md``."""
    return ws.reports_dir / phase / f"{day}.md"


def text_similarity(a: str, b: str) -> float:
    """Return the Jaccard similarity of the lower-cased word sets of ``a`` and ``b``."""
    wa, wb = set(a.lower().split()), set(b.lower().split())
    if not wa or not wb:
        return 1.0 if wa == wb else 0.0
    return len(wa & wb) / len(wa | wb)


def _n(entry: dict[str, Any], name: str) -> int:
    # Light and REM read the store unrepaired: a hand-edited counter ("3", null, NaN) counts as 0, never crashes.
    return _count(entry.get(name))


def _strs(entry: dict[str, Any], name: str) -> list[str]:
    value = entry.get(name)
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _items(entry: dict[str, Any], name: str) -> int:
    return len(_strs(entry, name))


def _signals(entry: dict[str, Any]) -> int:
    return sum(_n(entry, n) for n in ("recallCount", "dailyCount", "groundedCount"))


def _avg(entry: dict[str, Any]) -> float:
    total = entry.get("totalScore")
    value = float(total) if isinstance(total, (int, float)) and math.isfinite(total) else 0.0
    return min(1.0, max(0.0, value / max(1, _signals(entry))))


def _read(ws: Workspace, config: DreamingConfig, now: datetime) -> dict[str, dict[str, Any]]:
    # The entries as every OpenClaw reader sees them (normalized, capped): the keys phase signals may be counted for.
    stored = read_store(ws, now=now).entries
    return normalize_recall_store(stored, now=now, openclaw_compat=config.recall.openclaw_compat).entries


def _recent(ws: Workspace, entries: dict[str, Any], today: date, lookback: int) -> dict[str, dict[str, Any]]:
    oldest = (today - timedelta(days=lookback)).isoformat()
    out: dict[str, dict[str, Any]] = {}
    for key, entry in entries.items():
        if not isinstance(entry, dict) or is_unpromotable_snippet(str(entry.get("snippet", ""))):
            continue
        days = _strs(entry, "recallDays")
        note = readable_note(ws, str(entry.get("path", "")))
        if not any(d >= oldest for d in days) or note is None or not note.is_file():
            continue
        out[key] = entry
    return out


def _evidence(entry: dict[str, Any]) -> str:
    return f"{entry.get('path')}:{entry.get('startLine')}-{entry.get('endLine')}"


def light_sleep_recall(
    ws: Workspace, config: DreamingConfig, *, now: datetime, report: InputReport | None = None
) -> RecallPhaseSummary:
    """Ingest daily notes, stage the freshest recalls, write the light report and record light signals.

    Notes skipped by ingestion (a link out of the workspace) go to ``report``, and so do daily notes holding bytes
    that are not UTF-8.
    """
    day = day_bucket_for(now, config.timezone)
    rules = RecordRules(compat=config.recall.openclaw_compat)
    ingest = ingest_daily_notes(
        ws, now=now, timezone=config.timezone, limit=config.deep.limit, report=report, rules=rules
    )
    entries = _recent(ws, _read(ws, config, now), date.fromisoformat(day), LIGHT_LOOKBACK_DAYS)

    def order(item: tuple[str, dict[str, Any]]) -> tuple[float, int]:
        moment = parse_iso(item[1].get("lastRecalledAt"))
        return (-(moment.timestamp() if moment else -math.inf), -_n(item[1], "recallCount"))

    staged: list[tuple[str, dict[str, Any]]] = []
    for key, entry in sorted(entries.items(), key=order):
        snippet = str(entry.get("snippet", ""))
        if any(
            e.get("path") == entry.get("path")
            and text_similarity(str(e.get("snippet", "")), snippet) >= LIGHT_DEDUPE_SIMILARITY
            for _, e in staged
        ):
            continue
        staged.append((key, entry))
        if len(staged) >= STAGE_LIMIT:
            break
    lines: list[str] = []
    for _, entry in staged:
        lines += [
            f"- Candidate: {entry.get('snippet')}",
            f"  - confidence: {_avg(entry):.2f}",
            f"  - evidence: {_evidence(entry)}",
            f"  - recalls: {_n(entry, 'recallCount')}",
            f"  - ingestion signals: {_n(entry, 'dailyCount')}",
            "  - status: staged",
        ]
    keys = tuple(k for k, _ in staged)
    path = phase_report_path(ws, "light", day)
    atomic_write_text(path, _report("Light Sleep", day, lines or ["- No notable updates."]))
    record_phase_signals(ws, phase="light", keys=keys, now=now)
    return RecallPhaseSummary(phase="light", day=day, report_path=path, keys=keys, ingest=ingest, lines=tuple(lines))


def _report(title: str, day: str, lines: list[str]) -> str:
    return f"# {title} ({day})\n\n## {title}\n" + "\n".join(lines) + "\n"


def _truth_confidence(entry: dict[str, Any]) -> float:
    recalls = _n(entry, "recallCount")
    days = _items(entry, "recallDays")
    tags = _items(entry, "conceptTags")
    return (
        0.45 * _avg(entry)
        + 0.25 * min(1.0, math.log1p(recalls) / math.log(7))
        + 0.20 * min(1.0, days / 3)
        + 0.10 * min(1.0, tags / 6)
    )


def rem_sleep_recall(ws: Workspace, config: DreamingConfig, *, now: datetime) -> RecallPhaseSummary:
    """Reflect on the week's recalls: themes and possible lasting truths; write the REM report and REM signals."""
    day = day_bucket_for(now, config.timezone)
    recent = _recent(ws, _read(ws, config, now), date.fromisoformat(day), REM_LOOKBACK_DAYS)
    staged = read_light_staged_keys(ws) & set(recent)
    pool = {k: recent[k] for k in sorted(staged)} if staged else recent
    limit = max(1, config.deep.limit)
    tag_counts = Counter(t.lower() for e in pool.values() for t in dict.fromkeys(_strs(e, "conceptTags")))
    themes = [
        (tag, min(1.0, count / len(pool) * 2))
        for tag, count in tag_counts.most_common()
        if pool and min(1.0, count / len(pool) * 2) >= REM_MIN_PATTERN_STRENGTH
    ][:limit]
    lines = ["### Reflections"]
    for tag, strength in themes:
        holders = [e for e in pool.values() if tag in (t.lower() for t in _strs(e, "conceptTags"))]
        lines += [
            f"- Theme: `{tag}` kept surfacing across {len(holders)} memories.",
            f"  - confidence: {strength:.2f}",
            f"  - evidence: {', '.join(_evidence(e) for e in holders[:3])}",
            "  - note: reflection",
        ]
    if not themes:
        lines.append("- No recurring themes.")
    truths: list[tuple[float, str, dict[str, Any]]] = []
    for key, entry in sorted(pool.items(), key=lambda kv: -_truth_confidence(kv[1])):
        if entry.get("promotedAt"):
            continue
        confidence = _truth_confidence(entry)
        snippet = str(entry.get("snippet", ""))
        if confidence < REM_MIN_TRUTH_CONFIDENCE or any(
            text_similarity(str(t[2].get("snippet", "")), snippet) >= REM_TRUTH_SIMILARITY for t in truths
        ):
            continue
        truths.append((confidence, key, entry))
    truths = truths[: max(1, min(3, config.deep.limit))]
    lines.append("")
    lines.append("### Possible Lasting Truths")
    lines += [f"- {e.get('snippet')} [confidence={c:.2f} evidence={_evidence(e)}]" for c, _, e in truths]
    if not truths:
        lines.append("- None yet.")
    keys = tuple(k for _, k, _ in truths)
    path = phase_report_path(ws, "rem", day)
    atomic_write_text(path, _report("REM Sleep", day, lines))
    record_phase_signals(ws, phase="rem", keys=keys, now=now)
    record_rem_considered(ws, keys=staged, now=now)
    return RecallPhaseSummary(
        phase="rem", day=day, report_path=path, keys=keys, themes=tuple(t for t, _ in themes), lines=tuple(lines)
    )
