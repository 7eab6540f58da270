"""Memory search: an embedded SQLite FTS5 index over the workspace's markdown, with exact line ranges.

Dreaming's own output is never indexed (OpenClaw #67580, #75842). Recording a search's recall and knowledge gap is
the tools layer's job (``dreaming.tools.search_and_record``): this package knows nothing of recall or gaps.
Its terms are the index terms of ``memory/_terms.py`` (``index_*``: what FTS5's tokenizer sees) and, in a second
table, the morphological ones (``morph_*``: stems, CJK bigrams, harder folding), not research's stemmed ones.
With ``semantic=True`` (``[search] semantic``) a search adds chunks near the query by embedding (``_semantic.py``:
the optional ``semantic`` extra, whose model ships in its wheel).
"""

from __future__ import annotations

from dreaming.memory._terms import index_salient_terms, index_term_coverage, query_coverage, query_terms
from dreaming.memory.search._chunks import Chunk, chunk_markdown, is_dreaming_output, iter_memory_files
from dreaming.memory.search._index import IndexRefresh, open_index, refresh_index
from dreaming.memory.search._search import MemoryIndex, SearchHit, search_index, search_memory
from dreaming.memory.search._semantic import semantic_installed

__all__ = [
    "Chunk",
    "IndexRefresh",
    "MemoryIndex",
    "SearchHit",
    "chunk_markdown",
    "index_salient_terms",
    "index_term_coverage",
    "is_dreaming_output",
    "iter_memory_files",
    "open_index",
    "query_coverage",
    "query_terms",
    "refresh_index",
    "search_index",
    "search_memory",
    "semantic_installed",
]
