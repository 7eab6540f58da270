"""The walk-forward backtest: does dreaming improve the decisions made with it? (issue 16).

Deterministic, offline, and it imports only ``memory`` and ``config``: no LangGraph, no model.

**Nights.** Nights ``t`` run from ``start`` to ``end`` every ``step_days`` (7 by default). At night ``t`` the view of
the workspace holds only the verdicts with ``decision_date <= t`` and the price rows dated ``<= t``; an outcome whose
target date is after ``t`` has therefore not matured. The verdict path's real steps (review, light, REM, deep sleep
with aging) run on that view in a scratch workspace under a temp folder, at ``now`` = ``t`` at the time of the
workspace's daily ``[schedule] cron`` (else 00:00 UTC). The insights active at ``t`` are the verdict insight files
left active by that night's deep sleep (``_history``, ``_replay``).

**Committees.** The decisions of the period ``(t, t + step]`` (clipped to ``end``) are taken twice. The baseline is the
recorded verdicts of that period; a workspace with no valid verdict but with prices gets a scripted committee
(``_committee_scripted``), decided from prices up to each decision date only, whose verdicts are also what the nights
learn from. The dreaming committee takes the same decisions and changes one only where an insight active at ``t``
speaks for its bucket (asset, verdict, regime on the decision day from prices up to that day), by the fixed table
:data:`POLICY_OFFLINE` (``_policy``). So the decisions of ``(t, t + step]`` depend on nothing dated after ``t + step``,
and the insights they read on nothing dated after ``t``. With ``policy="llm"`` a :class:`Committee` built above this
package (``dreaming.graph.backtest_committee``: a model through the one gateway and its budget) takes both
committees' verdicts instead, from the same inputs, the offline verdict as its proposal.

**Scores.** Each decision is scored with the full prices (the future, for scoring only) in the 7d and 30d windows as
the review computes the change, where the target has matured and the decision day has an ATR. Per committee, asset,
regime (``*`` for all) and window: ``n``; the hit rate (:func:`~dreaming.memory.verdicts.classify`); the missed-rally
rate (HOLD, TRIM or SELL before a rise of at least the flat band) and the avoided-drawdown rate (the same before a fall
of at least the flat band), both over all ``n`` decisions; the opportunity cost in percent, ``max(change, 0) -
exposure * change`` averaged, with the exposures of :data:`EXPOSURE`; and the decisions changed by an insight. Each
difference dreaming - baseline comes with a paired bootstrap 95% interval: 2000 resamples of the decision pairs, with
replacement, from a fixed seed, drawn in blocks of :data:`BLOCK_DAYS` (30) days because neighbouring decisions are
scored over overlapping windows (:func:`blocks_of`); ``significant`` when the interval excludes zero (``_score``).
The hit rate and the missed-rally and avoided-drawdown rates describe; they also move when a decision merely changes
kind (in a market with no pattern a HOLD stays in its flat band about two times in three, while a BUY rises one time
in two). The opportunity cost is the measure of value: with no pattern its expected difference is zero whatever the
committees decide.

**Report.** ``memory/.dreams/backtest.json``, written atomically (:func:`write_report`), the only file the backtest
writes to the workspace (with the plot of the series next to it)::

    {"version": 1, "from", "to", "step_days", "policy": "offline"|"llm", "committee", "nights", "decisions", "changed",
     "changed_by": {insight id: decisions it changed},
     "metrics": [{"policy", "asset", "regime", "window", "n", "hit_rate", "missed_rally_rate",
                  "avoided_drawdown_rate", "opportunity_cost_pct", "changed"}],
     "differences": [{"asset", "regime", "window", "metric", "baseline", "dreaming", "difference", "ci95": [lo, hi],
                      "significant"}],
     "series": [{"date", "baseline_cum_opportunity_cost_pct", "dreaming_cum_opportunity_cost_pct"}],
     "bad_input": ["path:line: reason", ...], "bad_input_count",
     "llm": {"model", "calls", "decided", "fallbacks", "fallbacks_by_reason", "refusals", "stopped_by"}}  (llm only)

Rates are fractions, the opportunity cost is in percent; the series adds up the 30d opportunity cost of the decisions
scored so far, after each night's period.
"""

from __future__ import annotations

from dreaming.backtest._history import History, VerdictRecord, load_history
from dreaming.backtest._policy import POLICY_OFFLINE, Decision, decide
from dreaming.backtest._replay import ActiveInsight, Night, night_time, replay_nights
from dreaming.backtest._run import (
    DEFAULT_STEP_DAYS,
    POLICIES,
    REPORT_FILE,
    REPORT_VERSION,
    Backtest,
    Committee,
    night_dates,
    run_backtest,
    write_report,
)
from dreaming.backtest._score import (
    BLOCK_DAYS,
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    EXPOSURE,
    METRICS,
    Scored,
    blocks_of,
    paired_bootstrap,
    score_decisions,
)
from dreaming.backtest._table import render_table

__all__ = [
    "BLOCK_DAYS",
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "DEFAULT_STEP_DAYS",
    "EXPOSURE",
    "METRICS",
    "POLICIES",
    "POLICY_OFFLINE",
    "REPORT_FILE",
    "REPORT_VERSION",
    "ActiveInsight",
    "Backtest",
    "Committee",
    "Decision",
    "History",
    "Night",
    "Scored",
    "VerdictRecord",
    "blocks_of",
    "decide",
    "load_history",
    "night_dates",
    "night_time",
    "paired_bootstrap",
    "render_table",
    "replay_nights",
    "run_backtest",
    "score_decisions",
    "write_report",
]
