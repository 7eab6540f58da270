"""Build the nightly graph and its research subgraph.

Wiring only: what each node does lives in ``nodes.py``, ``research.py``, ``research_gap.py``, ``verify.py`` and
``memory/``.

::

    START -> light -> rem -> research_select -> [research_gap x N] -> research_collect -> budget_verify
          -> [verify] -> deep -> budget_narrative -> [narrative] -> diary -> END

    research_gap (one gap, sent by research_select; its own state):
    START -> budget_research -> research -> validate -> keep | discard | abstain -> END

``research_select`` goes straight to ``budget_verify`` when autoresearch is off. A ``budget_*`` node stands before
every node that calls a model and routes either to it or past it, recording why in ``halts``; ``budget_research``
runs the candidate checks for its gap, and the gateway checks every call again. Every node has an explicit retry
policy that retries nothing: the tools
retry exactly the errors worth retrying themselves (timeouts, 429, 5xx), and LangGraph's default would retry the
wrong ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy

from dreaming.graph import nodes, research
from dreaming.graph import research_gap as gap
from dreaming.graph.context import DreamContext
from dreaming.graph.state import DreamState
from dreaming.memory import before_write

__all__ = ["NO_RETRY", "Checkpointer", "build_dream_graph", "build_research_graph"]

NO_RETRY = RetryPolicy(max_attempts=1)
"""One attempt per node: a failure is recorded and the run resumes from its checkpoint, never blindly retried."""


def build_dream_graph(
    context_schema: type[DreamContext] = DreamContext,
) -> StateGraph[DreamState, DreamContext, DreamState, DreamState]:
    """Return the (uncompiled) nightly graph; ``context_schema`` may be a subclass that builds itself from JSON."""
    graph = StateGraph(DreamState, context_schema=context_schema)
    graph.add_node("light", nodes.light, retry_policy=NO_RETRY)
    graph.add_node("rem", nodes.rem, retry_policy=NO_RETRY)
    graph.add_node(
        "research_select",
        research.research_select,
        destinations=("research_gap", "research_collect", "budget_verify"),
        retry_policy=NO_RETRY,
    )
    # Each gap is sent to the compiled research subgraph, with its own state; its result joins the night's.
    research_gap: Any = build_research_graph().compile()
    graph.add_node("research_gap", research_gap, retry_policy=NO_RETRY)
    graph.add_node("research_collect", research.research_collect, retry_policy=NO_RETRY)
    graph.add_node("budget_verify", nodes.budget_verify, destinations=("verify", "deep"), retry_policy=NO_RETRY)
    graph.add_node("verify", nodes.verify, retry_policy=NO_RETRY)
    graph.add_node("deep", nodes.deep, retry_policy=NO_RETRY)
    graph.add_node(
        "budget_narrative", nodes.budget_narrative, destinations=("narrative", "diary"), retry_policy=NO_RETRY
    )
    graph.add_node("narrative", nodes.narrative, retry_policy=NO_RETRY)
    graph.add_node("diary", nodes.diary, retry_policy=NO_RETRY)
    graph.add_edge(START, "light")
    graph.add_edge("light", "rem")
    graph.add_edge("rem", "research_select")
    graph.add_edge("research_gap", "research_collect")
    graph.add_edge("research_collect", "budget_verify")
    graph.add_edge("verify", "deep")
    graph.add_edge("deep", "budget_narrative")
    graph.add_edge("narrative", "diary")
    graph.add_edge("diary", END)
    return graph


def build_research_graph() -> StateGraph[
    gap.GapResearchState, DreamContext, gap.GapResearchState, gap.GapResearchOutput
]:
    """Return the (uncompiled) research subgraph of one gap (see ``research_gap``)."""
    graph = StateGraph(gap.GapResearchState, context_schema=DreamContext, output_schema=gap.GapResearchOutput)
    graph.add_node("budget_research", gap.budget_research, destinations=("research", "discard"), retry_policy=NO_RETRY)
    graph.add_node("research", gap.research, destinations=("validate", "discard"), retry_policy=NO_RETRY)
    graph.add_node("validate", gap.validate, destinations=("keep", "discard", "abstain"), retry_policy=NO_RETRY)
    for name, node in (("keep", gap.keep), ("discard", gap.discard), ("abstain", gap.abstain)):
        graph.add_node(name, node, retry_policy=NO_RETRY)
        graph.add_edge(name, END)
    graph.add_edge(START, "budget_research")
    return graph


class Checkpointer(AsyncSqliteSaver):
    """The SQLite checkpointer, announcing its writes to the workspace's write seam (``memory.before_write``)."""

    path = Path("checkpoints.sqlite")

    async def aput(
        self, config: Any, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> Any:
        """Store a checkpoint, after the write seam allowed the write."""
        before_write(self.path)
        return await super().aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        """Store a task's pending writes, after the write seam allowed the write."""
        before_write(self.path)
        await super().aput_writes(config, writes, task_id, task_path)
