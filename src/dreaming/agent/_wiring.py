"""Build a night's run-scoped dependencies (the budgeted model, tools, progress) from the environment.

This is the only place where the entry points turn configuration and environment into live objects; the graph
receives them through its runtime context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from dreaming.agent._checks import filter_candidates
from dreaming.agent._research_wiring import build_research_deps
from dreaming.agent.gateway import BudgetedModels, LLMGateway, build_gateway
from dreaming.agent.narrative import write_narrative
from dreaming.agent.verify import VerifyCandidate, verify_insights
from dreaming.graph import DreamContext, ProgressFn

__all__ = ["night_context", "to_verify_candidate", "utc_now", "verify_text"]


def utc_now() -> datetime:
    """Return the real clock, in UTC (the budget's window runs on it)."""
    return datetime.now(UTC)


def to_verify_candidate(row: Mapping[str, Any]) -> VerifyCandidate:
    """Map a verdict candidate (its ``candidates.json`` form plus ``adverse_rate``) onto what the verifier sees."""
    return VerifyCandidate(
        id=str(row["id"]),
        asset=str(row["asset"]),
        verdict=str(row["verdict"]),
        regime=str(row["regime"]),
        window=str(row["window"]),
        kind=str(row["kind"]),
        n=int(row["n"]),
        hit_rate=float(row["hit_rate"]),
        adverse_rate=float(row.get("adverse_rate") or 0.0),
        avg_change=float(row["avg_change_pct"]),
        score=float(row["score"]),
    )


def verify_text(candidate: VerifyCandidate) -> str:
    """Return a verdict insight as a candidate's text for the duplicate check: its id."""
    return candidate.id


def night_context(
    *,
    env: Mapping[str, str],
    progress: ProgressFn | None = None,
    clock: Callable[[], datetime] = utc_now,
    gateway_factory: Callable[[DreamContext], LLMGateway] | None = None,
) -> Callable[[DreamContext], DreamContext]:
    """Return the function that completes a base context with what the environment configures.

    The budget's sliding window runs on the real ``clock``, never on the night's (possibly replayed) ``now``:
    money is spent in real time. Without ``progress`` the night reports nothing. The budget's candidate checks run
    before any model spend on a candidate: a knowledge gap (confidence ``1 - best_score``, recalls its count; see
    ``graph/_research_gap.py``) and a verdict insight to verify (confidence its gate score, recalls its sample
    size ``n``).
    """

    def complete(base: DreamContext) -> DreamContext:
        if gateway_factory is not None:
            gateway = gateway_factory(base)
        else:
            gateway = build_gateway(base.config, base.workspace, env=env, now=clock)

        # One set of candidate checks for the whole night: research and verify share its duplicate memory.
        guard = gateway.candidate_guard()

        async def verify(rows: Sequence[Mapping[str, Any]]) -> Mapping[str, str]:
            candidates = [to_verify_candidate(r) for r in rows]
            passed = filter_candidates(candidates, guard, text=verify_text, confidence=lambda c: c.score,
                                       recalls=lambda c: c.n)  # fmt: skip
            return await verify_insights(gateway, list(passed.passed), now=clock())

        async def narrate(facts: str) -> str | None:
            return await write_narrative(gateway, facts, now=clock())

        available = gateway.available
        return replace(
            base,
            progress=progress or base.progress,
            models=BudgetedModels(gateway),
            verify=verify if available else None,
            narrate=narrate if available else None,
            research=build_research_deps(base.workspace, base.config, env=env, gateway=gateway, guard=guard),
        )

    return complete
