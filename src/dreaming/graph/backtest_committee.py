"""The backtest's LLM committee (``dreaming backtest --policy llm``): a model decides with and without the insights.

For each decision of a period two calls go through the run's one gateway (node ``backtest``), each asking for one
verdict among :data:`~dreaming.memory.verdicts.VERDICTS`. The **baseline** committee sees the decision's inputs (the
asset, the date, the last :data:`RECENT_CLOSES` closes up to that date only, the regime on that date) and the
recorded (or scripted) verdict as the analyst's proposal. The **dreaming** committee sees the same plus the insights
active at the night before the decision (the replay's, never the user's workspace insights), for that asset.

When either call cannot give a verdict (the budget refuses it, the call fails, or the answer does not fit), both
committees take the proposal, so every decision stays paired, and :meth:`LLMCommittee.summary` counts why. Once the
budget refuses, no further call is tried. Given the replies the numbers are deterministic: the model picks verdicts,
the metric formulas are the backtest's.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from dreaming.backtest import ActiveInsight, Decision, History, Night
from dreaming.errors import BudgetError, ModelCallError
from dreaming.llm import LLMGateway
from dreaming.prompts import load_prompt

__all__ = ["NODE", "RECENT_CLOSES", "CommitteeAnswer", "LLMCommittee", "committee_messages"]

NODE = "backtest"
"""Node name in the ledger and reports."""
RECENT_CLOSES = 20
"""How many closes, up to the decision day, the committee sees."""
MAX_OUTPUT_TOKENS = 120
"""A verdict and one sentence."""


class CommitteeAnswer(BaseModel):
    """The committee's structured verdict for one decision."""

    verdict: Literal["BUY", "ACCUMULATE", "HOLD", "TRIM", "SELL"] = Field(description="The committee's verdict.")
    reason: str = Field(default="", description="One short sentence.")


def _closes(history: History, asset: str, day: date) -> list[list[Any]]:
    """Return the last closes of ``asset`` dated on or before ``day`` (never later) as ``[date, close]`` pairs."""
    series = history.series(asset)
    if series is None:
        return []
    end = series.index_on_or_before(day.toordinal()) + 1
    start = max(0, end - RECENT_CLOSES)
    return [[date.fromordinal(series.ordinals[i]).isoformat(), series.closes[i]] for i in range(start, end)]


def _insight_text(insight: ActiveInsight) -> str:
    return (f"- {insight.kind}: {insight.verdict} on {insight.asset} in a {insight.regime} regime "
            f"({insight.window} window): score {insight.score:.2f} over {insight.n} verdicts")  # fmt: skip


def committee_messages(
    decision: Decision, history: History, insights: Sequence[ActiveInsight] | None
) -> list[SystemMessage | HumanMessage]:
    """Return the request for one decision: without insights (``None``, the baseline) or with those given.

    No run id nor night date in the request: identical decisions give identical requests, which the cache serves.
    """
    inputs = {
        "asset": decision.asset,
        "date": decision.day.isoformat(),
        "regime": decision.regime,
        "recent_closes": _closes(history, decision.asset, decision.day),
        "proposal": decision.baseline,
    }
    text = f"Decision:\n{json.dumps(inputs, sort_keys=True)}"
    if insights is not None:
        lines = [_insight_text(i) for i in insights if i.asset.casefold() == decision.asset.casefold()]
        text += "\n\nPrior insights:\n" + ("\n".join(lines) if lines else "(none for this asset)")
    return [SystemMessage(load_prompt("backtest_committee")), HumanMessage(text)]


class LLMCommittee:
    """Both LLM committees of a backtest, over one gateway; see the module docstring."""

    def __init__(self, gateway: LLMGateway) -> None:
        """Decide through ``gateway`` (built as the night builds it, ``dreaming.llm.build_gateway``)."""
        self._gateway = gateway
        self._calls = 0
        self._decided = 0
        self._fallbacks: Counter[str] = Counter()
        self._stopped_by: str | None = None

    def decide(self, decisions: Sequence[Decision], night: Night, history: History) -> list[Decision]:
        """Return ``decisions`` as both LLM committees take them (their ``baseline`` verdicts are the proposals)."""
        return asyncio.run(self._decide_all(decisions, night, history))

    def summary(self) -> dict[str, Any]:
        """Return the model, the calls sent, the decisions the model took, and the fallbacks to the proposal."""
        return {
            "model": self._gateway.model_name,
            "calls": self._calls,
            "decided": self._decided,
            "fallbacks": sum(self._fallbacks.values()),
            "fallbacks_by_reason": dict(sorted(self._fallbacks.items())),
            "refusals": self._fallbacks["refused"],
            "stopped_by": self._stopped_by,
        }

    async def _decide_all(self, decisions: Sequence[Decision], night: Night, history: History) -> list[Decision]:
        return [await self._decide_one(d, night, history) for d in decisions]

    async def _decide_one(self, decision: Decision, night: Night, history: History) -> Decision:
        proposal = decision.baseline
        fallback = replace(decision, dreaming=proposal, insight=None)
        if self._stopped_by is not None:
            self._fallbacks["refused"] += 1
            return fallback
        verdicts: list[str] = []
        for insights in (None, night.insights):
            try:
                self._calls += 1
                reply = await self._gateway.ainvoke(
                    committee_messages(decision, history, insights),
                    node=NODE,
                    max_output_tokens=MAX_OUTPUT_TOKENS,
                    schema=CommitteeAnswer,
                )
            except BudgetError as exc:
                self._calls -= 1  # refused: nothing went out
                self._stopped_by = exc.reason
                self._fallbacks["refused"] += 1
                return fallback
            except ModelCallError as exc:
                self._gateway.log_event("llm.backtest_failed", day=decision.day.isoformat(), error=exc.reason)
                self._fallbacks["failed"] += 1
                return fallback
            if not isinstance(reply.parsed, CommitteeAnswer):
                self._fallbacks["malformed"] += 1
                return fallback
            verdicts.append(reply.parsed.verdict)
        self._decided += 1
        return replace(decision, baseline=verdicts[0], dreaming=verdicts[1], insight=None)
