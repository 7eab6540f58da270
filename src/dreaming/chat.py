"""Tools a chat agent uses to reach its dreaming memory: "dream now" and the prior insights.

A chat agent (any LangChain tool-calling agent) gets these next to ``memory_search_tool``. "Dream now" runs a full
night under the workspace lock, exactly as the schedule does, and answers with the diary's facts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel

from dreaming.config import load_config
from dreaming.errors import LockBusyError, OutsideWorkspaceError
from dreaming.memory import Workspace, night_entry, render_diary_entry
from dreaming.memory.insights import load_prior_insights
from dreaming.night import night_context, run_night, utc_now

__all__ = ["dream_now_tool", "prior_insights_tool"]


class _NoArgs(BaseModel):
    pass


class _InsightArgs(BaseModel):
    asset: str | None = None
    regime: str | None = None


def dream_now_tool(ws: Workspace, *, env: Mapping[str, str], clock: Callable[[], datetime] = utc_now) -> BaseTool:
    """Return the "dream now" tool: one night on ``ws`` now, answered with what it promoted, retired and learned."""

    async def dream_now() -> str:
        config = load_config(ws.config_file)
        now = clock()
        try:
            outcome = await run_night(ws, config, now=now, trigger="now", make_context=night_context(env=env))
        except (LockBusyError, OutsideWorkspaceError) as exc:
            return f"Not now: {exc}"
        entry = night_entry(outcome.state, trigger="now")
        return render_diary_entry(entry)

    return StructuredTool.from_function(
        coroutine=dream_now,
        name="dream_now",
        description="Consolidate memory now (a full dreaming night): promote proven patterns and recalls, retire "
        "stale ones, research open knowledge gaps. Returns the night's diary entry.",
        args_schema=_NoArgs,
    )


def prior_insights_tool(ws: Workspace) -> BaseTool:
    """Return a tool that gives the active insights (optionally for one asset or regime) as prompt text."""

    def prior_insights(asset: str | None = None, regime: str | None = None) -> str:
        return load_prior_insights(ws, asset=asset, regime=regime).text or "No active insights."

    return StructuredTool.from_function(
        func=prior_insights,
        name="prior_insights",
        description="Read the insights dreaming has proven (verdict patterns and verified research findings), "
        "optionally only those about an asset or a market regime.",
        args_schema=_InsightArgs,
    )
