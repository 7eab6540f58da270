"""A gap's sources: the night's research tools, a query dispatched to them, their hits pooled as evidence.

:class:`ResearchTools` holds the tools of a run (ripgrep, the workspace's memory search, Tavily, or their fakes);
:class:`GapSources` is one gap's view of them: its enabled sources, evidence pool, tool-call count and failures.

A source that fails (the web tool has already retried a timeout, 429 or 5xx) is marked failed for this gap, with
its error, and the other sources go on. Nothing is swallowed: every failure is logged and ends up in the finding.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.tools import BaseTool

from dreaming.errors import ToolError
from dreaming.memory.research import Evidence, EvidencePool, LineReader, SourceHit, redact_secrets, search_words
from dreaming.tools.codebase import CodebaseSearch, codebase_search_tool
from dreaming.tools.memory_search import MemorySearch, memory_search_tool
from dreaming.tools.web import WebSearch, web_search_tool

__all__ = ["TOOL_SOURCES", "GapSources", "ResearchTools", "plan_queries"]

logger = logging.getLogger(__name__)

TOOL_SOURCES = {"codebase_search": "codebase", "memory_search": "memory", "web_search": "web"}
"""Tool name the model calls -> research source."""
MATCHES_PER_CALL = 8
"""Hits asked of a tool per query."""
SOURCE_ORDER = ("codebase", "memory", "web")


@dataclass(frozen=True, kw_only=True)
class ResearchTools:
    """The research tools of a run; a source is off when its tool is None."""

    codebase: CodebaseSearch | None = None
    """ripgrep over ``codebase_roots`` (or a fake)."""
    memory: MemorySearch | None = None
    """The workspace's own memory search (or a fake)."""
    web: WebSearch | None = None
    """Tavily, only with a key (or a fake)."""
    read_line: LineReader | None = None
    """Re-reads a codebase ``path:line`` at validation; without it code evidence never supports a claim."""
    _slots: dict[tuple[int, int], asyncio.Semaphore] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def close(self) -> None:
        """Release what the tools hold open (the memory index keeps a SQLite connection for the night)."""
        for tool in (self.codebase, self.memory, self.web):
            close = getattr(tool, "close", None)
            if callable(close):
                close()

    def slots(self, concurrency: int) -> asyncio.Semaphore:
        """Return the run's gate of ``concurrency`` gaps researched at once (one per event loop).

        The research branches bound themselves with this instead of LangGraph's ``max_concurrency``: that option also
        gates the checkpointer's background writes, so a finished branch's writes would wait behind the branches still
        queued, and a crash would lose them.
        """
        key = (max(1, concurrency), id(asyncio.get_running_loop()))
        if key not in self._slots:
            self._slots[key] = asyncio.Semaphore(key[0])
        return self._slots[key]


def plan_queries(question: str) -> list[str]:
    """Return the fixed plan's queries for a gap: the question itself, then its salient-term variant.

    The variant keeps identifiers as written (``"what is MAX_GAPS"`` -> ``"MAX_GAPS"``), so that a literal search finds
    the name and not every line holding one of its parts.
    """
    variant = " ".join(search_words(question))
    return [q for q in dict.fromkeys([" ".join(question.split()), variant]) if q]


class GapSources:
    """The enabled sources of one gap, its evidence pool, its tool-call count and its failed sources."""

    def __init__(self, tools: ResearchTools, enabled: Sequence[str], *, max_tool_calls: int) -> None:
        by_name = {"codebase": tools.codebase, "memory": tools.memory, "web": tools.web}
        self._tools = tools
        self.enabled = [name for name in SOURCE_ORDER if name in enabled and by_name[name] is not None]
        self.max_tool_calls = max(0, max_tool_calls)
        self.pool = EvidencePool()
        self.tool_calls = 0
        self.attempted: set[str] = set()
        self.failed: dict[str, str] = {}

    @property
    def calls_left(self) -> int:
        """Return how many tool calls this gap may still make."""
        return max(0, self.max_tool_calls - self.tool_calls)

    def tools(self) -> list[BaseTool]:
        """Return the LangChain tools of the enabled sources (what the model is offered)."""
        out: list[BaseTool] = []
        if "codebase" in self.enabled and self._tools.codebase is not None:
            out.append(codebase_search_tool(self._tools.codebase))
        if "memory" in self.enabled and self._tools.memory is not None:
            out.append(memory_search_tool(self._tools.memory))
        if "web" in self.enabled and self._tools.web is not None:
            out.append(web_search_tool(self._tools.web))
        return out

    async def fetch(self, source: str, query: str) -> list[SourceHit]:
        """Run one tool call (counted) and return its hits without pooling them.

        Raises:
            ToolError: the source failed (already retried where retrying makes sense).
            ValueError: the source is not enabled.
        """
        if source not in self.enabled:
            raise ValueError(f"source {source!r} is not enabled")
        self.tool_calls += 1
        self.attempted.add(source)
        if source == "codebase" and self._tools.codebase is not None:
            return await self._tools.codebase.search(query, max_matches=MATCHES_PER_CALL)
        if source == "web" and self._tools.web is not None:
            return await self._tools.web.search(query, max_results=MATCHES_PER_CALL)
        assert self._tools.memory is not None
        hits = await asyncio.to_thread(self._tools.memory.search, query, MATCHES_PER_CALL)
        return [
            SourceHit(
                source_type="memory",
                locator=f"{h.path}:{h.start_line}-{h.end_line}",
                snippet=h.snippet,
                score=h.score,
                path=h.path,
                line=h.start_line,
            )
            for h in hits
        ]

    def fail(self, source: str, exc: BaseException) -> str:
        """Mark ``source`` failed for this gap (logged, redacted) and return the message."""
        message = redact_secrets(f"{type(exc).__name__}: {exc}")[:300]
        self.failed.setdefault(source, message)
        logger.warning("research source %s failed: %s", source, message)
        return message

    async def query(self, source: str, query: str) -> list[Evidence]:
        """Run one tool call and pool its hits; return their evidence. Failures propagate (see :meth:`fetch`)."""
        hits = await self.fetch(source, query)
        return list(dict.fromkeys(self.pool.extend(hits)))

    async def run_fixed_plan(self, question: str) -> None:
        """Query each enabled source with the plan's queries, sources concurrently, pooled in a fixed order.

        A source's first failure stops that source for this gap; the others go on.
        """
        plan = [(source, q) for source in self.enabled for q in plan_queries(question)][: self.calls_left]

        async def one_source(source: str) -> list[list[SourceHit]]:
            found: list[list[SourceHit]] = []
            for name, q in plan:
                if name != source:
                    continue
                try:
                    found.append(await self.fetch(source, q))
                except ToolError as exc:
                    self.fail(source, exc)
                    break
            return found

        results = await asyncio.gather(*(one_source(source) for source in self.enabled))
        for batches in results:  # pooled in source order, so evidence ids do not depend on timing
            for hits in batches:
                self.pool.extend(hits)

    @property
    def all_failed(self) -> bool:
        """Return whether every source tried failed (and there is no evidence)."""
        return bool(self.attempted) and set(self.failed) >= self.attempted and len(self.pool) == 0
