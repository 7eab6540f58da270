"""Memory search: an embedded SQLite FTS5 index over the workspace's markdown, with exact line ranges.

Dreaming's own output is never indexed (OpenClaw #67580, #75842). Recording a search's recall and knowledge gap is
the tools layer's job (``dreaming.tools.search_and_record``): this package knows nothing of recall or gaps.
``salient_terms`` and ``term_coverage`` are the index terms of ``memory/_terms.py`` (``index_salient_terms``,
``index_term_coverage``), exported under their historical names.
"""

from __future__ import annotations

from dreaming.memory._terms import index_salient_terms as salient_terms
from dreaming.memory._terms import index_term_coverage as term_coverage
from dreaming.memory._terms import query_terms
from dreaming.memory.search._chunks import Chunk, chunk_markdown, is_dreaming_output, iter_memory_files
from dreaming.memory.search._index import IndexRefresh, open_index, refresh_index
from dreaming.memory.search._search import MemoryIndex, SearchHit, search_index, search_memory

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
