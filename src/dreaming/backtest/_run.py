"""The walk forward: nights, periods, both committees, scores, and the report (``memory/.dreams/backtest.json``)."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Protocol

from dreaming.backtest._history import History, load_history
from dreaming.backtest._policy import Decision, decide
from dreaming.backtest._replay import Night, NightHook, replay_nights
from dreaming.backtest._score import BOOTSTRAP_RESAMPLES, Scored, differences, metrics, score_decisions
from dreaming.config import DreamingConfig
from dreaming.memory import InputReport, Workspace, atomic_write_json

__all__ = [
    "DEFAULT_STEP_DAYS",
    "POLICIES",
    "REPORT_FILE",
    "REPORT_VERSION",
    "Backtest",
    "Committee",
    "night_dates",
    "run_backtest",
    "write_report",
]

REPORT_VERSION = 1
REPORT_FILE = "backtest.json"
"""In ``memory/.dreams``."""
DEFAULT_STEP_DAYS = 7
POLICIES = ("offline", "llm")
"""The committees' policies: the fixed table (``offline``), or a model deciding with and without the insights
(``llm``: a :class:`Committee` built above this package, ``dreaming.graph.backtest_committee``)."""
SERIES_WINDOW = "30d"
"""The window whose opportunity cost the report's series adds up."""


class Committee(Protocol):
    """A committee that decides a period again: both verdicts of each decision, from what was known at its date."""

    def decide(self, decisions: Sequence[Decision], night: Night, history: History) -> list[Decision]:
        """Return ``decisions`` (the offline ones, whose ``baseline`` is the proposal) as this committee takes them."""
        ...

    def summary(self) -> dict[str, Any]:
        """Return what the report says of the committee's calls (under ``"llm"``)."""
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class Backtest:
    """What a walk forward found: the report as written, and the nights and decisions behind it."""

    report: dict[str, Any]
    """The JSON report (see the package docstring)."""
    nights: tuple[Night, ...]
    decisions: tuple[Decision, ...]
    """Every decision of the periods, in date order."""
    scored: tuple[Scored, ...]


def night_dates(start: date, end: date, step_days: int) -> list[date]:
    """Return the nights from ``start`` to ``end`` (inclusive) every ``step_days``."""
    count = (end - start).days // step_days + 1 if end >= start else 0
    return [start + timedelta(days=i * step_days) for i in range(count)]


def run_backtest(
    ws: Workspace,
    config: DreamingConfig,
    *,
    start: date,
    end: date,
    step_days: int = DEFAULT_STEP_DAYS,
    policy: str = "offline",
    report: InputReport | None = None,
    scratch_dir: Path | None = None,
    on_night: NightHook | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    committee: Committee | None = None,
) -> Backtest:
    """Replay the workspace's history night by night from ``start`` to ``end``; score both committees.

    Reads the workspace and writes nothing to it (see :func:`write_report`). Bad verdict lines and price rows are
    skipped and reported in ``report`` and in the result. The decisions scored are those dated after ``start`` and
    on or before ``end``: each in the period after the last night before it. With ``policy="llm"`` the
    ``committee`` decides each period again (the offline verdicts are its proposals) and the report gains ``"llm"``,
    its :meth:`Committee.summary`.

    Raises:
        ValueError: ``start`` is after ``end``, ``step_days`` is below 1, ``policy`` is not one of :data:`POLICIES`,
            or ``policy`` is ``llm`` without a ``committee``.
    """
    if start > end:
        raise ValueError(f"the start {start.isoformat()} is after the end {end.isoformat()}")
    if step_days < 1:
        raise ValueError(f"the step must be at least one day, not {step_days}")
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (this version runs: {', '.join(POLICIES)})")
    if policy == "llm" and committee is None:
        raise ValueError("the llm policy needs a committee")
    bad = report if report is not None else InputReport()
    history = load_history(ws, bad, end=end)
    dates = night_dates(start, end, step_days)
    by_day = sorted(history.verdicts, key=lambda r: r.day)
    days = [r.day for r in by_day]
    nights: list[Night] = []
    decisions: list[Decision] = []
    per_night: list[int] = []
    for night in replay_nights(history, dates, config, scratch_dir=scratch_dir, on_night=on_night):
        period_end = min(night.date + timedelta(days=step_days), end)
        period = by_day[bisect_right(days, night.date) : bisect_right(days, period_end)]
        offline = decide(period, night.insights, history, night=night.date)
        decisions.extend(offline if committee is None or policy != "llm" else committee.decide(offline, night, history))
        nights.append(night)
        per_night.append(len(decisions))
    scored = score_decisions(decisions, history)
    payload = _report(
        start=start,
        end=end,
        step_days=step_days,
        policy=policy,
        history=history,
        nights=nights,
        decisions=decisions,
        per_night=per_night,
        scored=scored,
        bad=bad,
        resamples=resamples,
    )
    if policy == "llm" and committee is not None:
        payload["llm"] = committee.summary()
    return Backtest(report=payload, nights=tuple(nights), decisions=tuple(decisions), scored=tuple(scored))


def _report(
    *,
    start: date,
    end: date,
    step_days: int,
    policy: str,
    history: History,
    nights: Sequence[Night],
    decisions: Sequence[Decision],
    per_night: Sequence[int],
    scored: Sequence[Scored],
    bad: InputReport,
    resamples: int,
) -> dict[str, Any]:
    changed_by: dict[str, int] = {}
    for d in decisions:
        if d.insight is not None:
            changed_by[d.insight] = changed_by.get(d.insight, 0) + 1
    return {
        "version": REPORT_VERSION,
        "from": start.isoformat(),
        "to": end.isoformat(),
        "step_days": step_days,
        "policy": policy,
        "committee": history.committee,
        "nights": len(nights),
        "decisions": len(decisions),
        "changed": sum(1 for d in decisions if d.changed),
        "changed_by": dict(sorted(changed_by.items())),
        "metrics": metrics(scored),
        "differences": differences(scored, resamples=resamples),
        "series": _series(nights, decisions, per_night, scored),
        "bad_input": [b.describe() for b in bad.bad],
        "bad_input_count": bad.count,
    }


def _series(
    nights: Sequence[Night], decisions: Sequence[Decision], per_night: Sequence[int], scored: Sequence[Scored]
) -> list[dict[str, Any]]:
    """Return, after each night's period, the opportunity cost added up over the decisions so far (30d window)."""
    cost: dict[int, tuple[float, float]] = {
        id(s.decision): (s.baseline[3], s.dreaming[3]) for s in scored if s.window == SERIES_WINDOW
    }
    out = []
    base: list[float] = []
    dream: list[float] = []
    done = 0
    for night, upto in zip(nights, per_night, strict=True):
        for d in decisions[done:upto]:
            if (c := cost.get(id(d))) is not None:
                base.append(c[0])
                dream.append(c[1])
        done = upto
        out.append(
            {
                "date": night.date.isoformat(),
                "baseline_cum_opportunity_cost_pct": round(math.fsum(base), 4),
                "dreaming_cum_opportunity_cost_pct": round(math.fsum(dream), 4),
            }
        )
    return out


def write_report(ws: Workspace, payload: dict[str, Any]) -> Path:
    """Write the report to ``memory/.dreams/backtest.json`` atomically; return its path."""
    path = ws.state_dir / REPORT_FILE
    atomic_write_json(path, payload)
    return path
