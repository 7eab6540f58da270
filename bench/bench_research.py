"""Research phase: 10 gaps against tools and a model with fixed latencies, at concurrency 5 and 1 (issue 5).

Tools answer after 200 ms, the model after 500 ms; each gap makes one tool call and four model calls (two for the
tool loop, one for the claims, one for the veto). The figures: wall time of the night at each concurrency (the
research phase dominates it), their ratio (target <= 0.35), and model tokens per kept finding.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from dreaming.config import AutoresearchConfig, DreamingConfig
from dreaming.graph import DreamContext
from dreaming.llm import FakeChatModel, build_gateway, tool_call_answer
from dreaming.memory import Workspace
from dreaming.memory.gaps import record_gap
from dreaming.memory.research import SourceHit
from dreaming.night import run_night
from dreaming.prompts import load_prompt
from dreaming.tools.codebase import FakeCodebaseSearch
from dreaming.tools.sources import ResearchTools

NOW = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)
TOOL_S = 0.2
MODEL_S = 0.5


def _timed_answer(messages: list[BaseMessage]) -> AIMessage:
    """Answer after ``MODEL_S`` (a worker thread sleeps, as a remote call would wait): one tool call, then claims
    citing E1, then no veto."""
    time.sleep(MODEL_S)
    question = str(messages[1].content).split("\n")[0].removeprefix("Question: ")
    offered = str(messages[0].content)
    if offered == load_prompt("research_claims"):
        return tool_call_answer("ClaimsAnswer", {"claims": [{"text": f"{question} = 0.15 # the {question}",
                                                             "evidence_ids": ["E1"]}]})  # fmt: skip
    if offered == load_prompt("research_veto"):
        return tool_call_answer("VetoAnswer", {"veto": False, "reason": "fine"})
    if not any(isinstance(m, ToolMessage) for m in messages):
        return tool_call_answer("codebase_search", {"query": question})
    return AIMessage(content="done")


async def _code(query: str) -> list[SourceHit]:
    await asyncio.sleep(TOOL_S)
    path = f"src/{query}.py"
    return [SourceHit(source_type="codebase", locator=f"{path}:3", snippet=_line(path, 3), path=path, line=3,
                      line_text=_line(path, 3), score=1.0)]  # fmt: skip


def _line(path: str, number: int) -> str:
    """The fake source tree: ``src/<name>.py`` line 3 says ``<name> = 0.15 # the <name>``."""
    name = Path(path).stem
    return f"{name} = 0.15 # the {name}"


def _night(root: Path, gaps: int, concurrency: int) -> tuple[float, int, int]:
    ws = Workspace.at(root)
    ws.root.mkdir(parents=True)
    for i in range(gaps):
        record_gap(ws, f"threshold_{i:02d}", "no_results", best_score=0.0, now=NOW)
    cfg = DreamingConfig(
        autoresearch=AutoresearchConfig(
            enabled=True, sources=("codebase",), max_gaps_per_night=gaps, concurrency=concurrency
        )
    )
    tools = ResearchTools(codebase=FakeCodebaseSearch(_code), read_line=_line)
    model = FakeChatModel(respond=_timed_answer, usage=(400, 40))

    def complete(base: DreamContext) -> DreamContext:
        gateway = build_gateway(cfg, ws, env={"OPENAI_API_KEY": "bench"}, now=lambda: NOW, model_factory=model.factory)
        return replace(base, research=tools, gateway=gateway)

    started = time.perf_counter()
    outcome = asyncio.run(run_night(ws, cfg, now=NOW, make_context=complete))
    took = time.perf_counter() - started
    findings: list[dict[str, Any]] = outcome.state["summaries"]["research"]["findings"]
    tokens = sum(int(f["tokens"]) for f in findings)
    return took, tokens, sum(1 for f in findings if f["decision"] == "keep")


def run(scale: float) -> None:
    """Print the research phase's wall time at concurrency 5 and 1, their ratio, and tokens per kept finding."""
    gaps = max(2, round(10 * scale))
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for concurrency in (5, 1):
            root = Path(tmp) / f"c{concurrency}"
            results[concurrency] = _night(root, gaps, concurrency)
    fast, slow = results[5], results[1]
    print(f"gaps: {gaps}; tool call {TOOL_S * 1000:.0f} ms, model call {MODEL_S * 1000:.0f} ms")
    ratio = fast[0] / slow[0]
    print(f"concurrency 5: {fast[0]:.2f} s; concurrency 1: {slow[0]:.2f} s; ratio {ratio:.3f} (target <= 0.35)")
    kept = fast[2]
    per = fast[1] / kept if kept else float("nan")
    print(f"kept {kept}/{gaps}; model tokens {fast[1]:,}; tokens per kept finding {per:,.0f}")
