"""dreaming: a memory for LLM agents that learns while they sleep."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
