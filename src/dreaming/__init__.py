"""dreaming: a memory for LLM agents that learns while they sleep.

The curated public surface, pinned by ``tests/test_public_surface.py``. Names load on first use, so that
``import dreaming.memory`` (the deterministic core) pulls in no LangGraph and no LLM client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dreaming._lazy import lazy_exports
from dreaming._version import __version__

if TYPE_CHECKING:
    from dreaming.chat import dream_now_tool, memory_search_tool, prior_insights_tool, record_gap_tool
    from dreaming.config import DreamingConfig, load_config
    from dreaming.errors import DreamingError
    from dreaming.llm import FakeChatModel, LLMGateway, build_gateway
    from dreaming.memory import Workspace, init_workspace
    from dreaming.memory.gaps import record_gap
    from dreaming.memory.insights import PriorInsights, load_prior_insights
    from dreaming.night import NightReport, adream, dream
    from dreaming.tools.memory_search import search_and_record

__all__ = [
    "DreamingConfig",
    "DreamingError",
    "FakeChatModel",
    "LLMGateway",
    "NightReport",
    "PriorInsights",
    "Workspace",
    "__version__",
    "adream",
    "build_gateway",
    "dream",
    "dream_now_tool",
    "init_workspace",
    "load_config",
    "load_prior_insights",
    "memory_search_tool",
    "prior_insights_tool",
    "record_gap",
    "record_gap_tool",
    "search_and_record",
]

_HOMES = {
    "DreamingConfig": "dreaming.config",
    "load_config": "dreaming.config",
    "DreamingError": "dreaming.errors",
    "Workspace": "dreaming.memory",
    "init_workspace": "dreaming.memory",
    "record_gap": "dreaming.memory.gaps",
    "search_and_record": "dreaming.tools.memory_search",
    "PriorInsights": "dreaming.memory.insights",
    "load_prior_insights": "dreaming.memory.insights",
    "FakeChatModel": "dreaming.llm",
    "LLMGateway": "dreaming.llm",
    "build_gateway": "dreaming.llm",
    "NightReport": "dreaming.night",
    "adream": "dreaming.night",
    "dream": "dreaming.night",
    "dream_now_tool": "dreaming.chat",
    "prior_insights_tool": "dreaming.chat",
    "memory_search_tool": "dreaming.chat",
    "record_gap_tool": "dreaming.chat",
}
"""Each public name -> the module that is its one home."""


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
