"""Research phase: 10 gaps against tools and a model with fixed latencies, at concurrency 5 and 1 (issue 5).

Tools answer after 200 ms, the model after 500 ms; each gap makes one tool call and four model calls (two for the
tool loop, one for the claims, one for the veto). The figures: wall time of the night at each concurrency (the
research phase dominates it), their ratio (target <= 0.35), and model tokens per kept finding.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from dreaming.config import AutoresearchConfig, DreamingConfig
from dreaming.graph import ChatAnswer, DreamContext, ResearchDeps
from dreaming.graph.research_gap import ClaimOut, ClaimsAnswer, VetoAnswer
from dreaming.memory import Workspace
from dreaming.memory.gaps import record_gap
from dreaming.memory.research import SourceHit
from dreaming.night import dream
from dreaming.tools.codebase import FakeCodebaseSearch

NOW = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)
TOOL_S = 0.2
MODEL_S = 0.5


class TimedChat:
    """A model that answers after ``MODEL_S``: one tool call, then claims citing E1, then no veto."""

    def __init__(self) -> None:
        self.tokens = 0

    def refusal(self, node: str, *, gap: str | None) -> str | None:
        return None

    def candidate_refusal(self, text: str, confidence: float, recalls: float) -> str | None:
        return None

    async def ainvoke(
        self, messages: Sequence[BaseMessage], *, node: str, gap: str | None, max_output_tokens: int | None = None,
        schema: type[BaseModel] | None = None, tools: Sequence[BaseTool] | None = None,
    ) -> ChatAnswer:  # fmt: skip
        await asyncio.sleep(MODEL_S)
        tokens_in, tokens_out = sum(len(str(m.content)) for m in messages) // 4, 40
        self.tokens += tokens_in + tokens_out
        question = str(messages[1].content).split("\n")[0].removeprefix("Question: ")
        parsed: BaseModel | None = None
        message = AIMessage(content="done")
        if schema is ClaimsAnswer:
            parsed = ClaimsAnswer(claims=[ClaimOut(text=f"{question} = 0.15 # the {question}", evidence_ids=["E1"])])
        elif schema is VetoAnswer:
            parsed = VetoAnswer(veto=False, reason="fine")
        elif not any(isinstance(m, ToolMessage) for m in messages):
            call = {"name": "codebase_search", "args": {"query": question}, "id": "c1", "type": "tool_call"}
            message = AIMessage(content="", tool_calls=[call])
        return ChatAnswer(message=message, parsed=parsed, input_tokens=tokens_in, output_tokens=tokens_out)


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
    chat = TimedChat()
    deps = ResearchDeps(codebase=FakeCodebaseSearch(_code), chat=chat, read_line=_line)

    def complete(base: DreamContext) -> DreamContext:
        return replace(base, research=deps)

    started = time.perf_counter()
    outcome = asyncio.run(dream(ws, cfg, now=NOW, make_context=complete))
    took = time.perf_counter() - started
    findings: list[dict[str, Any]] = outcome.state["summaries"]["research"]["findings"]
    return took, chat.tokens, sum(1 for f in findings if f["decision"] == "keep")


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
