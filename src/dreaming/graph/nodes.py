"""The nodes of the nightly graph: each a thin call into ``memory/`` or the model, its dependencies from the context.

The diary narrative (``[diary] narrative``) is one short model-written paragraph from the night's facts. Without a
model, or when the budget refuses or the call fails, there is no narrative and the diary keeps its plain factual
entry. The narrative is prose for people: it is never a promotion source.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from langgraph.types import Command

from dreaming.errors import BudgetError, ModelCallError, RecallStoreError
from dreaming.graph.context import DreamContext
from dreaming.graph.research import promote_research
from dreaming.graph.state import DreamState, jsonable
from dreaming.graph.verify import verify_insights
from dreaming.llm import LLMGateway, filter_candidates
from dreaming.memory import (
    InputReport,
    append_diary_entry,
    diary_sections,
    night_digest,
    night_entry,
    recall,
    record_event,
    verdicts,
)
from dreaming.memory.insights import write_memory_index
from dreaming.prompts import load_prompt

__all__ = [
    "budget_narrative",
    "budget_verify",
    "deep",
    "diary",
    "light",
    "narrative",
    "rem",
    "verify",
    "write_narrative",
]

logger = logging.getLogger(__name__)

NARRATIVE_NODE = "narrative"
"""The narrator's node name in the ledger and reports."""
NARRATIVE_MAX_OUTPUT_TOKENS = 200
"""About 80 words, with room to spare."""
NARRATIVE_MAX_CHARS = 1200
"""A runaway answer is cut here."""


def _bad(report: InputReport) -> dict[str, Any]:
    return {"bad_input": [b.describe() for b in report.bad], "bad_input_count": report.count}


def light(state: DreamState, runtime: Runtime[DreamContext]) -> dict[str, Any]:
    """Light sleep: review the verdicts against prices, then ingest the matured signals."""
    ctx = runtime.context
    report = InputReport()
    ctx.progress("light", "reviewing verdicts against prices")
    review = verdicts.review_verdicts(ctx.workspace, now=ctx.now, report=report)
    ctx.progress("light", "ingesting matured signals")
    light_summary = verdicts.light_sleep_verdicts(ctx.workspace, now=ctx.now, report=report)
    ctx.progress("light", "ingesting daily notes and staging recalls")
    try:
        staged = recall.light_sleep_recall(ctx.workspace, ctx.config, now=ctx.now, report=report)
    except RecallStoreError as exc:
        recall_light: dict[str, Any] = _store_problem(exc)
    else:
        ingest = staged.ingest
        recall_light = {
            "staged": len(staged.keys),
            "files_ingested": ingest.files_ingested if ingest else 0,
            "chunks_recorded": ingest.chunks_recorded if ingest else 0,
            "outside_workspace": list(ingest.outside_workspace) if ingest else [],
            "report": ctx.workspace.relative(staged.report_path),
        }
    return {
        "done": ["light"],
        "summaries": {
            "verdicts.review": jsonable(review),
            "verdicts.light": jsonable(light_summary),
            "recall.light": recall_light,
        },
        **_bad(report),
    }


def _store_problem(exc: RecallStoreError) -> dict[str, Any]:
    """Summarize a recall phase skipped because OpenClaw's recall store cannot be used (the night goes on)."""
    logger.warning("recall phase skipped: %s", exc)
    return {"problem": str(exc)}


def rem(state: DreamState, runtime: Runtime[DreamContext]) -> dict[str, Any]:
    """REM sleep: aggregate the signals into scored candidates."""
    ctx = runtime.context
    report = InputReport()
    ctx.progress("rem", "scoring verdict x regime buckets")
    summary = verdicts.rem_sleep_verdicts(ctx.workspace, ctx.config.verdicts, now=ctx.now, report=report)
    ctx.progress("rem", "reflecting on recalls")
    try:
        truths = recall.rem_sleep_recall(ctx.workspace, ctx.config, now=ctx.now)
    except RecallStoreError as exc:
        recall_rem = _store_problem(exc)
    else:
        recall_rem = {"truths": len(truths.keys), "themes": list(truths.themes)}
    return {
        "done": ["rem"],
        "summaries": {"verdicts.rem": jsonable(summary), "recall.rem": recall_rem},
        **_bad(report),
    }


def _gate(ctx: DreamContext, node: str, wanted: bool, target: str, skip_to: str) -> Command[str]:
    """Route to ``target`` when the model may be called for ``node``, else record why and go to ``skip_to``."""
    if not wanted:
        return Command(goto=skip_to)
    reason = ctx.model_refusal(node)
    if reason is None:
        return Command(goto=target)
    record_event(ctx.workspace.events, "llm.refused", ctx.now, node=node, reason=reason, run_id=ctx.run_id)
    return Command(goto=skip_to, update={"halts": [{"node": node, "reason": reason}]})


def budget_verify(state: DreamState, runtime: Runtime[DreamContext]) -> Command[str]:
    """Budget gate before the LLM verifier."""
    ctx = runtime.context
    wanted = ctx.config.verdicts.llm_verify and ctx.model is not None
    return _gate(ctx, "verify", wanted, "verify", "deep")


async def verify(state: DreamState, runtime: Runtime[DreamContext]) -> dict[str, Any]:
    """Let a model veto gate-passing verdict insights (it can never promote one or change a number).

    The budget's candidate checks run first: an insight's confidence is its gate score, its recalls its sample size.
    """
    ctx = runtime.context
    model = ctx.model
    assert model is not None  # routed here only when a model is available
    passing = verdicts.gate_passing(ctx.workspace, ctx.config.verdicts, now=ctx.now)
    ctx.progress("verify", f"asking the model about {len(passing)} insights")
    checked = filter_candidates(passing, model.candidates, text=lambda c: c.id, confidence=lambda c: c.score,
                                recalls=lambda c: c.n)  # fmt: skip
    vetoes = await verify_insights(model, checked.passed)
    return {"done": ["verify"], "vetoes": vetoes}


def deep(state: DreamState, runtime: Runtime[DreamContext]) -> dict[str, Any]:
    """Deep sleep: gate, write and retire insight files, then the MEMORY.md index."""
    ctx = runtime.context
    report = InputReport()
    ctx.progress("deep", "promoting and retiring insights")
    summary = verdicts.deep_sleep_verdicts(
        ctx.workspace,
        ctx.config.verdicts,
        now=ctx.now,
        vetoes=state.get("vetoes") or {},
        run_id=ctx.run_id,
        report=report,
    )
    ctx.progress("deep", "promoting recalls into MEMORY.md")
    try:
        recall_deep = _recall_deep(recall.deep_sleep_recall(ctx.workspace, ctx.config, now=ctx.now, report=report))
    except RecallStoreError as exc:
        recall_deep = _store_problem(exc)
    research = promote_research(state, ctx)
    write_memory_index(ctx.workspace, now=ctx.now, report=report)
    return {
        "done": ["deep"],
        "summaries": {
            "verdicts.deep": jsonable(summary),
            "recall.deep": recall_deep,
            **research.get("summaries", {}),
        },
        **_bad(report),
    }


def _recall_deep(summary: recall.PromotionSummary) -> dict[str, Any]:
    """Keep what the diary needs: the checkpointed state must stay small whatever the store's size."""
    gates: dict[str, int] = {}
    for _, gate in summary.ranking.skipped:
        gates[gate] = gates.get(gate, 0) + 1
    return {
        "disabled_reason": summary.disabled_reason,
        "applied": [
            {"key": a.key, "source": f"{a.path}:{a.start_line}-{a.end_line}", "score": a.score, "text": a.text[:120]}
            for a in summary.applied
        ],
        "refused": [list(r) for r in summary.refused],
        "skipped_by_gate": dict(sorted(gates.items())),
        "real_recalls": summary.real_recalls,
        "ingestion_signals": summary.ingestion_signals,
        "compacted_dates": list(summary.compacted_dates),
        "repaired": summary.removed_invalid_entries + summary.removed_overflow_entries,
    }


def budget_narrative(state: DreamState, runtime: Runtime[DreamContext]) -> Command[str]:
    """Budget gate before the diary narrator."""
    ctx = runtime.context
    wanted = ctx.config.diary.narrative and ctx.model is not None
    return _gate(ctx, "narrative", wanted, "narrative", "diary")


async def narrative(state: DreamState, runtime: Runtime[DreamContext]) -> dict[str, Any]:
    """Ask the model for one short paragraph about the night's facts."""
    ctx = runtime.context
    assert ctx.model is not None  # routed here only when a model is available
    facts = "\n".join(
        f"{s.title}: " + "; ".join(s.lines) for s in diary_sections(state, ctx.budget_report()) if s.lines
    )
    return {"done": ["narrative"], "narrative": await write_narrative(ctx.model, facts)}


async def write_narrative(gateway: LLMGateway, facts: str) -> str | None:
    """Return one paragraph written from ``facts``, or None (no model, refused, failed, or empty answer)."""
    if not gateway.available or not facts.strip():
        return None
    messages = [SystemMessage(load_prompt("narrative")), HumanMessage(f"Facts of tonight's run:\n{facts.strip()}")]
    try:
        reply = await gateway.ainvoke(messages, node=NARRATIVE_NODE, max_output_tokens=NARRATIVE_MAX_OUTPUT_TOKENS)
    except BudgetError as exc:
        logger.info("no diary narrative: the budget refused (%s)", exc.reason)
        return None
    except ModelCallError as exc:  # the factual entry is always written; a failed narrative only loses prose
        logger.warning("no diary narrative: the call failed (%s)", exc.reason)
        gateway.log_event("llm.narrative_failed", error=exc.reason)
        return None
    paragraph = " ".join(reply.text.split())
    if len(paragraph) > NARRATIVE_MAX_CHARS:
        paragraph = paragraph[:NARRATIVE_MAX_CHARS].rsplit(" ", 1)[0] + "…"
    return paragraph or None


def diary(state: DreamState, runtime: Runtime[DreamContext]) -> dict[str, Any]:
    """Write the night's DREAMS.md entry and the run-finished event."""
    ctx = runtime.context
    report = ctx.budget_report()
    night = {**state, "run_id": ctx.run_id, "now": ctx.now.isoformat()}  # a run started with no input has neither
    entry = night_entry(night, trigger=ctx.trigger, budget_report=report)
    append_diary_entry(ctx.workspace, entry)
    budget = jsonable(report)
    record_event(
        ctx.workspace.events,
        "run.finished",
        ctx.now,
        run_id=ctx.run_id,
        done=list(state.get("done", [])),
        halts=list(state.get("halts", [])),
        bad_input=state.get("bad_input_count", 0),
        digest=night_digest(night, budget),
    )
    return {"done": ["diary"], "summaries": {"budget": budget}}
