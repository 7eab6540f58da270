"""One gap's research, end to end: gather, synthesize, clean, validate, (veto), decide. Returns JSON-able results.

Without a model: the fixed plan and extractive synthesis. With one: the model's tool-calling loop, claims citing
evidence ids, and an optional veto; when the budget refuses the very first call the gap is ``skipped_budget``
(nothing was researched), when it refuses later the gap goes on with the evidence it has, extractively.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Any

from dreaming.config import AutoresearchConfig
from dreaming.graph._research_deps import ResearchDeps
from dreaming.graph._research_model import ChatUsage, research_with_model, synthesize_with_model, veto
from dreaming.graph._research_sources import GapSources
from dreaming.memory.research import (
    Claim,
    Evidence,
    FindingOutcome,
    ResearchFinding,
    decide,
    finding_from_validation,
    synthesize_extractive,
    validate_claims,
)

__all__ = ["finding_from_json", "finding_to_json", "research_one_gap", "skipped_finding"]

logger = logging.getLogger(__name__)

MODEL_CALLS_RESERVED = 2
"""Model calls of a gap kept back from the tool loop: one for the claims, one for the veto."""


def finding_to_json(finding: ResearchFinding) -> dict[str, Any]:
    """Return a finding as plain JSON (for the checkpointed graph state)."""
    return {
        "gap": finding.gap,
        "decision": finding.decision,
        "reason": finding.reason,
        "why": finding.why,
        "claim": finding.claim.to_dict() if finding.claim else None,
        "evidence": [item.to_dict() for item in finding.evidence],
        "confidence": finding.confidence,
        "method": finding.method,
        "independent_sources": finding.independent_sources,
        "tokens": finding.tokens,
        "cost_usd": finding.cost_usd,
        "duration_s": finding.duration_s,
    }


def finding_from_json(data: Mapping[str, Any]) -> ResearchFinding:
    """Rebuild a finding from :func:`finding_to_json` output."""
    claim = data.get("claim")
    return ResearchFinding(
        gap=str(data["gap"]),
        decision=data["decision"],
        reason=str(data["reason"]),
        why=str(data.get("why") or ""),
        claim=Claim.from_dict(claim) if claim else None,
        evidence=tuple(Evidence.from_dict(e) for e in data.get("evidence", ())),
        confidence=float(data.get("confidence", 0.0)),
        method=data.get("method"),
        independent_sources=int(data.get("independent_sources", 0)),
        tokens=int(data.get("tokens", 0)),
        cost_usd=float(data.get("cost_usd", 0.0)),
        duration_s=float(data.get("duration_s", 0.0)),
    )


def skipped_finding(gap: str, decision: FindingOutcome, reason: str, **extra: Any) -> ResearchFinding:
    """Return the finding of a gap that was not researched (skipped, or failed before any evidence)."""
    return ResearchFinding(gap=gap, decision=decision, reason=reason, **extra)


def _result(key: str, index: int, finding: ResearchFinding, sources: GapSources | None) -> dict[str, Any]:
    return {
        "key": key,
        "index": index,
        "finding": finding_to_json(finding),
        "failed_sources": dict(sources.failed) if sources else {},
        "tool_calls": sources.tool_calls if sources else 0,
    }


async def _gather_and_decide(
    key: str, question: str, deps: ResearchDeps, cfg: AutoresearchConfig, sources: GapSources,
    usage: ChatUsage, time_left: Callable[[], bool],
) -> ResearchFinding | None:  # fmt: skip
    chat = deps.chat
    if chat is not None:
        loop_calls = max(1, cfg.max_llm_calls_per_gap - MODEL_CALLS_RESERVED)
        await research_with_model(question, key, sources, chat, usage, max_calls=loop_calls, time_left=time_left)
        if usage.calls == 0 and usage.stopped_by is not None:
            return None  # the budget refused the first call: nothing was researched
        if usage.tool_rounds == 0 and not usage.stopped_by:
            # A model that calls no tool may not answer from its own knowledge: the fixed plan is the floor.
            await sources.run_fixed_plan(question)
    else:
        await sources.run_fixed_plan(question)
    if sources.all_failed:
        failures = "; ".join(f"{name}: {message}" for name, message in sorted(sources.failed.items()))
        return skipped_finding(question, "failed", f"every source failed ({failures})")
    # The model's claims and the extractive ones are validated side by side: the best surviving claim wins, so a
    # model's well-formed but unsupported claims can never push out what the evidence itself says.
    claims: list[Claim] = []
    if chat is not None and len(sources.pool) and usage.stopped_by is None:
        claims.extend(await synthesize_with_model(question, key, sources, chat, usage) or ())
    claims.extend(synthesize_extractive(question, sources.pool))
    validation = validate_claims(question, claims, sources.pool, read_line=deps.read_line)
    objection: str | None = None
    best = validation.best
    if (
        chat is not None
        and best is not None
        and best.confidence >= cfg.confidence_threshold
        and usage.stopped_by is None
    ):
        objection = await veto(question, key, best.claim, sources, chat, usage)
    decision = decide(validation, cfg.confidence_threshold, veto=objection)
    return finding_from_validation(question, validation, decision, evidence=sources.pool.items)


async def research_one_gap(
    *, key: str, question: str, index: int, deadline: float, deps: ResearchDeps, cfg: AutoresearchConfig,
    clock: Callable[[], float],
) -> dict[str, Any]:  # fmt: skip
    """Research one gap before ``deadline`` (by ``clock``) and return its JSON-able result for the graph state.

    The result holds ``key``, ``index`` (selection order), ``finding`` (:func:`finding_to_json`), ``failed_sources``
    and ``tool_calls``.
    """
    started = clock()
    if started >= deadline:
        return _result(
            key, index, skipped_finding(question, "skipped_time", "the research time limit was reached"), None
        )
    sources = GapSources(deps, cfg.sources, max_tool_calls=cfg.max_tool_calls_per_gap)
    if not sources.enabled:
        return _result(key, index, skipped_finding(question, "failed", "no research source is enabled"), sources)
    usage = ChatUsage()
    try:
        async with asyncio.timeout(deadline - started):
            finding = await _gather_and_decide(key, question, deps, cfg, sources, usage, lambda: clock() < deadline)
    except TimeoutError:
        logger.warning("research of %r stopped by the time limit", key)
        finding = skipped_finding(question, "skipped_time", "the research time limit was reached during this gap")
    if finding is None:
        finding = skipped_finding(question, "skipped_budget", f"the budget refused the model call ({usage.stopped_by})")
    notes = list(usage.notes)
    if usage.stopped_by and finding.decision != "skipped_budget":
        notes.append(f"model work stopped early ({usage.stopped_by})")
    if sources.failed and finding.decision != "failed":
        notes.append("failed sources: " + "; ".join(f"{n}: {m}" for n, m in sorted(sources.failed.items())))
    finding = dataclasses.replace(
        finding,
        reason="; ".join([finding.reason, *notes]),
        tokens=usage.tokens,
        cost_usd=usage.cost_usd,
        duration_s=max(0.0, clock() - started),
    )
    return _result(key, index, finding, sources)
