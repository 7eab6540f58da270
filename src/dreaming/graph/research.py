r"""Research the night's knowledge gaps: the nodes between ``rem`` and ``budget_verify`` (spec/research.md).

The shape::

    rem -> research_select -(Send per gap)-> research_gap x N (concurrency) -> research_collect -> budget_verify
                          \-(disabled)-> budget_verify

``research_select`` picks tonight's gaps and sets the phase's deadline; each ``research_gap`` branch is the research
subgraph (``_research_gap.py``) run on one gap as its own LangGraph task, so its writes are checkpointed node by node
and a resumed run does not redo a finished gap;
``research_collect`` logs one ``research.jsonl`` row per gap, records each attempt on the gap and builds the diary's
research section. :func:`promote_research` is called by ``deep`` before the MEMORY.md index is written.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from dreaming.graph.context import DreamContext
from dreaming.graph.research_gap import GapTask, finding_from_json, finding_to_json, skipped_finding
from dreaming.graph.state import DreamState
from dreaming.memory import fingerprint, record_event, settled_decision
from dreaming.memory.gaps import AttemptOutcome, list_gaps, record_attempt, select_gaps_for_night
from dreaming.memory.research import (
    Conflict,
    InsightWrite,
    ResearchFinding,
    append_research_log,
    redact_secrets,
    render_rem_research_section,
    research_log_row,
    write_research_insight,
)

__all__ = ["promote_research", "research_collect", "research_select"]

logger = logging.getLogger(__name__)

_ATTEMPTS: dict[str, AttemptOutcome] = {
    "keep": "kept",
    "discard": "discarded",
    "abstain": "abstained",
    "failed": "failed",
}


_ORDER = ("keep", "discard", "abstain", "failed", "skipped_budget", "skipped_time", "skipped_duplicate")
_WORDS = {
    "keep": "kept",
    "discard": "discarded",
    "abstain": "abstained",
    "failed": "failed",
    "skipped_budget": "skipped (budget)",
    "skipped_time": "skipped (time limit)",
    "skipped_duplicate": "skipped (duplicate)",
}


def collect_lines(findings: Sequence[ResearchFinding], results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Return the counts, what stopped research, and failed sources."""
    if not findings:
        return ["No open knowledge gap to research tonight."]
    counts: Counter[str] = Counter(f.decision for f in findings)
    parts = [f"{counts[d]} {_WORDS[d]}" for d in _ORDER if counts[d]]
    tokens = sum(f.tokens for f in findings)
    cost = sum(f.cost_usd for f in findings)
    lines = [f"Researched {len(findings)} knowledge gaps: {', '.join(parts)}."]
    if tokens:
        lines.append(f"Research used {tokens:,} tokens (${cost:.4f}).")
    budget = [f for f in findings if f.decision == "skipped_budget"]
    if budget:
        lines.append(f"Research stopped by the budget: {budget[0].reason}.")
    if counts["skipped_time"]:
        lines.append(f"Research stopped by its time limit: {counts['skipped_time']} gap(s) not researched.")
    for result in results:
        for source, message in sorted((result.get("failed_sources") or {}).items()):
            lines.append(f"Source `{source}` failed for {result['key']!r}: {redact_secrets(str(message))}")
    return lines


def promotion_lines(promoted: Sequence[Mapping[str, Any]], conflicts: Sequence[Conflict]) -> list[str]:
    """Return one line per insight written and per conflict left for the user, naming insights by their files."""
    lines = []
    for item in promoted:
        old = ", ".join(f"`{ident}`" for ident in item.get("superseded") or [])
        superseded = f", superseding {old}" if old else ""
        lines.append(f"Research insight `{item['id']}` {item['action']}{superseded}.")
    for conflict in conflicts:
        lines.append(f"Conflict left for you: {conflict.finding.gap!r} contradicts `{conflict.existing.id}`.")
    return lines


def research_select(state: DreamState, runtime: Runtime[DreamContext]) -> Command[str]:
    """Select tonight's gaps and fan out one ``research_gap`` per gap; go on to ``budget_verify`` when disabled."""
    ctx = runtime.context
    cfg = ctx.config.autoresearch
    if not cfg.enabled or ctx.research is None:
        return Command(goto="budget_verify")
    gaps = select_gaps_for_night(ctx.workspace, now=ctx.now, max_gaps=cfg.max_gaps_per_night)
    deadline = ctx.clock() + cfg.max_research_time_minutes * 60.0
    ctx.progress("research", f"{len(gaps)} knowledge gaps to research")
    seen: dict[str, str] = {}
    sends: list[Send] = []
    skipped: list[dict[str, Any]] = []
    for index, gap in enumerate(gaps):
        mark = fingerprint(gap.query)
        if mark in seen:
            finding = skipped_finding(gap.query, "skipped_duplicate", f"same question as {seen[mark]!r} tonight")
            skipped.append({"key": gap.key, "index": index, "finding": finding_to_json(finding)})
            continue
        seen[mark] = gap.query
        task: GapTask = {"key": gap.key, "query": redact_secrets(gap.query), "index": index, "deadline": deadline,
                         "count": gap.count, "best_score": gap.best_score}  # fmt: skip
        sends.append(Send("research_gap", {"task": task}))
    update = {
        "research_plan": [{"key": g.key, "query": g.query} for g in gaps],
        "research_deadline": deadline,
        "research_results": skipped,
    }
    return Command(goto=sends or "research_collect", update=update)


def _dedupe_claims(findings: list[ResearchFinding]) -> list[ResearchFinding]:
    """Turn a kept finding whose claim another gap already kept tonight into ``skipped_duplicate``."""
    seen: dict[str, str] = {}
    out: list[ResearchFinding] = []
    for finding in findings:
        if finding.kept and finding.claim is not None:
            mark = fingerprint(finding.claim.text)
            if mark in seen:
                finding = skipped_finding(
                    finding.gap, "skipped_duplicate", f"same finding as the gap {seen[mark]!r} tonight",
                    claim=finding.claim, evidence=finding.evidence, confidence=finding.confidence,
                    method=finding.method, tokens=finding.tokens, cost_usd=finding.cost_usd,
                )  # fmt: skip
            else:
                seen[mark] = finding.gap
        out.append(finding)
    return out


def _already_logged(ctx: DreamContext) -> bool:
    # A night's rows are appended in one write, so a resumed collect only needs the file's last complete row.
    path = ctx.workspace.research_log
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 64 * 1024))
            tail = handle.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return False
    for line in reversed(tail.splitlines()):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line is not this run's row
        return isinstance(row, dict) and row.get("run_id") == ctx.run_id
    return False


def research_collect(state: DreamState, runtime: Runtime[DreamContext]) -> dict[str, Any]:
    """Fan in: log each gap's row, record its attempt, build ``summaries["research"]`` for the diary."""
    ctx = runtime.context
    ws = ctx.workspace
    results = sorted(state.get("research_results") or [], key=lambda r: int(r["index"]))
    keys = [str(r["key"]) for r in results]
    findings = _dedupe_claims([finding_from_json(r["finding"]) for r in results])
    if not _already_logged(ctx):  # a resumed collect must not log the night twice
        append_research_log(ws, [research_log_row(ctx.run_id, f, ctx.now) for f in findings])
    known = {gap.key: gap for gap in list_gaps(ws, now=ctx.now)}
    for key, finding in zip(keys, findings, strict=True):
        outcome = _ATTEMPTS.get(finding.decision)
        gap = known.get(key)
        if outcome is None or gap is None:
            continue
        if gap.last_attempt == ctx.now and gap.last_outcome == outcome:
            continue  # recorded before a crash
        record_attempt(ws, key, outcome=outcome, now=ctx.now)
    backlog = [gap.query for gap in list_gaps(ws, status="backlog", now=ctx.now)]
    halts = []
    budget = [f for f in findings if f.decision == "skipped_budget"]
    if budget:
        halts.append({"node": "research", "reason": f"budget: {len(budget)} gap(s) skipped ({budget[0].reason})"})
    record_event(ws.events, "research.collected", ctx.now, run_id=ctx.run_id, gaps=len(findings))
    summary = {
        "lines": collect_lines(findings, results),
        "markdown": render_rem_research_section(findings, backlog=backlog),
        "findings": [finding_to_json(f) for f in findings],
        "keys": keys,
        "backlog": backlog,
    }
    return {"done": ["research"], "summaries": {"research": summary}, "halts": halts}


def _decision(outcome: InsightWrite | Conflict) -> dict[str, Any] | None:
    if isinstance(outcome, Conflict):
        return None
    return {"id": outcome.insight_id, "action": outcome.action, "superseded": list(outcome.superseded)}


def promote_research(state: Mapping[str, Any], ctx: DreamContext) -> dict[str, Any]:
    """Write tonight's kept findings as research insights; return the state update for the diary.

    Called by ``deep`` before it writes the MEMORY.md index. A contradiction never overwrites silently:
    ``write_research_insight`` either supersedes with lineage (the old file archived, never deleted) or returns a
    :class:`Conflict`, listed in DREAMS.md. Running it twice writes the same bytes.
    """
    research = (state.get("summaries") or {}).get("research") or {}
    if "findings" not in research:
        return {}
    findings = [finding_from_json(f) for f in research["findings"]]
    promoted: list[dict[str, Any]] = []
    conflicts: list[Conflict] = []
    for finding in findings:
        if not finding.kept:
            continue
        # What this write will do, recorded before it happens: a resumed run reports it, not "unchanged".
        planned = write_research_insight(ctx.workspace, finding, ctx.now, dry_run=True)
        decision = settled_decision(
            ctx.workspace, f"research:{finding.gap}", _decision(planned), run_id=ctx.run_id, now=ctx.now
        )
        outcome = write_research_insight(ctx.workspace, finding, ctx.now)
        if isinstance(outcome, Conflict):
            logger.info("research finding for %r conflicts with %s", finding.gap, outcome.existing.id)
            conflicts.append(outcome)
        elif decision is not None:
            promoted.append(decision)
    markdown = render_rem_research_section(findings, conflicts=conflicts, backlog=research.get("backlog", []))
    lines = [*research.get("lines", []), *promotion_lines(promoted, conflicts)]
    conflict_rows = [
        {"question": c.finding.gap, "claim": c.finding.claim.text if c.finding.claim else "",
         "existing_id": c.existing.id, "reason": c.reason}
        for c in conflicts
    ]  # fmt: skip
    updated = {**research, "lines": lines, "markdown": markdown, "promoted": promoted, "conflicts": conflict_rows}
    return {"summaries": {"research": updated}}
