"""The two committees: the baseline (the verdicts as decided) and the dreaming one (the same, reading the insights).

The dreaming committee takes each baseline decision and changes it only where an insight active at the night before
speaks for the decision's bucket (asset, verdict, regime on the decision day), by one fixed table,
:data:`POLICY_OFFLINE`. Nothing in it is fitted to the outcomes it is scored on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date

from dreaming.backtest._history import History, VerdictRecord
from dreaming.backtest._replay import ActiveInsight

__all__ = ["POLICY_OFFLINE", "Decision", "decide"]

POLICY_OFFLINE: Mapping[str, str] = {
    "BUY": "HOLD",
    "ACCUMULATE": "HOLD",
    "HOLD": "BUY",
    "TRIM": "HOLD",
    "SELL": "HOLD",
}
"""The verdict the dreaming committee takes instead of one that an active caution insight warns about.

- a caution on HOLD (it missed rallies: the market rose past the flat band more often than it stayed in it) -> BUY;
- a caution on BUY or ACCUMULATE (the market fell more often than it rose) -> HOLD;
- a caution on TRIM or SELL (the market rose more often than it fell) -> HOLD.

A reliable insight confirms the verdict: with one active for the bucket (in either window), the verdict stands even
when a caution is active for the other window. With no insight, the verdict stands.
"""


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """One decision of a period, as each committee takes it."""

    day: date
    """The decision date."""
    asset: str
    regime: str
    """The regime on the decision day, from prices up to that day only."""
    night: date
    """The night whose insights the dreaming committee read (the last night before the decision)."""
    baseline: str
    """The verdict as decided."""
    dreaming: str
    """The verdict the dreaming committee takes."""
    insight: str | None = None
    """The caution insight that changed it (the first by id), or None when unchanged."""

    @property
    def changed(self) -> bool:
        """Return whether the dreaming committee decided otherwise."""
        return self.dreaming != self.baseline


def decide(
    records: Iterable[VerdictRecord], insights: Iterable[ActiveInsight], history: History, *, night: date
) -> list[Decision]:
    """Return the decisions of ``records`` (one period's verdicts) as both committees take them after ``night``."""
    cautions: dict[tuple[str, str, str], list[str]] = {}
    confirmed: set[tuple[str, str, str]] = set()
    for insight in insights:
        bucket = (insight.asset, insight.verdict, insight.regime)
        if insight.kind == "reliable":
            confirmed.add(bucket)
        elif insight.kind == "caution":
            cautions.setdefault(bucket, []).append(insight.id)
    out = []
    for record in records:
        regime = history.regime_on(record)
        bucket = (record.asset, record.verdict, regime)
        warning = None if bucket in confirmed else min(cautions.get(bucket, ()), default=None)
        out.append(
            Decision(
                day=record.day,
                asset=record.asset,
                regime=regime,
                night=night,
                baseline=record.verdict,
                dreaming=record.verdict if warning is None else POLICY_OFFLINE[record.verdict],
                insight=warning,
            )
        )
    return out
