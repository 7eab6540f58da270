"""What the research nodes need from the outside: the three search tools and a budgeted chat model.

The graph cannot import ``agent/`` (where the gateway lives), so the chat model is seen through
:class:`ResearchChat`, a narrow protocol that ``agent/_research_wiring.py`` adapts the gateway to.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from dreaming.memory.research import LineReader
from dreaming.tools.codebase import CodebaseSearch
from dreaming.tools.memory_search import MemorySearch
from dreaming.tools.web import WebSearch

__all__ = ["ChatAnswer", "ResearchChat", "ResearchDeps"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ChatAnswer:
    """A model's answer as research sees it."""

    message: AIMessage
    """The raw answer (tool calls included)."""
    parsed: BaseModel | None = None
    """The structured answer when a schema was asked for and the answer fits it."""
    parse_error: str | None = None
    """Why the answer did not fit the schema."""
    input_tokens: int = 0
    """Prompt tokens recorded by the budget."""
    output_tokens: int = 0
    """Completion tokens recorded by the budget."""
    cost_usd: float = 0.0
    """Cost recorded by the budget (0 for a cache hit)."""


class ResearchChat(Protocol):
    """A chat model behind the budget: every call is checked first and recorded after."""

    def refusal(self, node: str, *, gap: str | None) -> str | None:
        """Return why a call from ``node`` for ``gap`` would be refused now, or None when it may go ahead."""
        ...

    def candidate_refusal(self, text: str, confidence: float, recalls: float) -> str | None:
        """Run the budget's candidate checks (budget, quality, duplicate) on a candidate for model work.

        Returns ``"<reason>: <detail>"`` (``budget_exceeded``, ``low_quality`` or ``duplicate``) or None when the
        model may work on it. An allowed candidate is remembered for the run, so the same one is refused next time.
        """
        ...

    async def ainvoke(
        self,
        messages: Sequence[BaseMessage],
        *,
        node: str,
        gap: str | None,
        max_output_tokens: int | None = None,
        schema: type[BaseModel] | None = None,
        tools: Sequence[BaseTool] | None = None,
    ) -> ChatAnswer:
        """Call the model.

        Raises:
            BudgetError: the budget refused the call (nothing was sent).
            ModelCallError: the call went out and failed, or its reply passed the output cap (its cost is recorded).
        """
        ...


@dataclass(frozen=True, kw_only=True)
class ResearchDeps:
    """The research tools of a run; a source is off when its tool is None."""

    codebase: CodebaseSearch | None = None
    """ripgrep over ``codebase_roots`` (or a fake)."""
    memory: MemorySearch | None = None
    """The workspace's own memory search (or a fake)."""
    web: WebSearch | None = None
    """Tavily, only with a key (or a fake)."""
    chat: ResearchChat | None = None
    """The budgeted model; None researches with the fixed plan and extractive synthesis."""
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
