"""LangGraph wiring: the state, the context, the nodes and the built graphs (the night, the research subgraph)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dreaming._lazy import lazy_exports

if TYPE_CHECKING:
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

_HOMES = {
    "build_dream_graph": "dreaming.graph.build",
    "build_research_graph": "dreaming.graph.build",
    "DreamContext": "dreaming.graph.context",
    "ProgressFn": "dreaming.graph.context",
    "DreamState": "dreaming.graph.state",
    "jsonable": "dreaming.graph.state",
    "VerifyResult": "dreaming.graph.verify",
    "verify_insights": "dreaming.graph.verify",
    "verify_insights_detailed": "dreaming.graph.verify",
}
"""Each public name -> the module that is its one home. Names load on first use, so that ``jsonable`` and the
state pull in no LangGraph."""


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
