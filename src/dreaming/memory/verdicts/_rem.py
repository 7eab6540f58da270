"""REM sleep of the verdict path: classify each sample, aggregate buckets, score them (``candidates.json``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from dreaming.config import VerdictsConfig
from dreaming.memory._io import InputReport, atomic_write_json
from dreaming.memory._workspace import Workspace
from dreaming.memory.verdicts._candidates import VerdictCandidate, candidate_slug, passes_gate
from dreaming.memory.verdicts._prices import REGIMES
from dreaming.memory.verdicts._records import WINDOWS, check_verdict_line
from dreaming.memory.verdicts._stream import is_number, read_objects

__all__ = [
    "FLAT_CAP_PCT",
    "K_FLAT",
    "SIZE_SATURATION",
    "RemSummary",
    "classify",
    "flat_threshold",
    "rem_sleep_verdicts",
    "score_bucket",
]

K_FLAT = 1.0
"""A HOLD is a hit when the move stays under ``K_FLAT * atr_pct * sqrt(window)``: fixed, never learned (Goodhart)."""
FLAT_CAP_PCT = 8.0
"""The flat band never exceeds this many percent."""
SIZE_SATURATION = 10
"""The size term of the score reaches 1 at this many samples."""

# Outcome classes.
HIT, MISSED_UP, AVOIDED_DOWN, WRONG_WAY = "hit", "missed_up", "avoided_down", "wrong_way"
_UP_IS_HIT = {"BUY": True, "ACCUMULATE": True, "TRIM": False, "SELL": False}
_SQRT = {f"{w}d": math.sqrt(w) for w in WINDOWS}


def flat_threshold(atr_pct: float, window_days: int) -> float:
    """Return the HOLD flat band ``min(K_FLAT * atr_pct * sqrt(window_days), FLAT_CAP_PCT)`` in percent."""
    return min(K_FLAT * atr_pct * math.sqrt(window_days), FLAT_CAP_PCT)


def classify(verdict: str, change_pct: float, *, atr_pct: float | None, window_days: int) -> str | None:
    """Classify one sample in one window: ``hit``, ``missed_up``, ``avoided_down``, ``wrong_way``, or None.

    None means a HOLD with no ``atr_pct``: it cannot be classified for that window.
    """
    if verdict == "HOLD":
        if atr_pct is None:
            return None
        flat = flat_threshold(atr_pct, window_days)
        if abs(change_pct) < flat:
            return HIT
        return MISSED_UP if change_pct >= flat else AVOIDED_DOWN
    up_is_hit = _UP_IS_HIT[verdict]
    return HIT if (change_pct > 0 if up_is_hit else change_pct < 0) else WRONG_WAY


def score_bucket(*, kind: str, hits: int, adverse: int, n: int) -> float:
    """Return the score (4 decimals): ``0.7 * rate + 0.3 * min(n / SIZE_SATURATION, 1)``.

    The rate is the hit rate for a ``reliable`` bucket and the adverse rate for a ``caution`` one.
    """
    rate = (adverse if kind == "caution" else hits) / n
    return round(0.7 * rate + 0.3 * min(n / SIZE_SATURATION, 1.0), 4)


@dataclass(frozen=True, kw_only=True, slots=True)
class RemSummary:
    """What REM sleep did."""

    candidates: tuple[VerdictCandidate, ...] = ()
    """Every scored bucket, sorted by score descending, then id."""
    samples: int = 0
    """Valid signal lines read."""
    exempted: int = 0
    """Samples flagged ``macro_shock``: excluded from every statistic."""
    unknown_regime: int = 0
    """Samples with regime ``unknown``: excluded from patterns."""
    unclassifiable: int = 0
    """HOLD sample-windows left out for lack of ``atr_pct``."""
    skipped: int = 0
    """Bad lines skipped and reported."""
    changed: bool = False
    """Whether candidates.json was rewritten."""


class _Bucket:
    __slots__ = ("avoided", "hits", "last_seen", "missed", "n", "total", "wrong")

    def __init__(self) -> None:
        self.n = self.hits = self.missed = self.avoided = self.wrong = 0
        self.total = 0.0
        self.last_seen = ""


def rem_sleep_verdicts(ws: Workspace, config: VerdictsConfig, *, now: datetime, report: InputReport) -> RemSummary:
    """Aggregate ``verdict-signals.jsonl`` into scored buckets and write ``candidates.json`` atomically."""
    label = ws.relative(ws.verdict_signals)
    today = now.date()
    first_count = report.count
    buckets: dict[tuple[str, str, str, str], _Bucket] = {}
    samples = exempted = unknown = unclassifiable = skipped = 0
    for number, obj in read_objects(ws.verdict_signals, report, label):
        checked = check_verdict_line(obj, today)
        regime = obj.get("regime")
        outcomes = obj.get("outcomes")
        atr = obj.get("atr_pct")
        if isinstance(checked, str):
            problem = checked
        elif regime not in REGIMES:
            problem = f"unknown regime {regime!r}"
        elif type(outcomes) is not dict:
            problem = "missing field 'outcomes'"
        elif atr is not None and not is_number(atr):
            problem = "'atr_pct' is not a number"
        else:
            problem = ""
        if problem or isinstance(checked, str) or type(outcomes) is not dict:
            report.skip(label, number, problem)
            continue
        day, asset, verdict, shock = checked
        samples += 1
        if shock:
            exempted += 1
            continue
        if regime == "unknown":
            unknown += 1
            continue
        seen = day.isoformat()
        for window, root in _SQRT.items():
            outcome = outcomes.get(window)
            if type(outcome) is not dict:
                continue
            change = outcome.get("change_pct")
            if not is_number(change):
                continue
            if verdict == "HOLD":
                if atr is None:
                    unclassifiable += 1
                    continue
                flat = min(K_FLAT * atr * root, FLAT_CAP_PCT)
                label_ = HIT if abs(change) < flat else (MISSED_UP if change >= flat else AVOIDED_DOWN)
            else:
                label_ = HIT if (change > 0 if _UP_IS_HIT[verdict] else change < 0) else WRONG_WAY
            key = (asset, verdict, str(regime), window)
            bucket = buckets.get(key)
            if bucket is None:
                bucket = buckets[key] = _Bucket()
            bucket.n += 1
            bucket.total += change
            if label_ is HIT:
                bucket.hits += 1
            elif label_ is MISSED_UP:
                bucket.missed += 1
            elif label_ is AVOIDED_DOWN:
                bucket.avoided += 1
            else:
                bucket.wrong += 1
            if seen > bucket.last_seen:
                bucket.last_seen = seen
    candidates = sorted(
        (_candidate(key, bucket, config) for key, bucket in buckets.items()), key=lambda c: (-c.score, c.id)
    )
    payload = {
        "version": 1,
        "generated_at": now.isoformat(),
        "samples": {
            "ingested": samples,
            "exempted": exempted,
            "unknown_regime": unknown,
            "unclassifiable": unclassifiable,
        },
        "candidates": [c.to_json() for c in candidates],
    }
    skipped = report.count - first_count
    changed = atomic_write_json(ws.candidates, payload)
    return RemSummary(
        candidates=tuple(candidates),
        samples=samples,
        exempted=exempted,
        unknown_regime=unknown,
        unclassifiable=unclassifiable,
        skipped=skipped,
        changed=changed,
    )


def _candidate(key: tuple[str, str, str, str], b: _Bucket, config: VerdictsConfig) -> VerdictCandidate:
    asset, verdict, regime, window = key
    hold = verdict == "HOLD"
    adverse = b.missed if hold else b.wrong
    kind = "caution" if adverse > b.hits else "reliable"
    score = score_bucket(kind=kind, hits=b.hits, adverse=adverse, n=b.n)
    return VerdictCandidate(
        id=candidate_slug(kind, verdict, asset, regime, window),
        asset=asset,
        verdict=verdict,
        regime=regime,
        window=window,
        kind=kind,
        n=b.n,
        hits=b.hits,
        hit_rate=round(b.hits / b.n, 4),
        avg_change_pct=round(b.total / b.n, 4),
        score=score,
        passes_gate=passes_gate(score, b.n, config),
        last_seen=b.last_seen,
        missed_up_rate=round(b.missed / b.n, 4) if hold else None,
        avoided_down_rate=round(b.avoided / b.n, 4) if hold else None,
        wrong_way_rate=None if hold else round(b.wrong / b.n, 4),
    )
