from langgraph.pregel.main import NodeBuilder, Pregel

__all__ = ("Pregel", "NodeBuilder")
