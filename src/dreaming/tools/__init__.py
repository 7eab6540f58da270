"""One module per outside system (ripgrep, Tavily, the memory index), each behind a small protocol with a fake."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dreaming._lazy import lazy_exports

if TYPE_CHECKING:
    from dreaming.tools.codebase import (
        SECRET_GLOBS,
        CodebaseSearch,
        FakeCodebaseSearch,
        RipgrepSearch,
        codebase_search_tool,
        find_rg,
        is_secret_path,
    )
    from dreaming.tools.memory_search import (
        FakeMemorySearch,
        MemorySearch,
        SearchOutcome,
        WorkspaceMemorySearch,
        hits_to_json,
        memory_search_tool,
        search_and_record,
    )
    from dreaming.tools.web import FakeWebSearch, TavilyWebSearch, WebSearch, web_search_from_env, web_search_tool

__all__ = [
    "SECRET_GLOBS",
    "CodebaseSearch",
    "FakeCodebaseSearch",
    "FakeMemorySearch",
    "FakeWebSearch",
    "MemorySearch",
    "RipgrepSearch",
    "SearchOutcome",
    "TavilyWebSearch",
    "WebSearch",
    "WorkspaceMemorySearch",
    "codebase_search_tool",
    "find_rg",
    "hits_to_json",
    "is_secret_path",
    "memory_search_tool",
    "search_and_record",
    "web_search_from_env",
    "web_search_tool",
]

_HOMES = {
    "SECRET_GLOBS": "dreaming.tools.codebase",
    "CodebaseSearch": "dreaming.tools.codebase",
    "FakeCodebaseSearch": "dreaming.tools.codebase",
    "RipgrepSearch": "dreaming.tools.codebase",
    "codebase_search_tool": "dreaming.tools.codebase",
    "find_rg": "dreaming.tools.codebase",
    "is_secret_path": "dreaming.tools.codebase",
    "FakeMemorySearch": "dreaming.tools.memory_search",
    "MemorySearch": "dreaming.tools.memory_search",
    "SearchOutcome": "dreaming.tools.memory_search",
    "WorkspaceMemorySearch": "dreaming.tools.memory_search",
    "hits_to_json": "dreaming.tools.memory_search",
    "memory_search_tool": "dreaming.tools.memory_search",
    "search_and_record": "dreaming.tools.memory_search",
    "FakeWebSearch": "dreaming.tools.web",
    "TavilyWebSearch": "dreaming.tools.web",
    "WebSearch": "dreaming.tools.web",
    "web_search_from_env": "dreaming.tools.web",
    "web_search_tool": "dreaming.tools.web",
}
"""Each public name -> the module that is its one home. Names load on first use, so that ``dreaming search``
pulls in no Tavily and no LangChain, and one tool does not load another's client."""


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
