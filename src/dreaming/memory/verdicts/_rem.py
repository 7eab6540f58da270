"""REM sleep of the verdict path: classify each sample, aggregate buckets, score them (``candidates.json``)."""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from dreaming.config import VerdictsConfig
from dreaming.memory._io import InputReport, atomic_write_json
from dreaming.memory._workspace import Workspace
from dreaming.memory.verdicts._candidates import VerdictCandidate, candidate_slug, passes_gate
from dreaming.memory.verdicts._handoff import SignalLines, drop_future, take_over
from dreaming.memory.verdicts._prices import REGIMES
from dreaming.memory.verdicts._records import VERDICTS, WINDOWS, check_verdict_line
from dreaming.memory.verdicts._stream import bulk_objects, is_number, read_objects

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


class _Plan:
    """What one (group, verdict, regime) does to the buckets: every line with it counts and classifies the same.

    Counts are added once per plan at the end (``count`` lines); only the float sums are added line by line, because
    their order of addition decides the last bits of ``avg_change_pct``.
    """

    __slots__ = ("adds", "classes", "count", "seen", "unclassifiable")

    def __init__(self, seen: str) -> None:
        self.count = 0
        self.seen = seen
        self.unclassifiable = 0
        self.adds: list[tuple[_Bucket, float]] = []
        self.classes: list[tuple[_Bucket, str]] = []


def _plan(
    group: tuple[date, str, float | None, tuple[float | None, ...]],
    verdict: str,
    regime: str,
    buckets: dict[tuple[str, str, str, str], _Bucket],
) -> _Plan:
    day, asset, atr, changes = group
    plan = _Plan(day.isoformat())
    for (window, root), change in zip(_SQRT.items(), changes, strict=True):
        if change is None:
            continue
        if verdict == "HOLD":
            if atr is None:
                plan.unclassifiable += 1
                continue
            flat = min(K_FLAT * atr * root, FLAT_CAP_PCT)
            label_ = HIT if abs(change) < flat else (MISSED_UP if change >= flat else AVOIDED_DOWN)
        else:
            label_ = HIT if (change > 0 if _UP_IS_HIT[verdict] else change < 0) else WRONG_WAY
        key = (asset, verdict, regime, window)
        bucket = buckets.get(key)
        if bucket is None:
            bucket = buckets[key] = _Bucket()
        plan.adds.append((bucket, change))
        plan.classes.append((bucket, label_))
    return plan


def rem_sleep_verdicts(ws: Workspace, config: VerdictsConfig, *, now: datetime, report: InputReport) -> RemSummary:
    """Aggregate ``verdict-signals.jsonl`` into scored buckets and write ``candidates.json`` atomically.

    The signals are taken from the in-memory hand-off when light sleep has just written them (see ``_handoff``),
    else parsed from the file.
    """
    with bulk_objects():
        return _rem_sleep_verdicts(ws, config, now=now, report=report)


def _rem_sleep_verdicts(ws: Workspace, config: VerdictsConfig, *, now: datetime, report: InputReport) -> RemSummary:
    label = ws.relative(ws.verdict_signals)
    today = now.date()
    first_count = report.count
    held = take_over(ws.verdict_signals, SignalLines)
    if held is None:
        lines = read_signal_lines(ws.verdict_signals, report, label, today)
    else:
        lines = drop_future(held, today, report, label)
    buckets: dict[tuple[str, str, str, str], _Bucket] = {}
    plans: dict[int, _Plan] = {}
    exempted = unknown = 0
    unknown_code = REGIMES.index("unknown")
    n_verdicts, n_regimes = len(VERDICTS), len(REGIMES)
    groups = lines.groups
    for g, v, s, r in zip(lines.group, lines.verdict, lines.shock, lines.regime, strict=True):
        if s:
            exempted += 1
            continue
        if r == unknown_code:
            unknown += 1
            continue
        key = (g * n_verdicts + v) * n_regimes + r  # an int key: cheaper to hash than a tuple
        plan = plans.get(key)
        if plan is None:
            plan = plans[key] = _plan(groups[g], VERDICTS[v], REGIMES[r], buckets)
        plan.count += 1
        for bucket, change in plan.adds:
            bucket.total += change
    unclassifiable = 0
    for plan in plans.values():
        count = plan.count
        unclassifiable += plan.unclassifiable * count
        for bucket, label_ in plan.classes:
            bucket.n += count
            if label_ is HIT:
                bucket.hits += count
            elif label_ is MISSED_UP:
                bucket.missed += count
            elif label_ is AVOIDED_DOWN:
                bucket.avoided += count
            else:
                bucket.wrong += count
            if plan.seen > bucket.last_seen:
                bucket.last_seen = plan.seen
    samples = len(lines.group)
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


def read_signal_lines(path: Path, report: InputReport, label: str, today: date) -> SignalLines:
    """Parse ``verdict-signals.jsonl`` (written by light sleep in another process, or supplied); report bad lines."""
    lines = SignalLines(
        groups=[], group=array("I"), verdict=bytearray(), shock=bytearray(), regime=bytearray(), numbers=array("I")
    )
    # Grouped by value: 0.0 and -0.0 (or 1 and 1.0) may share a group, since every use below treats them alike.
    index: dict[tuple[date, str, float | None, tuple[float | None, ...]], int] = {}
    for number, obj in read_objects(path, report, label):
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
        changes: list[float | None] = []
        for window in _SQRT:
            outcome = outcomes.get(window)
            change = outcome.get("change_pct") if type(outcome) is dict else None
            changes.append(change if is_number(change) else None)
        key = (day, asset, atr, tuple(changes))
        g = index.get(key)
        if g is None:
            g = index[key] = len(lines.groups)
            lines.groups.append(key)
        lines.group.append(g)
        lines.verdict.append(VERDICTS.index(verdict))
        lines.shock.append(shock)
        lines.regime.append(REGIMES.index(regime))
        lines.numbers.append(number)
    return lines
