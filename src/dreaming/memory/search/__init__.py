"""Memory search: an embedded SQLite FTS5 index over the workspace's markdown, with exact line ranges.

Dreaming's own output is never indexed (OpenClaw #67580, #75842). Recording a search's recall and knowledge gap is
the tools layer's job (``dreaming.tools.search_and_record``): this package knows nothing of recall or gaps.
"""

from __future__ import annotations

from dreaming.memory.search._chunks import Chunk, chunk_markdown, is_dreaming_output, iter_memory_files
from dreaming.memory.search._index import IndexRefresh, open_index, refresh_index
from dreaming.memory.search._search import MemoryIndex, SearchHit, search_index, search_memory
from dreaming.memory.search._terms import query_terms, salient_terms, term_coverage

__all__ = [
    "Chunk",
    "IndexRefresh",
    "MemoryIndex",
    "SearchHit",
    "chunk_markdown",
    "is_dreaming_output",
    "iter_memory_files",
    "open_index",
    "query_terms",
    "refresh_index",
    "salient_terms",
    "search_index",
    "search_memory",
    "term_coverage",
]
