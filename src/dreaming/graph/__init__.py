"""LangGraph wiring: the state, the context, the nodes and the built graphs (the night, the research subgraph)."""

from __future__ import annotations

from dreaming.graph.build import build_dream_graph, build_research_graph
from dreaming.graph.context import DreamContext, ProgressFn
from dreaming.graph.state import DreamState, jsonable
from dreaming.graph.verify import VerifyResult, verify_insights, verify_insights_detailed

__all__ = [
    "DreamContext",
    "DreamState",
    "ProgressFn",
    "VerifyResult",
    "build_dream_graph",
    "build_research_graph",
    "jsonable",
    "verify_insights",
    "verify_insights_detailed",
]
