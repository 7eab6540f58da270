"""One module per outside system (ripgrep, Tavily, the memory index), each behind a small protocol with a fake."""

from __future__ import annotations

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
