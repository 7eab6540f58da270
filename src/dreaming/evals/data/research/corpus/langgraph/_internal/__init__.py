"""Internal modules for LangGraph.

This module is not part of the public API, and thus stability is not guaranteed.
"""
