"""LangGraph wiring only: state, context, nodes, the built graphs."""

from __future__ import annotations

from dreaming.graph._research_deps import ChatAnswer, ResearchChat, ResearchDeps
from dreaming.graph.build import build_dream_graph
from dreaming.graph.context import DreamContext, ModelAccess, NarrateFn, NoModels, ProgressFn, VerifyFn
from dreaming.graph.research import promote_research
from dreaming.graph.state import DreamState

__all__ = [
    "ChatAnswer",
    "DreamContext",
    "DreamState",
    "ModelAccess",
    "NarrateFn",
    "NoModels",
    "ProgressFn",
    "ResearchChat",
    "ResearchDeps",
    "VerifyFn",
    "build_dream_graph",
    "promote_research",
]
