"""Build the research dependencies of a night: the three tools and the gateway seen as a :class:`ResearchChat`.

Only here do configuration and environment become live research tools: ripgrep over ``codebase_roots`` (resolved
against the workspace root), the workspace's memory search, Tavily only when ``TAVILY_API_KEY`` is set, and the
budgeted gateway when a model is available.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from dreaming.agent._checks import CandidateGuard, Skipped
from dreaming.agent.gateway import LLMGateway
from dreaming.config import DreamingConfig
from dreaming.graph import ChatAnswer, ResearchDeps
from dreaming.memory import Workspace
from dreaming.tools.codebase import RipgrepSearch
from dreaming.tools.memory_search import WorkspaceMemorySearch
from dreaming.tools.web import web_search_from_env

__all__ = ["GatewayResearchChat", "build_research_deps", "codebase_roots"]


class GatewayResearchChat:
    """The gateway as research's budgeted chat: ``refusal`` is the gateway's check, ``ainvoke`` its call."""

    def __init__(self, gateway: LLMGateway, guard: CandidateGuard | None = None) -> None:
        self._gateway = gateway
        self._guard = guard or gateway.candidate_guard()

    def candidate_refusal(self, text: str, confidence: float, recalls: float) -> str | None:
        """Run the run's candidate checks; return ``"<reason>: <detail>"`` or None when allowed."""
        decision = self._guard.check(text, confidence, recalls)
        return f"{decision.reason}: {decision.detail}" if isinstance(decision, Skipped) else None

    def refusal(self, node: str, *, gap: str | None) -> str | None:
        """Return the gateway's refusal reason for a call now, or None when allowed."""
        decision = self._gateway.check(node, gap=gap)
        if isinstance(decision, Skipped):
            return f"{decision.reason}: {decision.detail}" if decision.detail else decision.reason
        return None

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
        """Call the model through the gateway (``BudgetError`` when it refuses, ``ModelCallError`` when it fails)."""
        reply = await self._gateway.ainvoke(
            messages, node=node, gap=gap, max_output_tokens=max_output_tokens, schema=schema, tools=tools
        )
        return ChatAnswer(
            message=reply.message,
            parsed=reply.parsed,
            parse_error=reply.parse_error,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cost_usd=reply.cost_usd,
        )


def codebase_roots(ws: Workspace, config: DreamingConfig) -> list[Path]:
    """Return ``[autoresearch] codebase_roots`` as absolute folders (relative ones are under the workspace root)."""
    roots = []
    for raw in config.autoresearch.codebase_roots:
        path = Path(raw).expanduser()
        roots.append((path if path.is_absolute() else ws.root / path).resolve())
    return roots


def build_research_deps(
    ws: Workspace,
    config: DreamingConfig,
    *,
    env: Mapping[str, str],
    gateway: LLMGateway | None,
    guard: CandidateGuard | None = None,
) -> ResearchDeps | None:
    """Return the night's research dependencies, or None when ``[autoresearch]`` is off.

    A source not listed in ``[autoresearch] sources`` is left out; the web source also needs ``TAVILY_API_KEY``
    (without it nothing ever calls out); the chat is the gateway only when it is available, with the run's
    candidate checks (``guard``, a fresh one by default).
    """
    cfg = config.autoresearch
    if not cfg.enabled:
        return None
    codebase: RipgrepSearch | None = None
    if "codebase" in cfg.sources:
        codebase = RipgrepSearch(codebase_roots(ws, config), base=ws.root)
    memory = WorkspaceMemorySearch(ws) if "memory" in cfg.sources else None
    web = web_search_from_env(env) if "web" in cfg.sources else None
    chat = GatewayResearchChat(gateway, guard) if gateway is not None and gateway.available else None
    return ResearchDeps(
        codebase=codebase, memory=memory, web=web, chat=chat, read_line=codebase.read_line if codebase else None
    )
