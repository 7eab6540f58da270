"""Rank short-term recalls for promotion: six weighted signals plus the phase boost, behind OpenClaw's gates.

Gates, in order (the first that fails is reported): ``path`` (not short-term memory or not a ``memory`` source),
``unpromotable`` (dreaming output or markdown skeleton), ``promoted``, ``no_signals``, ``min_recall_count``,
``min_unique_queries``, ``max_age_days``, ``min_score``; passing entries beyond ``limit`` are skipped as ``limit``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dreaming.config import DeepConfig
from dreaming.memory._workspace import Workspace
from dreaming.memory.recall._contamination import is_unpromotable_snippet
from dreaming.memory.recall._paths import is_short_term_path
from dreaming.memory.recall._phase_signals import read_phase_signals
from dreaming.memory.recall._store import parse_iso, read_store

__all__ = [
    "LIGHT_BOOST_MAX",
    "PHASE_HALF_LIFE_DAYS",
    "REM_BOOST_MAX",
    "WEIGHTS",
    "Candidate",
    "Components",
    "RankingResult",
    "consolidation_score",
    "phase_boost",
    "rank_entries",
    "rank_short_term_candidates",
]

WEIGHTS = {
    "relevance": 0.30,
    "frequency": 0.24,
    "diversity": 0.15,
    "recency": 0.15,
    "consolidation": 0.10,
    "conceptual": 0.06,
}
LIGHT_BOOST_MAX = 0.06
REM_BOOST_MAX = 0.09
PHASE_HALF_LIFE_DAYS = 14.0
_DAY_S = 86_400.0


def _clamp(value: float) -> float:
    return 0.0 if not math.isfinite(value) else min(1.0, max(0.0, value))


@dataclass(frozen=True, kw_only=True, slots=True)
class Components:
    """The weighted signals of one candidate, each in [0, 1] (``phase_boost`` in [0, 0.15])."""

    relevance: float
    """Average score per signal."""
    frequency: float
    """``ln(1 + signals) / ln 11``."""
    diversity: float
    """Distinct queries or days, over 5."""
    recency: float
    """Exponential decay of the last recall's age."""
    consolidation: float
    """Spacing of recall days, or grounded evidence."""
    conceptual: float
    """Concept tags over 6."""
    phase_boost: float
    """Lift from light and REM revisits."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Candidate:
    """One ranked recall entry."""

    key: str
    """Store key."""
    path: str
    """Note path as stored."""
    start_line: int
    """First line."""
    end_line: int
    """Last line."""
    snippet: str
    """Stored snippet."""
    score: float
    """Weighted score plus phase boost, clamped to [0, 1]."""
    recall_count: int
    """Real recalls (organic searches)."""
    daily_count: int
    """Ingestion signals (daily notes, sessions): never counted as recalls in reports."""
    grounded_count: int
    """Grounded evidence signals."""
    unique_queries: int
    """Distinct query hashes."""
    recall_days: tuple[str, ...]
    """Days with a signal."""
    concept_tags: tuple[str, ...]
    """Concept tags."""
    avg_score: float
    """Relevance before weighting."""
    max_score: float
    """Best single score."""
    age_days: float
    """Days since the last signal."""
    promoted_at: str | None
    """When it was promoted, if it was."""
    components: Components
    """The signals."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RankingResult:
    """Candidates that passed every gate (best first, cut to the limit) and the gate that stopped each other entry."""

    candidates: tuple[Candidate, ...]
    """Ranked candidates."""
    skipped: tuple[tuple[str, str], ...]
    """``(key, gate)`` for every entry that is not a candidate."""


def consolidation_score(recall_days: list[str], grounded: float) -> float:
    """Return ``max(C(days), clamp(grounded / 3))`` with OpenClaw's spacing curve ``C``."""
    days = sorted({d for d in recall_days if isinstance(d, str)})
    spacing = 0.0
    if len(days) == 1:
        spacing = 0.2
    elif len(days) > 1:
        try:
            span = (datetime.fromisoformat(days[-1]) - datetime.fromisoformat(days[0])).days
        except ValueError:
            span = 0
        n = len(days)
        spacing = _clamp(0.55 * _clamp(math.log(n) / math.log(5)) + 0.45 * _clamp(span / 7))
    return max(spacing, _clamp(grounded / 3))


def _decay(age_days: float, half_life: float) -> float:
    return math.exp(-(math.log(2) / half_life) * max(0.0, age_days))


def phase_boost(signal: dict[str, Any] | None, now: datetime) -> float:
    """Return ``clamp(0.06 * s(light) * rec(light) + 0.09 * s(rem) * rec(rem))``, 14-day half-life."""
    if not signal:
        return 0.0
    total = 0.0
    for hits_key, at_key, cap in (
        ("lightHits", "lastLightAt", LIGHT_BOOST_MAX),
        ("remHits", "lastRemAt", REM_BOOST_MAX),
    ):
        hits = signal.get(hits_key)
        at = parse_iso(signal.get(at_key))
        if not isinstance(hits, (int, float)) or hits <= 0 or at is None:
            continue
        strength = _clamp(math.log1p(hits) / math.log(7))
        total += cap * strength * _decay((now - at).total_seconds() / _DAY_S, PHASE_HALF_LIFE_DAYS)
    return _clamp(total)


def _int(entry: dict[str, Any], name: str) -> int:
    value = entry.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return max(0, math.floor(value))


def _score(entry: dict[str, Any], config: DeepConfig, now: datetime, boost: float) -> tuple[Candidate, float]:
    recalls, daily, grounded = _int(entry, "recallCount"), _int(entry, "dailyCount"), _int(entry, "groundedCount")
    signals = recalls + daily + grounded
    total = entry.get("totalScore")
    total_f = float(total) if isinstance(total, (int, float)) and math.isfinite(total) else 0.0
    hashes = entry.get("queryHashes") if isinstance(entry.get("queryHashes"), list) else []
    days = entry.get("recallDays") if isinstance(entry.get("recallDays"), list) else []
    tags = entry.get("conceptTags") if isinstance(entry.get("conceptTags"), list) else []
    assert isinstance(hashes, list) and isinstance(days, list) and isinstance(tags, list)
    contexts = max(len(hashes), len(days))
    last = parse_iso(entry.get("lastRecalledAt"))
    age = max(0.0, (now - last).total_seconds() / _DAY_S) if last else math.inf
    parts = Components(
        relevance=_clamp(total_f / max(1, signals)),
        frequency=_clamp(math.log1p(signals) / math.log(11)),
        diversity=_clamp(contexts / 5),
        recency=_decay(age, config.recency_half_life_days) if last else 0.0,
        consolidation=consolidation_score(days, grounded),
        conceptual=_clamp(len(tags) / 6),
        phase_boost=boost,
    )
    raw = sum(WEIGHTS[name] * getattr(parts, name) for name in WEIGHTS) + boost
    max_score = entry.get("maxScore")
    candidate = Candidate(
        key=str(entry.get("key") or ""),
        path=str(entry.get("path") or ""),
        start_line=_int(entry, "startLine"),
        end_line=_int(entry, "endLine"),
        snippet=str(entry.get("snippet") or ""),
        score=_clamp(raw),
        recall_count=recalls,
        daily_count=daily,
        grounded_count=grounded,
        unique_queries=len(hashes),
        recall_days=tuple(str(d) for d in days),
        concept_tags=tuple(str(t) for t in tags),
        avg_score=parts.relevance,
        max_score=float(max_score) if isinstance(max_score, (int, float)) else 0.0,
        age_days=age,
        promoted_at=entry.get("promotedAt") if isinstance(entry.get("promotedAt"), str) else None,
        components=parts,
    )
    return candidate, raw


def _gate(entry: dict[str, Any], candidate: Candidate, raw: float, config: DeepConfig, include_promoted: bool) -> str:
    signals = candidate.recall_count + candidate.daily_count + candidate.grounded_count
    contexts = max(candidate.unique_queries, len(candidate.recall_days))
    checks = (
        ("path", entry.get("source", "memory") == "memory" and is_short_term_path(candidate.path)),
        ("unpromotable", not is_unpromotable_snippet(candidate.snippet)),
        ("promoted", include_promoted or not entry.get("promotedAt")),
        ("no_signals", signals > 0),
        ("min_recall_count", signals >= config.min_recall_count),
        ("min_unique_queries", contexts >= config.min_unique_queries),
        ("max_age_days", config.max_age_days < 0 or candidate.age_days <= config.max_age_days),
        ("min_score", raw >= config.min_score),
    )
    return next((name for name, ok in checks if not ok), "")


def rank_entries(
    entries: dict[str, dict[str, Any]],
    signals: dict[str, dict[str, Any]],
    config: DeepConfig,
    *,
    now: datetime,
    include_promoted: bool = False,
) -> RankingResult:
    """Rank store entries (pure: no file access); see the module docstring for the gates."""
    passed: list[Candidate] = []
    skipped: list[tuple[str, str]] = []
    for key, entry in entries.items():
        if not isinstance(entry, dict):
            skipped.append((key, "invalid"))
            continue
        candidate, raw = _score(
            {**entry, "key": entry.get("key") or key}, config, now, phase_boost(signals.get(key), now)
        )
        gate = _gate(entry, candidate, raw, config, include_promoted)
        if gate:
            skipped.append((key, gate))
        else:
            passed.append(candidate)
    passed.sort(key=lambda c: (-c.score, -c.recall_count, c.path))
    limit = max(0, config.limit)
    skipped.extend((c.key, "limit") for c in passed[limit:])
    return RankingResult(candidates=tuple(passed[:limit]), skipped=tuple(skipped))


def rank_short_term_candidates(
    ws: Workspace, config: DeepConfig, *, now: datetime, include_promoted: bool = False
) -> RankingResult:
    """Read the recall store and phase signals (no lock, no writes) and rank them."""
    store = read_store(ws, now=now)
    return rank_entries(store.entries, read_phase_signals(ws), config, now=now, include_promoted=include_promoted)
