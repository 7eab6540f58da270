"""LangGraph wiring only: state, context, nodes, the built graphs."""

from __future__ import annotations

from dreaming.graph.build import build_dream_graph
from dreaming.graph.context import DreamContext, ModelAccess, NarrateFn, NoModels, ProgressFn, VerifyFn
from dreaming.graph.state import DreamState

__all__ = [
    "DreamContext",
    "DreamState",
    "ModelAccess",
    "NarrateFn",
    "NoModels",
    "ProgressFn",
    "VerifyFn",
    "build_dream_graph",
]
