"""Rank short-term recalls for promotion: six weighted signals plus the phase boost, behind OpenClaw's gates.

Exactly OpenClaw 2026.9.6's ``rankShortTermPromotionCandidates`` (``short-term-promotion-*.mjs``). The store is read
through :func:`~dreaming.memory.recall._normalize.normalize_recall_store`, so ranking sees at most 512 entries, and each
stored entry is accounted for: a candidate, or skipped at the first gate it fails. Entries the read leaves out are
skipped at a read gate: ``invalid``, ``no_path``, ``invalid_lines``, ``not_memory_source``, ``contaminated``,
``duplicate_key``, ``over_cap``. Then, in OpenClaw's order: ``path`` (not a daily note or session corpus), ``origin``
(provenance ``untrusted`` or ``system``), ``promoted`` (unless asked to include them), ``no_signals``,
``min_recall_count``, ``min_unique_queries``, ``max_age_days``, ``min_score`` (on the unclamped score); passing entries
beyond ``limit`` are skipped as ``limit``.

Unique queries are the distinct user queries (``userQueryHashes``, 0 when absent): ingestion and grounded signals never
add to them. Duplicate recall days (OpenClaw keeps them) count in the spacing's n while the span uses the first and
last day. Candidates are sorted by clamped score, then real recalls, then path (``localeCompare``); the sort is stable,
so what is still tied keeps store order. Invalid thresholds fall back as OpenClaw's do: a ``min_score`` outside [0, 1]
to 0.75, a negative count gate to 3, a negative ``max_age_days`` to none, a half-life that is not positive to 14.

With ``[recall] openclaw_compat = false`` two of this project's fixes apply. A duplicate recall day counts once:
OpenClaw's own repair de-duplicates ``recallDays`` (its test "normalized recall artifacts before dreaming") but its
reader does not, so until a repair runs, a day stored twice (a hand merge, an older writer) raises the spacing's n as
if it were another day of recall; no OpenClaw issue names it. And snippets that are only markdown skeleton (headings,
bullets, markers; a gate of older OpenClaw) are skipped as ``unpromotable``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dreaming.config import DeepConfig
from dreaming.memory.recall._contamination import is_unpromotable_snippet
from dreaming.memory.recall._js import js_date_parse_ms, js_number, locale_compare_key
from dreaming.memory.recall._normalize import (
    DROP_CONTAMINATED,
    DROP_DUPLICATE_KEY,
    DROP_NO_PATH,
    DROP_NOT_AN_INTEGER_LINE,
    DROP_NOT_AN_OBJECT,
    DROP_NOT_MEMORY,
    DROP_OVER_CAP,
    normalize_phase_signals,
    normalize_recall_store,
)
from dreaming.memory.recall._paths import is_short_term_path
from dreaming.memory.recall._phase_signals import read_phase_signals
from dreaming.memory.recall._store import read_store
from dreaming.memory.workspace import Workspace

__all__ = [
    "LIGHT_BOOST_MAX",
    "PHASE_HALF_LIFE_DAYS",
    "READ_GATES",
    "REM_BOOST_MAX",
    "WEIGHTS",
    "Candidate",
    "Components",
    "RankingResult",
    "consolidation_score",
    "gate_reason",
    "phase_boost",
    "rank_entries",
    "rank_short_term_candidates",
]

WEIGHTS = {
    "frequency": 0.24,
    "relevance": 0.30,
    "diversity": 0.15,
    "recency": 0.15,
    "consolidation": 0.10,
    "conceptual": 0.06,
}
LIGHT_BOOST_MAX = 0.06
REM_BOOST_MAX = 0.09
PHASE_HALF_LIFE_DAYS = 14.0
DEFAULT_MIN_SCORE = 0.75
DEFAULT_MIN_RECALL_COUNT = 3
DEFAULT_MIN_UNIQUE_QUERIES = 3
DEFAULT_HALF_LIFE_DAYS = 14.0
_DAY_MS = 86_400_000.0
_BLOCKED_ORIGINS = frozenset({"untrusted", "system"})

READ_GATES = {
    DROP_NOT_AN_OBJECT: "invalid",
    DROP_NO_PATH: "no_path",
    DROP_NOT_AN_INTEGER_LINE: "invalid_lines",
    DROP_NOT_MEMORY: "not_memory_source",
    DROP_CONTAMINATED: "contaminated",
    DROP_DUPLICATE_KEY: "duplicate_key",
    DROP_OVER_CAP: "over_cap",
}
"""The gate an entry left out on read is skipped at, by the read's reason."""
_GATE_TEXT = {reason_gate: reason for reason, reason_gate in READ_GATES.items()} | {
    "path": "not a daily note or session corpus",
    "origin": "untrusted or system origin",
    "unpromotable": "only markdown skeleton",
    "promoted": "already promoted",
    "no_signals": "no signals",
    "repaired_away": "dropped by the repair that runs before ranking",
}


def _weights() -> dict[str, float]:
    # OpenClaw's normalizeWeights over the defaults: each divided by their sum, summed in its order, bit for bit.
    total = 0.0
    for value in WEIGHTS.values():
        total += value
    return {name: value / total for name, value in WEIGHTS.items()}


_W = _weights()


@dataclass(frozen=True, kw_only=True, slots=True)
class Components:
    """The weighted signals of one candidate, each in [0, 1] (``phase_boost`` in [0, 0.15])."""

    relevance: float
    """Average score per signal."""
    frequency: float
    """``ln(1 + signals) / ln 11``."""
    diversity: float
    """Distinct user queries over 5."""
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
    """One ranked recall entry, as the store's normalized entry reads."""

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
    """Distinct user queries (``userQueryHashes``)."""
    recall_days: tuple[str, ...]
    """Days with a signal, as stored (duplicates kept)."""
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
    project_key: str | None = None
    """The project(s) it belongs to (``;``-separated), if recorded."""
    provenance: Mapping[str, Any] | None = None
    """Where it came from (``originClass``, ``sessionKind``, ``observedAt``), if recorded."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RankingResult:
    """Candidates that passed every gate (best first, cut to the limit) and the gate that stopped each other entry."""

    candidates: tuple[Candidate, ...]
    """Ranked candidates."""
    skipped: tuple[tuple[str, str], ...]
    """``(key, gate)`` for every stored entry that is not a candidate: read gates first, then in store order."""
    scored: tuple[Candidate, ...] = ()
    """Entries that got a score but are skipped (``min_score``, ``limit``), with their components."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _Options:
    min_score: float
    min_recall_count: int
    min_unique_queries: int
    max_age_days: int
    half_life_days: float
    limit: int | None


def _non_negative_int(value: object, fallback: int) -> int:
    number = js_number(value)
    if not math.isfinite(number) or math.floor(number) < 0:
        return fallback
    return math.floor(number)


def _options(config: DeepConfig) -> _Options:
    # OpenClaw's option coercions: a threshold it cannot use falls back to its default.
    score = js_number(config.min_score)
    half_life = js_number(config.recency_half_life_days)
    limit = js_number(config.limit)
    return _Options(
        min_score=score if math.isfinite(score) and 0 <= score <= 1 else DEFAULT_MIN_SCORE,
        min_recall_count=_non_negative_int(config.min_recall_count, DEFAULT_MIN_RECALL_COUNT),
        min_unique_queries=_non_negative_int(config.min_unique_queries, DEFAULT_MIN_UNIQUE_QUERIES),
        max_age_days=_non_negative_int(config.max_age_days, -1),
        half_life_days=half_life if math.isfinite(half_life) and half_life > 0 else DEFAULT_HALF_LIFE_DAYS,
        limit=max(0, math.floor(limit)) if math.isfinite(limit) else None,
    )


def gate_reason(gate: str, config: DeepConfig) -> str:
    """Return what a skip ``gate`` means for people, thresholds as ranking applied them."""
    options = _options(config)
    thresholds = {
        "min_recall_count": f"fewer than {options.min_recall_count} signals",
        "min_unique_queries": f"fewer than {options.min_unique_queries} distinct user queries",
        "max_age_days": f"last signal more than {options.max_age_days} days ago",
        "min_score": f"score below {options.min_score:g}",
        "limit": f"past the limit of {options.limit}",
    }
    return thresholds.get(gate) or _GATE_TEXT.get(gate, gate)


def _count(value: object) -> int:
    # A counter read from a raw entry (light and REM read the store without the normalizer): finite, floored, >= 0.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return max(0, math.floor(value))


def _clamp(value: float) -> float:
    return 0.0 if not math.isfinite(value) else max(0.0, min(1.0, value))


def _recency(age_days: float, half_life: float) -> float:
    if not math.isfinite(age_days) or age_days < 0:
        return 1.0
    return math.exp(-(math.log(2) / half_life) * age_days)


def consolidation_score(recall_days: list[str], grounded: float, *, distinct_days: bool = False) -> float:
    """Return ``max(C(days), clamp(grounded / 3))`` with OpenClaw's spacing curve ``C``.

    ``C`` is 0 without days and 0.2 for one; otherwise ``0.55 * clamp(ln n / ln 5) + 0.45 * clamp(span / 7)`` over
    the parsable days, where n counts duplicates unless ``distinct_days``.
    """
    days = list(dict.fromkeys(recall_days)) if distinct_days else recall_days
    spacing = 0.0
    if len(days) == 1:
        spacing = 0.2
    elif len(days) > 1:
        parsed = sorted(ms for d in days if (ms := js_date_parse_ms(f"{d}T00:00:00.000Z")) is not None)
        if len(parsed) <= 1:
            spacing = 0.2
        else:
            span_days = max(0.0, (parsed[-1] - parsed[0]) / _DAY_MS)
            repeat = _clamp(math.log1p(len(parsed) - 1) / math.log1p(4))
            spacing = _clamp(0.55 * repeat + 0.45 * _clamp(span_days / 7))
    return max(spacing, _clamp(grounded / 3))


def _phase_age_days(stamp: object, now_ms: float) -> float | None:
    if not stamp:
        return None
    parsed = js_date_parse_ms(stamp)
    return None if parsed is None else max(0.0, (now_ms - parsed) / _DAY_MS)


def phase_boost(signal: Mapping[str, Any] | None, now: datetime) -> float:
    """Return ``clamp(0.06 * s(light) * rec(light) + 0.09 * s(rem) * rec(rem))`` for a normalized phase signal.

    ``s(h) = clamp(ln(1 + h) / ln 7)``; ``rec`` decays with a 14-day half-life and is 0 without a timestamp.
    """
    if not signal:
        return 0.0
    now_ms = _now_ms(now)
    strengths, recencies = [], []
    for hits_key, at_key in (("lightHits", "lastLightAt"), ("remHits", "lastRemAt")):
        strengths.append(_clamp(math.log1p(max(0, signal.get(hits_key, 0))) / math.log1p(6)))
        age = _phase_age_days(signal.get(at_key), now_ms)
        recencies.append(0.0 if age is None else _clamp(_recency(age, PHASE_HALF_LIFE_DAYS)))
    return _clamp(LIGHT_BOOST_MAX * strengths[0] * recencies[0] + REM_BOOST_MAX * strengths[1] * recencies[1])


def _now_ms(now: datetime) -> float:
    # Whole milliseconds, as OpenClaw's clock gives them.
    return float((now - datetime(1970, 1, 1, tzinfo=UTC)) // _ONE_MS)


_ONE_MS = datetime(1970, 1, 1, 0, 0, 0, 1000, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)


def _candidate(entry: dict[str, Any], parts: Components, score: float, age: float) -> Candidate:
    return Candidate(
        key=entry["key"],
        path=entry["path"],
        start_line=entry["startLine"],
        end_line=entry["endLine"],
        snippet=entry["snippet"],
        score=_clamp(score),
        recall_count=entry["recallCount"],
        daily_count=entry["dailyCount"],
        grounded_count=entry["groundedCount"],
        unique_queries=len(entry.get("userQueryHashes", ())),
        recall_days=tuple(entry["recallDays"]),
        concept_tags=tuple(entry["conceptTags"]),
        avg_score=parts.relevance,
        max_score=float(entry["maxScore"]),
        age_days=age,
        promoted_at=entry.get("promotedAt"),
        components=parts,
        project_key=entry.get("projectKey"),
        provenance=entry.get("provenance"),
    )


def rank_entries(
    entries: Mapping[str, Any],
    signals: Mapping[str, Any],
    config: DeepConfig,
    *,
    now: datetime,
    include_promoted: bool = False,
    openclaw_compat: bool = True,
) -> RankingResult:
    """Rank stored entries (pure: no file access) through the read normalizer; see the module docstring.

    Args:
        entries: the recall store's entries as stored (key to entry, in store order).
        signals: the phase-signal entries as stored.
        config: the gates and the limit.
        now: the ranking time (ages, recency, missing timestamps).
        include_promoted: rank entries already promoted too.
        openclaw_compat: exactly as OpenClaw; false applies this project's fixes.
    """
    store = normalize_recall_store(entries, now=now, openclaw_compat=openclaw_compat)
    phase = normalize_phase_signals(signals)
    options = _options(config)
    now_ms = _now_ms(now)
    skipped: list[tuple[str, str]] = [(d.key, READ_GATES[d.reason]) for d in store.dropped]
    passed: list[tuple[dict[str, Any], Components, float, float]] = []
    below: list[Candidate] = []
    for key, entry in store.entries.items():
        if not is_short_term_path(entry["path"]):
            skipped.append((key, "path"))
            continue
        provenance = entry.get("provenance")
        if provenance is not None and provenance["originClass"] in _BLOCKED_ORIGINS:
            skipped.append((key, "origin"))
            continue
        # OpenClaw checks contamination here too; the read already dropped every contaminated entry.
        if not openclaw_compat and is_unpromotable_snippet(entry["snippet"]):
            skipped.append((key, "unpromotable"))
            continue
        if not include_promoted and entry.get("promotedAt"):
            skipped.append((key, "promoted"))
            continue
        signal_count = entry["recallCount"] + entry["dailyCount"] + entry["groundedCount"]
        if signal_count <= 0:
            skipped.append((key, "no_signals"))
            continue
        if signal_count < options.min_recall_count:
            skipped.append((key, "min_recall_count"))
            continue
        relevance = _clamp(entry["totalScore"] / max(1, signal_count))
        frequency = _clamp(math.log1p(signal_count) / math.log1p(10))
        unique_queries = len(entry.get("userQueryHashes", ()))
        if unique_queries < options.min_unique_queries:
            skipped.append((key, "min_unique_queries"))
            continue
        diversity = _clamp(unique_queries / 5)
        last_ms = js_date_parse_ms(entry["lastRecalledAt"])
        age = max(0.0, (now_ms - last_ms) / _DAY_MS) if last_ms is not None else 0.0
        if options.max_age_days >= 0 and age > options.max_age_days:
            skipped.append((key, "max_age_days"))
            continue
        recency = _clamp(_recency(age, options.half_life_days))
        consolidation = consolidation_score(
            entry["recallDays"], entry["groundedCount"], distinct_days=not openclaw_compat
        )
        conceptual = _clamp(len(entry["conceptTags"]) / 6)
        boost = phase_boost(phase.get(key), now)
        score = (
            _W["frequency"] * frequency
            + _W["relevance"] * relevance
            + _W["diversity"] * diversity
            + _W["recency"] * recency
            + _W["consolidation"] * consolidation
            + _W["conceptual"] * conceptual
            + boost
        )
        parts = Components(relevance=relevance, frequency=frequency, diversity=diversity, recency=recency,
                           consolidation=consolidation, conceptual=conceptual, phase_boost=boost)  # fmt: skip
        if score < options.min_score:
            skipped.append((key, "min_score"))
            below.append(_candidate(entry, parts, score, age))
            continue
        passed.append((entry, parts, score, age))
    # Stable: entries still tied after score, recalls and path keep store order, as OpenClaw's toSorted leaves them.
    passed.sort(key=lambda p: (-_clamp(p[2]), -p[0]["recallCount"], locale_compare_key(p[0]["path"])))
    limit = len(passed) if options.limit is None else options.limit
    ranked = tuple(_candidate(entry, parts, score, age) for entry, parts, score, age in passed[:limit])
    over = [_candidate(entry, parts, score, age) for entry, parts, score, age in passed[limit:]]
    skipped.extend((c.key, "limit") for c in over)
    return RankingResult(candidates=ranked, skipped=tuple(skipped), scored=tuple(below + over))


def rank_short_term_candidates(
    ws: Workspace,
    config: DeepConfig,
    *,
    now: datetime,
    include_promoted: bool = False,
    openclaw_compat: bool = True,
) -> RankingResult:
    """Read the recall store and phase signals (no lock, no writes) and rank them (see :func:`rank_entries`)."""
    store = read_store(ws, now=now)
    return rank_entries(
        store.entries,
        read_phase_signals(ws),
        config,
        now=now,
        include_promoted=include_promoted,
        openclaw_compat=openclaw_compat,
    )
