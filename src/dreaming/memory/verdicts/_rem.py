"""REM sleep of the verdict path: classify each sample, aggregate buckets, score them (``candidates.json``)."""

from __future__ import annotations

import functools
import math
import operator
from array import array
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime
from itertools import compress
from pathlib import Path

from dreaming.config import VerdictsConfig
from dreaming.memory.files import InputReport, atomic_write_json
from dreaming.memory.verdicts._candidates import VerdictCandidate, candidate_slug, passes_gate
from dreaming.memory.verdicts._handoff import SignalLines, drop_future, no_lines, take_over
from dreaming.memory.verdicts._prices import REGIMES, price_fingerprints
from dreaming.memory.verdicts._records import (
    FLAT_CAP_PCT,
    K_FLAT,
    SIZE_SATURATION,
    VERDICTS,
    WINDOWS,
    check_verdict_line,
)
from dreaming.memory.verdicts._stream import bulk_objects, is_number, read_objects
from dreaming.memory.verdicts._tallies import BucketTally, RemTally, save_tallies
from dreaming.memory.workspace import Workspace

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


_VR = len(VERDICTS) * len(REGIMES)
"""(verdict, regime) combinations per asset."""

# A sample-window's class as a small int, so that whole columns of them are counted in C (collections.Counter).
_NOT_MATURED, _UNCLASSIFIABLE, _HIT, _MISSED_UP, _AVOIDED_DOWN, _WRONG_WAY = -1, -2, 0, 1, 2, 3


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
    carry = lines.carry if lines is held else None  # lines dropped here would be missing from the tallies
    base = carry.base.rem if carry is not None and carry.base is not None else RemTally()
    tonight = _tally(lines, base.buckets)
    tally = RemTally(
        samples=base.samples + len(lines.group),
        exempted=base.exempted + tonight.exempted,
        unknown_regime=base.unknown_regime + tonight.unknown_regime,
        unclassifiable=base.unclassifiable + tonight.unclassifiable,
        buckets=tonight.buckets,
    )
    candidates = sorted((_candidate(b, config) for b in tally.buckets), key=lambda c: (-c.score, c.id))
    payload = {
        "version": 1,
        "generated_at": now.isoformat(),
        "samples": {
            "ingested": tally.samples,
            "exempted": tally.exempted,
            "unknown_regime": tally.unknown_regime,
            "unclassifiable": tally.unclassifiable,
        },
        "candidates": [c.to_json() for c in candidates],
    }
    skipped = report.count - first_count
    changed = atomic_write_json(ws.candidates, payload)
    if carry is not None:  # last: the tallies describe the outputs written before them
        save_tallies(ws, carry, tally, now=now, prices=price_fingerprints(ws.prices_dir))
    return RemSummary(
        candidates=tuple(candidates),
        samples=tally.samples,
        exempted=tally.exempted,
        unknown_regime=tally.unknown_regime,
        unclassifiable=tally.unclassifiable,
        skipped=skipped,
        changed=changed,
    )


def _tally(lines: SignalLines, base: tuple[BucketTally, ...] = ()) -> RemTally:
    """Aggregate the lines into buckets, continuing ``base``; return them and the counts of these lines left out.

    The buckets come in the order of their first sample: those of ``base`` (earlier lines), then the new ones. The
    counts returned are these lines': exempted (macro_shock), unknown regime, and HOLD sample-windows with no atr_pct.

    Lines are sorted into families (asset, verdict, regime) in one pass; each family's lines are then counted per
    window with C-level tools (``map``, ``Counter``, ``functools.reduce``) over per-group tables, because a Python
    step per line and window is what a million lines cannot afford. The sums are added in line order, continuing the
    stored sum, as a plain loop over every night's lines would: that order decides the last bits of avg_change_pct.
    """
    groups = lines.groups
    unknown_code, n_regimes, n_windows = REGIMES.index("unknown"), len(REGIMES), len(WINDOWS)
    exempted = unknown = 0
    assets: dict[str, int] = {}
    bases = array("I", (assets.setdefault(group[1], len(assets)) * _VR for group in groups))
    family_lines = [array("I") for _ in range(len(assets) * _VR)]  # family: asset index * _VR + verdict * 4 + regime
    for i, (g, v, s, r) in enumerate(zip(lines.group, lines.verdict, lines.shock, lines.regime, strict=True)):
        if s:
            exempted += 1
        elif r == unknown_code:
            unknown += 1
        else:
            family_lines[bases[g] + v * n_regimes + r].append(i)
    # Per group: the change in each window (None when not matured), the class of its sample in each window under
    # each verdict (made on first use), and the decision day's ordinal.
    changes = list(zip(*(group[3] for group in groups), strict=True)) or [() for _ in WINDOWS]
    atrs = [group[2] for group in groups]
    classes: dict[int, list[int]] = {}
    days = [group[0].toordinal() for group in groups]
    names = list(assets)
    stored = list(base)
    where = {(b.asset, b.verdict, b.regime, b.window): i for i, b in enumerate(base)}
    found: list[tuple[int, int, BucketTally]] = []
    unclassifiable = 0
    for family, indices in enumerate(family_lines):
        if not indices:
            continue
        asset, vr = divmod(family, _VR)
        v, r = divmod(vr, n_regimes)
        line_groups = array("I", map(lines.group.__getitem__, indices))
        for w, window in enumerate(_SQRT):
            by_group = classes.get(v * n_windows + w)
            if by_group is None:
                by_group = classes[v * n_windows + w] = _classes(VERDICTS[v], WINDOWS[w], changes[w], atrs)
            line_classes = list(map(by_group.__getitem__, line_groups))
            count = Counter(line_classes)
            unclassifiable += count[_UNCLASSIFIABLE]
            n = count[_HIT] + count[_MISSED_UP] + count[_AVOIDED_DOWN] + count[_WRONG_WAY]
            if not n:
                continue
            key = (names[asset], VERDICTS[v], REGIMES[r], window)
            at = where.get(key)
            before = _EMPTY if at is None else stored[at]
            classified = list(map((0).__le__, line_classes))
            total = functools.reduce(
                operator.add, compress(map(changes[w].__getitem__, line_groups), classified), before.total_change_pct
            )
            last = max(compress(map(days.__getitem__, line_groups), classified))
            bucket = BucketTally(
                asset=key[0],
                verdict=key[1],
                regime=key[2],
                window=window,
                n=before.n + n,
                hits=before.hits + count[_HIT],
                missed_up=before.missed_up + count[_MISSED_UP],
                avoided_down=before.avoided_down + count[_AVOIDED_DOWN],
                wrong_way=before.wrong_way + count[_WRONG_WAY],
                total_change_pct=total,
                last_seen=max(date.fromordinal(last).isoformat(), before.last_seen),
            )
            if at is None:
                first = next(at for at, c in enumerate(line_classes) if c >= 0)
                found.append((indices[first], w, bucket))
            else:
                stored[at] = bucket
    found.sort(key=lambda item: (item[0], item[1]))  # the order a plain loop over the lines would create them in
    return RemTally(
        exempted=exempted,
        unknown_regime=unknown,
        unclassifiable=unclassifiable,
        buckets=(*stored, *(bucket for _, _, bucket in found)),
    )


_EMPTY = BucketTally(
    asset="",
    verdict="",
    regime="",
    window="",
    n=0,
    hits=0,
    missed_up=0,
    avoided_down=0,
    wrong_way=0,
    total_change_pct=0.0,
    last_seen="",
)


def _classes(verdict: str, window: int, changes: tuple[float | None, ...], atrs: list[float | None]) -> list[int]:
    """Return the class of each group's sample in ``window`` under ``verdict`` (the rules of :func:`classify`)."""
    if verdict != "HOLD":
        if _UP_IS_HIT[verdict]:
            return [_NOT_MATURED if c is None else _HIT if c > 0 else _WRONG_WAY for c in changes]
        return [_NOT_MATURED if c is None else _HIT if c < 0 else _WRONG_WAY for c in changes]
    root = math.sqrt(window)
    out: list[int] = []
    for change, atr in zip(changes, atrs, strict=True):
        if change is None:
            out.append(_NOT_MATURED)
        elif atr is None:
            out.append(_UNCLASSIFIABLE)
        else:
            flat = min(K_FLAT * atr * root, FLAT_CAP_PCT)
            out.append(_HIT if abs(change) < flat else _MISSED_UP if change >= flat else _AVOIDED_DOWN)
    return out


def _candidate(b: BucketTally, config: VerdictsConfig) -> VerdictCandidate:
    hold = b.verdict == "HOLD"
    adverse = b.missed_up if hold else b.wrong_way
    kind = "caution" if adverse > b.hits else "reliable"
    score = score_bucket(kind=kind, hits=b.hits, adverse=adverse, n=b.n)
    return VerdictCandidate(
        id=candidate_slug(kind, b.verdict, b.asset, b.regime, b.window),
        asset=b.asset,
        verdict=b.verdict,
        regime=b.regime,
        window=b.window,
        kind=kind,
        n=b.n,
        hits=b.hits,
        hit_rate=round(b.hits / b.n, 4),
        avg_change_pct=round(b.total_change_pct / b.n, 4),
        score=score,
        passes_gate=passes_gate(score, b.n, config),
        last_seen=b.last_seen,
        missed_up_rate=round(b.missed_up / b.n, 4) if hold else None,
        avoided_down_rate=round(b.avoided_down / b.n, 4) if hold else None,
        wrong_way_rate=None if hold else round(b.wrong_way / b.n, 4),
    )


def read_signal_lines(path: Path, report: InputReport, label: str, today: date) -> SignalLines:
    """Parse ``verdict-signals.jsonl`` (written by light sleep in another process, or supplied); report bad lines."""
    lines = no_lines(SignalLines)
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
