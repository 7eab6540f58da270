"""The research sources of one gap: dispatch a query to a tool, pool its hits, record a failing source.

A source that fails (the web tool has already retried a timeout, 429 or 5xx) is marked failed for this gap, with
its error, and the other sources go on. Nothing is swallowed: every failure is logged and ends up in the finding.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from langchain_core.tools import BaseTool

from dreaming.errors import ToolError
from dreaming.graph._research_deps import ResearchDeps
from dreaming.memory.research import Evidence, EvidencePool, SourceHit, redact_secrets, search_words
from dreaming.tools.codebase import codebase_search_tool
from dreaming.tools.memory_search import memory_search_tool
from dreaming.tools.web import web_search_tool

__all__ = ["TOOL_SOURCES", "GapSources", "plan_queries"]

logger = logging.getLogger(__name__)

TOOL_SOURCES = {"codebase_search": "codebase", "memory_search": "memory", "web_search": "web"}
"""Tool name the model calls -> research source."""
MATCHES_PER_CALL = 8
"""Hits asked of a tool per query."""
SOURCE_ORDER = ("codebase", "memory", "web")


def plan_queries(question: str) -> list[str]:
    """Return the fixed plan's queries for a gap: the question itself, then its salient-term variant.

    The variant keeps identifiers as written (``"what is MAX_GAPS"`` -> ``"MAX_GAPS"``), so that a literal search finds
    the name and not every line holding one of its parts.
    """
    variant = " ".join(search_words(question))
    return [q for q in dict.fromkeys([" ".join(question.split()), variant]) if q]


class GapSources:
    """The enabled sources of one gap, its evidence pool, its tool-call count and its failed sources."""

    def __init__(self, deps: ResearchDeps, enabled: Sequence[str], *, max_tool_calls: int) -> None:
        tools = {"codebase": deps.codebase, "memory": deps.memory, "web": deps.web}
        self._deps = deps
        self.enabled = [name for name in SOURCE_ORDER if name in enabled and tools[name] is not None]
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
        if "codebase" in self.enabled and self._deps.codebase is not None:
            out.append(codebase_search_tool(self._deps.codebase))
        if "memory" in self.enabled and self._deps.memory is not None:
            out.append(memory_search_tool(self._deps.memory))
        if "web" in self.enabled and self._deps.web is not None:
            out.append(web_search_tool(self._deps.web))
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
        if source == "codebase" and self._deps.codebase is not None:
            return await self._deps.codebase.search(query, max_matches=MATCHES_PER_CALL)
        if source == "web" and self._deps.web is not None:
            return await self._deps.web.search(query, max_results=MATCHES_PER_CALL)
        assert self._deps.memory is not None
        hits = await asyncio.to_thread(self._deps.memory.search, query, MATCHES_PER_CALL)
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
