r"""The nodes of the research subgraph: one gap, from the budget's say to keep, discard or abstain (spec/research.md).

The subgraph itself is built in ``build.py`` (``build_research_graph``); the model's part (the tool-calling loop,
claims as structured output, the veto) is at the end of this module, its prompts in ``prompts/research*.md``.

::

    START -> budget_research -> research -> validate -> keep | discard | abstain -> END
                        \              \-> discard   (every source failed, the time ran out, the budget said no)
                         \-> discard     (the time ran out before it began, no source enabled)

- ``budget_research`` is the budget node before the gap's model calls: the candidate checks (budget, quality,
  duplicate; ``[budget] min_confidence`` and ``min_recalls``) and the gateway's own refusal decide whether a model
  may work on this gap. A gap refused for its quality or as a duplicate is still researched, without a model; a
  refused budget skips it (``skipped_budget``). The gateway checks every call again.
- ``research`` gathers evidence: the model's tool-calling loop (with the fixed plan as its floor) or the fixed plan.
- ``validate`` validates the model's claims and the extractive candidates side by side, lets the model veto the
  best (it can only lower), and decides.
- ``keep``, ``discard`` and ``abstain`` close the finding (tokens, cost, time, notes) and hand it to the night.

A model call that fails (timeout, connection, HTTP status, a malformed or oversized reply) fails its gap, ``failed``
with the call's reason, in ``research`` or ``validate``: nothing the failed model work touched is kept, and the other
gaps and the night go on.

A gap's **confidence**, for the candidate checks, is ``1 - best_score``: how sure the failed searches are that the
memory lacks the answer (a search that nearly answered is a weak gap); its **recalls** are its count, how many
searches failed on it. Each branch's writes are checkpointed by node, so a resumed night does not redo a finished gap.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from dreaming.errors import BudgetError, ModelCallError, ToolError
from dreaming.graph.context import DreamContext
from dreaming.llm import LLMGateway, LLMReply, Skipped
from dreaming.memory import record_event
from dreaming.memory.research import (
    Claim,
    Evidence,
    EvidencePool,
    FindingOutcome,
    ResearchFinding,
    decide,
    fence_evidence,
    finding_from_validation,
    redact_secrets,
    synthesize_extractive,
    validate_claims,
)
from dreaming.prompts import load_prompt
from dreaming.tools.sources import TOOL_SOURCES, GapSources

__all__ = [
    "GapResearchOutput",
    "GapResearchState",
    "GapTask",
    "abstain",
    "budget_research",
    "discard",
    "finding_from_json",
    "finding_to_json",
    "gap_candidate",
    "keep",
    "research",
    "skipped_finding",
    "validate",
]

logger = logging.getLogger(__name__)

NODE = "research"
"""Node name in the budget's ledger and reports."""
MAX_OUTPUT_TOKENS = 400
"""A tool call or a few claims."""
_Answer = TypeVar("_Answer", bound=BaseModel)
"""A structured answer asked of the model."""

MODEL_CALLS_RESERVED = 2
"""Model calls of a gap kept back from the tool loop: one for the claims, one for the veto."""


class GapTask(TypedDict):
    """What one research branch receives through ``Send``."""

    key: str
    query: str
    index: int
    deadline: float
    count: int
    best_score: float


class GapResearchState(TypedDict, total=False):
    """The state of one gap's research (JSON-able, checkpointed after each node)."""

    task: GapTask
    """The gap."""
    work_s: float
    """Seconds the gap's own steps took (research and validation), not its waits for a slot or the event loop."""
    use_model: bool
    """Whether a model may work on it (the budget node's decision)."""
    evidence: list[dict[str, Any]]
    """Its evidence pool, in order."""
    failed_sources: dict[str, str]
    """Sources that failed, with their error."""
    tool_calls: int
    """Tool calls made."""
    usage: dict[str, Any]
    """Model work: calls, tokens, cost, why it stopped, notes."""
    finding: dict[str, Any]
    """The finding so far (``finding_to_json``)."""
    research_results: Annotated[list[dict[str, Any]], operator.add]
    """The branch's one result, handed to the night's state (the same key there)."""


class GapResearchOutput(TypedDict):
    """What the subgraph gives back to the night."""

    research_results: Annotated[list[dict[str, Any]], operator.add]


def finding_to_json(finding: ResearchFinding) -> dict[str, Any]:
    """Return a finding as plain JSON (for the checkpointed graph state), its fields in their declared order."""
    data = dataclasses.asdict(finding)
    data.update(
        claim=finding.claim.to_dict() if finding.claim else None, evidence=[e.to_dict() for e in finding.evidence]
    )
    return data


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
        user_stated=bool(data.get("user_stated", False)),
        tokens=int(data.get("tokens", 0)),
        cost_usd=float(data.get("cost_usd", 0.0)),
        duration_s=float(data.get("duration_s", 0.0)),
    )


def skipped_finding(gap: str, decision: FindingOutcome, reason: str, **extra: Any) -> ResearchFinding:
    """Return the finding of a gap that was not researched (skipped, or failed before any evidence)."""
    return ResearchFinding(gap=gap, decision=decision, reason=reason, **extra)


def gap_candidate(task: GapTask) -> tuple[str, float, float]:
    """Return a gap as a candidate for the budget's checks: ``(text, confidence, recalls)`` (module docstring)."""
    return task["query"], max(0.0, min(1.0, 1.0 - float(task["best_score"]))), float(task["count"])


def _usage(state: GapResearchState) -> ChatUsage:
    return ChatUsage(**state.get("usage", {}))


def _model_failed(usage: ChatUsage) -> tuple[FindingOutcome, str]:
    return "failed", f"the model call failed ({usage.failed})"


def _skip(state: GapResearchState, decision: FindingOutcome, reason: str) -> Command[str]:
    finding = skipped_finding(state["task"]["query"], decision, reason)
    return Command(goto="discard", update={"finding": finding_to_json(finding)})


def budget_research(state: GapResearchState, runtime: Runtime[DreamContext]) -> Command[str]:
    """Decide, before a gap's model calls, whether a model may work on it and whether to research it at all."""
    ctx = runtime.context
    assert ctx.research is not None  # routed here only when research is configured
    task = state["task"]
    if ctx.clock() >= task["deadline"]:
        return _skip(state, "skipped_time", "the research time limit was reached")
    sources = GapSources(ctx.research, ctx.config.autoresearch.sources, max_tool_calls=0)
    if not sources.enabled:
        return _skip(state, "failed", "no research source is enabled")
    model = ctx.model
    notes: list[str] = []
    use_model = model is not None
    if model is not None:
        candidate = model.candidates.check(*gap_candidate(task))
        refused = candidate.describe() if isinstance(candidate, Skipped) else None
        if refused is not None and refused.startswith("budget_exceeded"):
            return _skip(state, "skipped_budget", f"the budget refused the model call ({refused})")
        if refused is not None:
            # A weak or repeated gap is still researched, on the evidence alone: it just gets no model spend.
            record_event(ctx.workspace.events, "llm.refused", ctx.now, node=NODE, gap=task["key"], reason=refused,
                         run_id=ctx.run_id)  # fmt: skip
            notes.append(f"no model work ({refused})")
            use_model = False
        elif isinstance(decision := model.check(NODE, gap=task["key"]), Skipped):
            return _skip(state, "skipped_budget", f"the budget refused the model call ({decision.describe()})")
    usage = ChatUsage(notes=notes)
    return Command(goto="research", update={"use_model": use_model, "usage": dataclasses.asdict(usage)})


async def research(state: GapResearchState, runtime: Runtime[DreamContext]) -> Command[str]:
    """Gather evidence: the model's tool loop (the fixed plan its floor) or the fixed plan, before the deadline."""
    ctx = runtime.context
    assert ctx.research is not None
    cfg = ctx.config.autoresearch
    task = state["task"]
    sources = GapSources(ctx.research, cfg.sources, max_tool_calls=cfg.max_tool_calls_per_gap)
    usage = _usage(state)
    model = ctx.model if state.get("use_model") else None
    outcome: tuple[FindingOutcome, str] | None = None
    async with ctx.research.slots(cfg.concurrency):
        started = ctx.clock()
        ctx.progress("research", f"researching {task['query']!r}")
        try:
            async with asyncio.timeout(max(0.0, task["deadline"] - ctx.clock())):
                if model is not None:
                    loop_calls = max(1, cfg.max_llm_calls_per_gap - MODEL_CALLS_RESERVED)
                    await research_with_model(task["query"], task["key"], sources, model, usage, max_calls=loop_calls,
                                              time_left=lambda: ctx.clock() < task["deadline"])  # fmt: skip
                stopped = usage.failed or (usage.calls == 0 and usage.stopped_by)
                if model is None or (usage.tool_rounds == 0 and not stopped):
                    # A model that calls no tool may not answer from its own knowledge: the fixed plan is the floor.
                    await sources.run_fixed_plan(task["query"])
        except TimeoutError:
            logger.warning("research of %r stopped by the time limit", task["key"])
            outcome = ("skipped_time", "the research time limit was reached during this gap")
    if outcome is None and usage.failed is not None:
        outcome = _model_failed(usage)
    if outcome is None and model is not None and usage.calls == 0 and usage.stopped_by is not None:
        outcome = ("skipped_budget", f"the budget refused the model call ({usage.stopped_by})")
    if outcome is None and sources.all_failed:
        failures = "; ".join(f"{name}: {message}" for name, message in sorted(sources.failed.items()))
        outcome = ("failed", f"every source failed ({failures})")
    update: dict[str, Any] = {
        "work_s": ctx.clock() - started,
        "evidence": [item.to_dict() for item in sources.pool],
        "failed_sources": dict(sources.failed),
        "tool_calls": sources.tool_calls,
        "usage": dataclasses.asdict(usage),
    }
    if outcome is not None:
        update["finding"] = finding_to_json(skipped_finding(task["query"], *outcome))
        return Command(goto="discard", update=update)
    return Command(goto="validate", update=update)


async def validate(state: GapResearchState, runtime: Runtime[DreamContext]) -> Command[str]:
    """Validate the model's claims and the extractive ones side by side, let the model veto the best, decide."""
    ctx = runtime.context
    assert ctx.research is not None
    cfg = ctx.config.autoresearch
    task = state["task"]
    question, key = task["query"], task["key"]
    sources = GapSources(ctx.research, cfg.sources, max_tool_calls=0)
    sources.pool = EvidencePool(Evidence.from_dict(e) for e in state.get("evidence", ()))
    usage = _usage(state)
    model = ctx.model if state.get("use_model") else None
    started = ctx.clock()
    # The best surviving claim wins, so a model's well-formed but unsupported claims can never push out what the
    # evidence itself says.
    claims: list[Claim] = []
    objection: str | None = None
    try:
        async with asyncio.timeout(max(0.0, task["deadline"] - ctx.clock())):
            if model is not None and len(sources.pool) and usage.stopped_by is None:
                claims.extend(await synthesize_with_model(question, key, sources, model, usage) or ())
            claims.extend(synthesize_extractive(question, sources.pool))
            validation = validate_claims(question, claims, sources.pool, read_line=ctx.research.read_line)
            best = validation.best
            settled = best is not None and best.confidence >= cfg.confidence_threshold
            model_ok = usage.stopped_by is None and usage.failed is None
            if model is not None and model_ok and best is not None and settled:
                objection = await veto(question, key, best.claim, sources, model, usage)
    except TimeoutError:
        finding = skipped_finding(question, "skipped_time", "the research time limit was reached during this gap")
        return Command(goto="discard", update={"finding": finding_to_json(finding), "usage": dataclasses.asdict(usage)})
    if usage.failed is not None:
        finding = skipped_finding(question, *_model_failed(usage))
        work = float(state.get("work_s", 0.0)) + ctx.clock() - started
        update = {"finding": finding_to_json(finding), "usage": dataclasses.asdict(usage), "work_s": work}
        return Command(goto="discard", update=update)
    decision = decide(validation, cfg.confidence_threshold, veto=objection)
    finding = finding_from_validation(question, validation, decision, evidence=sources.pool.items)
    work = float(state.get("work_s", 0.0)) + ctx.clock() - started
    update = {"finding": finding_to_json(finding), "usage": dataclasses.asdict(usage), "work_s": work}
    goto = {"keep": "keep", "abstain": "abstain"}.get(decision.outcome, "discard")
    return Command(goto=goto, update=update)


def _close(state: GapResearchState) -> dict[str, Any]:
    # The finding with its notes, spend and time, as the night's one result for this gap.
    task = state["task"]
    usage = _usage(state)
    finding = finding_from_json(state["finding"])
    failed = state.get("failed_sources") or {}
    notes = list(usage.notes)
    if usage.stopped_by and finding.decision != "skipped_budget":
        notes.append(f"model work stopped early ({usage.stopped_by})")
    if failed and finding.decision != "failed":
        notes.append("failed sources: " + "; ".join(f"{n}: {m}" for n, m in sorted(failed.items())))
    finding = dataclasses.replace(
        finding,
        reason="; ".join([finding.reason, *notes]),
        tokens=usage.tokens,
        cost_usd=usage.cost_usd,
        duration_s=max(0.0, float(state.get("work_s", 0.0))),
    )
    result = {
        "key": task["key"],
        "index": task["index"],
        "finding": finding_to_json(finding),
        "failed_sources": dict(failed),
        "tool_calls": int(state.get("tool_calls", 0)),
    }
    return {"research_results": [result]}


def keep(state: GapResearchState) -> dict[str, Any]:
    """Close a kept finding: a research candidate for deep sleep."""
    return _close(state)


def discard(state: GapResearchState) -> dict[str, Any]:
    """Close a gap that keeps nothing: discarded with its reason, failed, or skipped (budget, time)."""
    return _close(state)


def abstain(state: GapResearchState) -> dict[str, Any]:
    """Close a gap with no evidence at all: nothing is answered from a model's own knowledge."""
    return _close(state)


# The model's part: the tool loop, claims as structured output, the veto (which can only lower).


class ClaimOut(BaseModel):
    """One claim and the evidence ids it rests on."""

    text: str = Field(description="The statement, one or two sentences, taken from the evidence.")
    evidence_ids: list[str] = Field(description="Ids of the evidence blocks that support it, e.g. ['E1'].")


class ClaimsAnswer(BaseModel):
    """The model's answer to a gap: claims citing evidence ids (none when the evidence does not answer)."""

    claims: list[ClaimOut] = Field(default_factory=list)


class VetoAnswer(BaseModel):
    """The verifier's answer about one finding."""

    veto: bool = Field(description="True only if the finding should not be kept.")
    reason: str = Field(description="One short sentence.")


@dataclass(kw_only=True)
class ChatUsage:
    """What the model work of one gap cost, and why it stopped."""

    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    stopped_by: str | None = None
    """The budget's refusal that stopped the model work, if any."""
    failed: str | None = None
    """Why a model call failed (``ModelCallError.reason``); the gap fails with it."""
    tool_rounds: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, answer: LLMReply) -> None:
        """Count one answered call."""
        self.calls += 1
        self.tokens += answer.recorded.input_tokens + answer.recorded.output_tokens
        self.cost_usd += answer.recorded.cost_usd


async def _call(
    model: LLMGateway, usage: ChatUsage, key: str, messages: list[BaseMessage], **kw: Any
) -> LLMReply | None:
    refused = model.check(NODE, gap=key)
    if isinstance(refused, Skipped):
        usage.stopped_by = refused.describe()
        return None
    try:
        answer = await model.ainvoke(messages, node=NODE, gap=key, max_output_tokens=MAX_OUTPUT_TOKENS, **kw)
    except BudgetError as exc:
        usage.stopped_by = exc.reason
        return None
    except ModelCallError as exc:
        logger.warning("research of %r: the model call failed (%s)", key, exc.reason)
        usage.failed = exc.reason
        return None
    usage.add(answer)
    return answer


async def research_with_model(
    question: str, key: str, sources: GapSources, model: LLMGateway, usage: ChatUsage, *, max_calls: int,
    time_left: Callable[[], bool],
) -> None:  # fmt: skip
    """Let the model choose tool calls, within ``max_calls`` model calls and the gap's tool-call ceiling."""
    tools = sources.tools()
    messages: list[BaseMessage] = [
        SystemMessage(load_prompt("research")),
        HumanMessage(f"Question: {redact_secrets(question)}"),
    ]
    while usage.calls < max_calls and sources.calls_left > 0 and time_left():
        answer = await _call(model, usage, key, messages, tools=tools)
        if answer is None or not answer.message.tool_calls:
            return
        usage.tool_rounds += 1
        messages.append(answer.message)
        for call in answer.message.tool_calls:
            source = TOOL_SOURCES.get(call["name"])
            query = str(call["args"].get("query", ""))
            if sources.calls_left <= 0:
                content = "not run: the tool-call ceiling for this question is reached"
            elif source is None or source not in sources.enabled or not query.strip():
                content = f"not run: unknown tool or empty query ({call['name']})"
            else:
                try:
                    content = fence_evidence(await sources.query(source, query))
                except ToolError as exc:
                    content = f"tool failed: {sources.fail(source, exc)}"
            messages.append(ToolMessage(content=content, tool_call_id=call["id"] or call["name"]))


async def _ask(
    model: LLMGateway, usage: ChatUsage, key: str, step: str, content: str, schema: type[_Answer], malformed: str
) -> _Answer | None:
    """Ask for a structured answer; None when refused, failed, or malformed (then ``malformed`` is noted)."""
    messages: list[BaseMessage] = [SystemMessage(load_prompt(f"research_{step}")), HumanMessage(content)]
    answer = await _call(model, usage, key, messages, schema=schema)
    if answer is None:
        return None
    if not isinstance(answer.parsed, schema):
        logger.warning(
            "research %s for %r was malformed: %s", "synthesis" if step == "claims" else step, key, answer.parse_error
        )
        usage.notes.append(malformed)
        return None
    return answer.parsed


async def synthesize_with_model(
    question: str, key: str, sources: GapSources, model: LLMGateway, usage: ChatUsage
) -> list[Claim] | None:
    """Ask for claims citing evidence ids; None when no answer could be had (refused, failed or malformed)."""
    content = f"Question: {redact_secrets(question)}\n\n{fence_evidence(sources.pool)}"
    note = "the model's claims were malformed; extractive synthesis used"
    answer = await _ask(model, usage, key, "claims", content, ClaimsAnswer, note)
    return None if answer is None else [Claim(text=c.text, evidence_ids=tuple(c.evidence_ids)) for c in answer.claims]


async def veto(
    question: str, key: str, claim: Claim, sources: GapSources, model: LLMGateway, usage: ChatUsage
) -> str | None:
    """Ask the verifier about a finding about to be kept; return its veto reason, or None.

    None also when the call was refused or the answer malformed (noted in ``usage``); a failed call leaves
    ``usage.failed`` set, and the caller fails the gap.
    """
    cited = [item for item in sources.pool if item.id in claim.evidence_ids]
    content = f"Question: {redact_secrets(question)}\nClaim: {claim.text}\n\n{fence_evidence(cited)}"
    note = "the verifier's answer was malformed; no veto"
    answer = await _ask(model, usage, key, "veto", content, VetoAnswer, note)
    return answer.reason or "no reason given" if answer is not None and answer.veto else None
