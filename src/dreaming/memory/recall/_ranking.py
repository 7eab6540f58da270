"""Rank short-term recalls for promotion: six weighted signals plus the phase boost, behind OpenClaw's gates.

Gates, in order (the first that fails is reported): ``path`` (not short-term memory or not a ``memory`` source),
``unpromotable`` (dreaming output or markdown skeleton), ``promoted``, ``no_signals``, ``min_recall_count``,
``min_unique_queries``, ``max_age_days``, ``min_score``; passing entries beyond ``limit`` are skipped as ``limit``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dreaming.config import DeepConfig
from dreaming.memory.recall._contamination import is_unpromotable_snippet
from dreaming.memory.recall._paths import is_short_term_path
from dreaming.memory.recall._phase_signals import read_phase_signals
from dreaming.memory.recall._store import clamp_unit, parse_iso, read_store
from dreaming.memory.workspace import Workspace

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
_LN11 = math.log(11)
_LN2 = math.log(2)


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
        spacing = clamp_unit(0.55 * clamp_unit(math.log(n) / math.log(5)) + 0.45 * clamp_unit(span / 7))
    return max(spacing, clamp_unit(grounded / 3))


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
        strength = clamp_unit(math.log1p(hits) / math.log(7))
        total += cap * strength * _decay((now - at).total_seconds() / _DAY_S, PHASE_HALF_LIFE_DAYS)
    return clamp_unit(total)


def _count(value: object) -> int:
    # A counter as OpenClaw reads it: a finite non-negative number, floored; anything else is 0.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return max(0, math.floor(value))


def _int(entry: dict[str, Any], name: str) -> int:
    value = entry.get(name)
    return max(0, value) if value.__class__ is int else _count(value)


def _list(entry: dict[str, Any], name: str) -> list[Any]:
    value = entry.get(name)
    return value if isinstance(value, list) else []


@functools.lru_cache(maxsize=4096)
def _timestamp(value: str) -> float | None:
    moment = parse_iso(value)
    return moment.timestamp() if moment else None


@functools.lru_cache(maxsize=4096)
def _consolidation(days: tuple[Any, ...], grounded: int) -> float:
    return consolidation_score(list(days), grounded)


@functools.lru_cache(maxsize=4096)
def _short_term(path: str) -> bool:
    return is_short_term_path(path)


def _candidate(key: str, entry: dict[str, Any], parts: Components, raw: float, age: float) -> Candidate:
    max_score = entry.get("maxScore")
    promoted = entry.get("promotedAt")
    recalls, daily, grounded = _int(entry, "recallCount"), _int(entry, "dailyCount"), _int(entry, "groundedCount")
    return Candidate(
        key=str(entry.get("key") or key),
        path=str(entry.get("path") or ""),
        start_line=_int(entry, "startLine"),
        end_line=_int(entry, "endLine"),
        snippet=str(entry.get("snippet") or ""),
        score=clamp_unit(raw),
        recall_count=recalls,
        daily_count=daily,
        grounded_count=grounded,
        unique_queries=len(_list(entry, "queryHashes")),
        recall_days=tuple(str(d) for d in _list(entry, "recallDays")),
        concept_tags=tuple(str(t) for t in _list(entry, "conceptTags")),
        avg_score=parts.relevance,
        max_score=float(max_score) if isinstance(max_score, (int, float)) else 0.0,
        age_days=age,
        promoted_at=promoted if isinstance(promoted, str) else None,
        components=parts,
    )


def _unit(value: float) -> float:
    # _clamp for a value known to be finite and not NaN (keeps -0.0 out, as max(0.0, -0.0) does).
    return value if 0.0 < value < 1.0 else (1.0 if value >= 1.0 else 0.0)


def rank_entries(
    entries: dict[str, dict[str, Any]],
    signals: dict[str, dict[str, Any]],
    config: DeepConfig,
    *,
    now: datetime,
    include_promoted: bool = False,
) -> RankingResult:
    """Rank store entries (pure: no file access); see the module docstring for the gates."""
    # One flat loop, no helper call per gate: a 20,000-entry store is mostly entries that stop at a cheap gate, so the
    # per-entry cost is the interpreter's. Candidates are built only for the entries that make the limit.
    passed: list[tuple[tuple[float, int, str], str, dict[str, Any], Components, float, float]] = []
    skipped: list[tuple[str, str]] = []
    now_ts = now.timestamp()
    min_recalls, min_queries, min_score = config.min_recall_count, config.min_unique_queries, config.min_score
    max_age = config.max_age_days
    half_life = config.recency_half_life_days
    w_rel, w_freq, w_div = WEIGHTS["relevance"], WEIGHTS["frequency"], WEIGHTS["diversity"]
    w_rec, w_cons, w_concept = WEIGHTS["recency"], WEIGHTS["consolidation"], WEIGHTS["conceptual"]
    for key, entry in entries.items():
        if not isinstance(entry, dict):
            skipped.append((key, "invalid"))
            continue
        get = entry.get
        path = get("path")
        if get("source", "memory") != "memory" or not isinstance(path, str) or not _short_term(path):
            skipped.append((key, "path"))
            continue
        snippet = get("snippet")
        if is_unpromotable_snippet(snippet if snippet.__class__ is str else str(snippet or "")):
            skipped.append((key, "unpromotable"))
            continue
        if not include_promoted and get("promotedAt"):
            skipped.append((key, "promoted"))
            continue
        recalls, daily, grounded = get("recallCount"), get("dailyCount"), get("groundedCount")
        recalls = max(0, recalls) if recalls.__class__ is int else _count(recalls)
        daily = max(0, daily) if daily.__class__ is int else _count(daily)
        grounded = max(0, grounded) if grounded.__class__ is int else _count(grounded)
        total_signals = recalls + daily + grounded
        if total_signals <= 0:
            skipped.append((key, "no_signals"))
            continue
        if total_signals < min_recalls:
            skipped.append((key, "min_recall_count"))
            continue
        hashes, days = get("queryHashes"), get("recallDays")
        if not isinstance(hashes, list):
            hashes = []
        if not isinstance(days, list):
            days = []
        distinct = max(len(hashes), len(days))
        if distinct < min_queries:
            skipped.append((key, "min_unique_queries"))
            continue
        last = get("lastRecalledAt")
        last_ts = _timestamp(last) if isinstance(last, str) else None
        age = max(0.0, (now_ts - last_ts) / _DAY_S) if last_ts is not None else math.inf
        if max_age >= 0 and age > max_age:
            skipped.append((key, "max_age_days"))
            continue
        total = get("totalScore")
        total_f = float(total) if isinstance(total, (int, float)) and math.isfinite(total) else 0.0
        signal = signals.get(key)
        boost = phase_boost(signal, now) if signal else 0.0
        tags = get("conceptTags")
        try:
            spacing = _consolidation(tuple(days), grounded)
        except TypeError:  # an unhashable day (never written by OpenClaw): skip the cache
            spacing = consolidation_score(days, grounded)
        rel = _unit(total_f / total_signals)
        freq = _unit(math.log1p(total_signals) / _LN11)
        div = _unit(distinct / 5)
        rec = math.exp(-(_LN2 / half_life) * age) if last_ts is not None else 0.0
        concept = _unit(len(tags) / 6) if isinstance(tags, list) else 0.0
        raw = w_rel * rel + w_freq * freq + w_div * div + w_rec * rec + w_cons * spacing + w_concept * concept + boost
        if raw < min_score:
            skipped.append((key, "min_score"))
            continue
        parts = Components(relevance=rel, frequency=freq, diversity=div, recency=rec, consolidation=spacing,
                           conceptual=concept, phase_boost=boost)  # fmt: skip
        passed.append(((-clamp_unit(raw), -recalls, path), key, entry, parts, raw, age))
    passed.sort(key=lambda p: p[0])
    limit = max(0, config.limit)
    skipped.extend((str(entry.get("key") or key), "limit") for _, key, entry, _, _, _ in passed[limit:])
    ranked = tuple(_candidate(key, entry, parts, raw, age) for _, key, entry, parts, raw, age in passed[:limit])
    return RankingResult(candidates=ranked, skipped=tuple(skipped))


def rank_short_term_candidates(
    ws: Workspace, config: DeepConfig, *, now: datetime, include_promoted: bool = False
) -> RankingResult:
    """Read the recall store and phase signals (no lock, no writes) and rank them."""
    store = read_store(ws, now=now)
    return rank_entries(store.entries, read_phase_signals(ws), config, now=now, include_promoted=include_promoted)
