"""Memory search: an embedded SQLite FTS5 index over the workspace's markdown, with exact line ranges.

Dreaming's own output is never indexed (OpenClaw #67580, #75842). ``search_and_record`` also records the recall
and, when the search finds nothing or little, a knowledge gap.
"""

from __future__ import annotations

from dreaming.memory.search._chunks import Chunk, chunk_markdown, is_dreaming_output, iter_memory_files
from dreaming.memory.search._index import IndexRefresh, open_index, refresh_index
from dreaming.memory.search._record import SearchOutcome, search_and_record
from dreaming.memory.search._search import SearchHit, search_index, search_memory
from dreaming.memory.search._session import MemoryIndex
from dreaming.memory.search._terms import query_terms, salient_terms, term_coverage

__all__ = [
    "Chunk",
    "IndexRefresh",
    "MemoryIndex",
    "SearchHit",
    "SearchOutcome",
    "chunk_markdown",
    "is_dreaming_output",
    "iter_memory_files",
    "open_index",
    "query_terms",
    "refresh_index",
    "salient_terms",
    "search_and_record",
    "search_index",
    "search_memory",
    "term_coverage",
]
