"""Build a night's run-scoped dependencies (the budgeted model, tools, progress) from the environment.

This is the only place where the entry points turn configuration and environment into live objects; the graph
receives them through its runtime context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from dreaming.agent._research_wiring import build_research_deps
from dreaming.agent.gateway import BudgetedModels, LLMGateway, build_gateway
from dreaming.agent.narrative import write_narrative
from dreaming.agent.verify import VerifyCandidate, verify_insights
from dreaming.graph import DreamContext, ProgressFn

__all__ = ["night_context", "to_verify_candidate", "utc_now"]


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


def night_context(
    *,
    env: Mapping[str, str],
    progress: ProgressFn | None = None,
    clock: Callable[[], datetime] = utc_now,
    gateway_factory: Callable[[DreamContext], LLMGateway] | None = None,
) -> Callable[[DreamContext], DreamContext]:
    """Return the function that completes a base context with what the environment configures.

    The budget's sliding window runs on the real ``clock``, never on the night's (possibly replayed) ``now``:
    money is spent in real time. Without ``progress`` the night reports nothing.
    """

    def complete(base: DreamContext) -> DreamContext:
        if gateway_factory is not None:
            gateway = gateway_factory(base)
        else:
            gateway = build_gateway(base.config, base.workspace, env=env, now=clock)

        async def verify(rows: Sequence[Mapping[str, Any]]) -> Mapping[str, str]:
            return await verify_insights(gateway, [to_verify_candidate(r) for r in rows], now=clock())

        async def narrate(facts: str) -> str | None:
            return await write_narrative(gateway, facts, now=clock())

        available = gateway.available
        return replace(
            base,
            progress=progress or base.progress,
            models=BudgetedModels(gateway),
            verify=verify if available else None,
            narrate=narrate if available else None,
            research=build_research_deps(base.workspace, base.config, env=env, gateway=gateway),
        )

    return complete
