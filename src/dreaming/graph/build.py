"""Build the nightly graph. Wiring only: what each node does lives in ``nodes.py`` and ``memory/``.

::

    START -> light -> rem -> budget_verify -> [verify] -> deep -> budget_narrative -> [narrative] -> diary -> END

A ``budget_*`` node stands before every node that calls a model and routes either to it or past it, recording
why in ``halts``.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from dreaming.graph import nodes
from dreaming.graph.context import DreamContext
from dreaming.graph.state import DreamState

__all__ = ["build_dream_graph"]


def build_dream_graph() -> StateGraph[DreamState, DreamContext, DreamState, DreamState]:
    """Return the (uncompiled) nightly graph."""
    graph = StateGraph(DreamState, context_schema=DreamContext)
    graph.add_node("light", nodes.light)
    graph.add_node("rem", nodes.rem)
    graph.add_node("budget_verify", nodes.budget_verify, destinations=("verify", "deep"))
    graph.add_node("verify", nodes.verify)
    graph.add_node("deep", nodes.deep)
    graph.add_node("budget_narrative", nodes.budget_narrative, destinations=("narrative", "diary"))
    graph.add_node("narrative", nodes.narrative)
    graph.add_node("diary", nodes.diary)
    graph.add_edge(START, "light")
    graph.add_edge("light", "rem")
    graph.add_edge("rem", "budget_verify")
    graph.add_edge("verify", "deep")
    graph.add_edge("deep", "budget_narrative")
    graph.add_edge("narrative", "diary")
    graph.add_edge("diary", END)
    return graph
