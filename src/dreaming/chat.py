"""The tools a chat agent uses: the day feeding the night, and the night answering the day.

Give a tool-calling agent (any LangChain agent) these four:

- ``memory_search_tool(ws)``: searches the memory and records each search (recalls, and a knowledge gap when the
  memory had no good answer), so tonight's night has something to learn from; ``read_only=True`` opts out;
- ``record_gap_tool(ws)``: the agent says what it could not find, and the night researches it;
- ``prior_insights_tool(ws)``: what the nights have learned and verified, to read before deciding;
- ``dream_now_tool(ws)``: "dream now", a full night under the workspace lock, exactly as the schedule runs it. It
  never blocks the caller's event loop: the lock is awaited in a worker thread, or, with ``wait=False``, a held lock
  is answered at once with "busy: run <id> is dreaming". Its answer is the night's diary entry, with the night's
  report (:class:`~dreaming.night.NightReport`, as JSON) as the tool's artifact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from dreaming.errors import LockBusyError, OutsideWorkspaceError
from dreaming.memory import Workspace
from dreaming.memory.gaps import record_gap
from dreaming.memory.insights import active_insights, load_prior_insights
from dreaming.night import NightReport, adream, busy_answer, dream
from dreaming.tools.memory_search import memory_search_tool

__all__ = ["dream_now_tool", "memory_search_tool", "prior_insights_tool", "record_gap_tool"]

Clock = Callable[[], datetime]
"""The time a tool stamps on what it records; the real clock (UTC) by default."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class _NoArgs(BaseModel):
    pass


class _InsightArgs(BaseModel):
    asset: str | None = Field(default=None, description="Only insights about this asset (e.g. NASDAQ).")
    regime: str | None = Field(default=None, description="Only insights for this market regime (e.g. uptrend).")


class _GapArgs(BaseModel):
    question: str = Field(description="The question the memory could not answer, as you would search for it.")


def dream_now_tool(
    ws: Workspace, *, env: Mapping[str, str] | None = None, clock: Clock | None = None, wait: bool = True
) -> BaseTool:
    """Return the "dream now" tool: one night on ``ws`` now, answered with its diary entry (report as artifact).

    Args:
        ws: the workspace.
        env: where keys and model settings are read; ``os.environ`` by default.
        clock: the night's 'now'; the real clock by default.
        wait: wait for a run that holds the workspace (off the event loop); False answers "busy" at once.
    """
    now = clock or _utc_now

    def answer(report: NightReport) -> tuple[str, dict[str, Any]]:
        return report.diary_entry, report.to_json()

    def dream_now() -> tuple[str, dict[str, Any] | None]:
        try:
            return answer(dream(ws, now=now(), env=env, trigger="now", wait=wait))
        except LockBusyError as exc:
            return busy_answer(ws, exc), None
        except OutsideWorkspaceError as exc:
            return f"Not now: {exc}", None

    async def adream_now() -> tuple[str, dict[str, Any] | None]:
        try:
            return answer(await adream(ws, now=now(), env=env, trigger="now", wait=wait))
        except LockBusyError as exc:
            return busy_answer(ws, exc), None
        except OutsideWorkspaceError as exc:
            return f"Not now: {exc}", None

    return StructuredTool.from_function(
        func=dream_now,
        coroutine=adream_now,
        name="dream_now",
        description="Consolidate memory now (a full dreaming night): promote proven patterns and recalls, retire "
        "stale ones, research open knowledge gaps. Returns the night's diary entry.",
        args_schema=_NoArgs,
        response_format="content_and_artifact",
    )


def record_gap_tool(ws: Workspace, *, clock: Clock | None = None) -> BaseTool:
    """Return a tool with which the agent records a question its memory could not answer (the night researches it)."""
    now = clock or _utc_now

    def record(question: str) -> str:
        gap = record_gap(ws, question, "no_results", best_score=0.0, now=now())
        return f"Recorded the knowledge gap {gap.query!r} (asked {gap.count} time(s)); a night will research it."

    return StructuredTool.from_function(
        func=record,
        name="record_gap",
        description="Record a question your memory could not answer, so that tonight's dreaming researches it.",
        args_schema=_GapArgs,
    )


def prior_insights_tool(ws: Workspace) -> BaseTool:
    """Return a tool that gives the active insights as prompt text.

    Its wording is generic; only when the workspace holds verdict insights does it offer to filter by asset or market
    regime.
    """
    has_verdicts = any("verdict" in insight.front for insight in active_insights(ws))

    def prior_insights(asset: str | None = None, regime: str | None = None) -> str:
        return load_prior_insights(ws, asset=asset, regime=regime).text or "No active insights."

    description = "Read what this agent's memory has learned and verified over past nights (its insights)."
    if has_verdicts:
        description += " Optionally only those about an asset or a market regime (committee verdict patterns)."
    return StructuredTool.from_function(
        func=prior_insights,
        name="prior_insights",
        description=description,
        args_schema=_InsightArgs if has_verdicts else _NoArgs,
    )
