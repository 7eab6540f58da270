"""Search the memory: BM25 ranking from FTS5, turned into a deterministic score in [0, 1].

The score of a hit is::

    score = coverage * (RELEVANCE_FLOOR + (1 - RELEVANCE_FLOOR) * bm25 / best_bm25)

``coverage`` is the fraction of the query's salient terms (stop words removed) that the chunk contains, and
``bm25 / best_bm25`` is the hit's BM25 relative to the best BM25 among the candidates (both are negative in FTS5,
so the ratio is in (0, 1]). A chunk holding every salient term scores between 0.6 and 1 (1 for the best-ranked
such chunk); a chunk holding one term of three scores at most 0.33. Raw BM25 is deliberately not mapped to an
absolute scale: its magnitude depends on the size of the corpus, and in a workspace of a dozen notes even a
perfect match has a BM25 near zero. Ties are broken by path and line, so the same index and query always give
the same list.

That is the exact search (``chunks_fts``). The morphological table (``chunks_morph``: stems, CJK bigrams, harder
folding; see ``memory/_terms.py``) is searched next with the query's morphological terms, and a chunk it finds
scores by the same formula over those terms, times :data:`MORPH_SCORE_FACTOR`::

    morph_score = MORPH_SCORE_FACTOR * morph_coverage * (RELEVANCE_FLOOR + (1 - RELEVANCE_FLOOR) * bm25 / best_bm25)

A chunk found both ways keeps the higher of its two scores. Since the factor equals :data:`RELEVANCE_FLOOR`, a morph
score is at most 0.6, the least a chunk holding every salient term exactly scores: such chunks keep today's scores
and order, above every chunk that needs morphology. Morphology only adds chunks the exact search missed (``limits``
finds "the rate limit", ``备份`` finds "明天检查备份任务") and lifts a chunk it covers better than the exact words do.

With ``semantic=True`` (``[search] semantic``, and the ``semantic`` extra installed; see ``_semantic.py``) a third
pass compares the query's embedding with every chunk's, and a chunk at least
:data:`~dreaming.memory.search._semantic.SEMANTIC_MIN_SIMILARITY` similar scores::

    semantic_score = SEMANTIC_SCORE_FACTOR * (RELEVANCE_FLOOR + (1 - RELEVANCE_FLOOR) * (similarity - min) / (1 - min))

where ``min`` is that threshold (0.45): from 0.36 at the threshold to 0.6 at similarity 1, so a convincing semantic
hit is not a weak answer (``LOW_CONFIDENCE``, 0.35), no semantic score passes a chunk holding every term exactly, and
a less similar chunk is not returned at all. It adds chunks that share no word or stem with the query ("vehicle
engine trouble" finds "My automobile stopped working on the highway"); a chunk found several ways keeps its highest
score.

It also holds :class:`MemoryIndex`, a long-lived handle for callers that search many times (a research night, an
agent). ``search_memory`` opens the index and refreshes it before each query; ``MemoryIndex`` keeps the index open
and re-checks the files at most once every ``max_staleness_s`` seconds, so a burst of searches pays for one check.
Either refresh follows the index's rule (``_index.py``): every folder's stamp, MEMORY.md and the notes most recently
changed are checked each time, and every note once the last look at every note is older than
:data:`~dreaming.memory.search._index.FULL_LOOK_INTERVAL_S` (30 s), so a note edited in place is found within that.
"""

from __future__ import annotations

import heapq
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Literal

from dreaming.memory._terms import (
    fts_match_expression,
    index_ascii_coverage,
    index_needles,
    index_salient_terms,
    morph_needles,
    morph_salient_terms,
    needle_coverage,
)
from dreaming.memory.search._index import FULL_LOOK_INTERVAL_S, IndexRefresh, open_index, refresh_index
from dreaming.memory.search._semantic import SEMANTIC_MIN_SIMILARITY, load_embedder, nearest_chunks, update_vectors
from dreaming.memory.workspace import Workspace

__all__ = [
    "CANDIDATES_SQL",
    "CANDIDATE_FACTOR",
    "DEFAULT_MAX_STALENESS_S",
    "MORPH_SCORE_FACTOR",
    "RELEVANCE_FLOOR",
    "SEMANTIC_SCORE_FACTOR",
    "SNIPPET_MAX_CHARS",
    "MemoryIndex",
    "SearchHit",
    "search_index",
    "search_memory",
    "semantic_score",
]

RELEVANCE_FLOOR = 0.6
"""The share of the score that full term coverage earns regardless of BM25 rank."""

MORPH_SCORE_FACTOR = RELEVANCE_FLOOR
"""A chunk found by the morphological table scores this fraction of what the same formula gives an exact match.

Equal to :data:`RELEVANCE_FLOOR` so that no morph score passes a chunk that holds every term exactly (see the module
docstring), and high enough that the best chunk holding two thirds of the terms by morphology (0.4) is not a weak
answer for gap classification (``LOW_CONFIDENCE``, 0.35)."""

SEMANTIC_SCORE_FACTOR = RELEVANCE_FLOOR
"""A semantic hit scores this fraction of what a full-coverage match at the same relative rank scores (see the module
docstring): its score is at most 0.6, the least a chunk holding every term exactly scores, and at least 0.36 (0.6 x 0.6,
at the similarity threshold), above ``LOW_CONFIDENCE`` (0.35): a semantic hit is returned only when convincing."""

CANDIDATE_FACTOR = 4
"""BM25 picks ``limit * CANDIDATE_FACTOR`` candidates from each table, which are then re-ranked by score."""

SNIPPET_MAX_CHARS = 700
"""A hit's snippet is its chunk's text, cut to this many characters."""

_SCORE_DIGITS = 4  # a hit's score is rounded, so that the same index and query give the same JSON

DEFAULT_MAX_STALENESS_S = 2.0
"""How old the last check of the files may be before a :class:`MemoryIndex` search checks them again."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One chunk of memory that matched a query; the recall store records it as is (``RecallResult``)."""

    path: str
    """Workspace-relative POSIX path of the file."""
    start_line: int
    """First line of the chunk, 1-based."""
    end_line: int
    """Last line of the chunk, 1-based and inclusive."""
    score: float
    """How well the chunk answers the query, in [0, 1] (see the module docstring)."""
    snippet: str
    """The chunk's text, at most :data:`SNIPPET_MAX_CHARS` characters."""
    source: Literal["memory"] = "memory"
    """Where the hit comes from; always ``"memory"`` for this index."""

    def to_json(self) -> dict[str, object]:
        """Return the hit as the JSON object of the spec."""
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": self.score,
            "snippet": self.snippet,
            "source": self.source,
        }


def _snippet(text: str) -> str:
    text = text.strip()
    return text if len(text) <= SNIPPET_MAX_CHARS else text[: SNIPPET_MAX_CHARS - 1].rstrip() + "…"


CANDIDATES_SQL = (
    "SELECT c.id, c.path, c.start_line, c.end_line, c.text, t.rank FROM {table} AS t"
    " JOIN chunks AS c ON c.id = t.rowid WHERE {table} MATCH ? ORDER BY t.rank, c.path, c.start_line LIMIT ?"
)
"""The FTS5 query of one table (``chunks_fts`` or ``chunks_morph``): its best chunks, ties broken by path and line."""


_CANDIDATES = {table: CANDIDATES_SQL.format(table=table) for table in ("chunks_fts", "chunks_morph")}

# A row of CANDIDATES_SQL: ``(id, path, start_line, end_line, text, bm25)``.
_Row = tuple[int, str, int, int, str, float]


def _candidates(conn: sqlite3.Connection, table: str, expression: str, count: int) -> list[_Row]:
    # The best ``count`` chunks that ``table`` matches, best first. Their terms are looked up afterwards, for the rows
    # that need them (``_stored_terms``): in the FTS5 query, every match would pay for the lookup before the sort.
    rows: list[_Row] = conn.execute(_CANDIDATES[table], (expression, count)).fetchall()
    return rows


def _stored_terms(conn: sqlite3.Connection, column: str, ids: list[int]) -> dict[int, str]:
    # The ``column`` of ``chunk_terms`` (``words`` or ``stems``) of the chunks ``ids``.
    if not ids:
        return {}
    sql = f"SELECT id, {column} FROM chunk_terms WHERE id IN ({','.join('?' * len(ids))})"
    return dict(conn.execute(sql, ids).fetchall())


def _shown(score: float) -> float:
    # A hit's score as it is returned and ordered: clamped to [0, 1] and rounded.
    return round(score if 0.0 <= score <= 1.0 else min(1.0, max(0.0, score)), _SCORE_DIGITS)


# A chunk found: ``(-shown score, path, start, end, text, score)``, in the order of the hits (path and start line
# make it unique, so the tuples themselves sort; the unrounded score is what later passes compare).
_Found = tuple[float, str, int, int, str, float]


def _ranked(found: Iterable[_Found], limit: int) -> list[SearchHit]:
    return [
        SearchHit(path=path, start_line=start, end_line=end, score=-negated, snippet=_snippet(text))
        for negated, path, start, end, text, _ in sorted(found)[:limit]
    ]


def _shares(rows: list[_Row]) -> list[float]:
    # The rank share of each row, ``RELEVANCE_FLOOR + (1 - RELEVANCE_FLOOR) * bm25 / best_bm25``: its score with full
    # coverage. The rows come best first, so these only fall.
    best = min((float(row[5]) for row in rows), default=0.0)
    if best >= 0:
        return [RELEVANCE_FLOOR + (1 - RELEVANCE_FLOOR) * 1.0] * len(rows)
    return [RELEVANCE_FLOOR + (1 - RELEVANCE_FLOOR) * (float(row[5]) / best) for row in rows]


def _keep(cutoff: list[float], shown: float, limit: int) -> float:
    # Add a score to the min-heap of the best ``limit``; return the least of them once it holds ``limit``, else -1.
    if len(cutoff) < limit:
        heapq.heappush(cutoff, shown)
        return cutoff[0] if len(cutoff) == limit else -1.0
    heapq.heappushpop(cutoff, shown)
    return cutoff[0]


def semantic_score(similarity: float) -> float:
    """Return the score of a chunk the semantic pass found at ``similarity`` (see the module docstring)."""
    above = (similarity - SEMANTIC_MIN_SIMILARITY) / (1 - SEMANTIC_MIN_SIMILARITY)
    return SEMANTIC_SCORE_FACTOR * (RELEVANCE_FLOOR + (1 - RELEVANCE_FLOOR) * above)


def _add_semantic(conn: sqlite3.Connection, query: str, found: dict[int, _Found], count: int) -> None:
    # The semantic pass: the ``count`` chunks nearest the query, each keeping the higher of its scores. Without the
    # extra (``load_embedder`` has warned once), the keyword passes have answered.
    embedder = load_embedder()
    if embedder is None:
        return
    update_vectors(conn, embedder)
    near = nearest_chunks(conn, embedder, query, count=count, min_similarity=SEMANTIC_MIN_SIMILARITY)
    scores = {chunk_id: semantic_score(similarity) for chunk_id, similarity in near}
    wanted = [chunk_id for chunk_id, score in scores.items() if chunk_id not in found or score > found[chunk_id][5]]
    if not wanted:
        return
    sql = f"SELECT id, path, start_line, end_line, text FROM chunks WHERE id IN ({','.join('?' * len(wanted))})"
    for chunk_id, path, start, end, text in conn.execute(sql, wanted).fetchall():
        score = scores[chunk_id]
        found[chunk_id] = (-_shown(score), path, start, end, text, score)


def search_index(conn: sqlite3.Connection, query: str, *, limit: int = 8, semantic: bool = False) -> list[SearchHit]:
    """Search an already refreshed index, exactly then morphologically (then semantically); see :func:`search_memory`.

    Candidates come in BM25 order, so the most the next one can score (its coverage taken as 1) only falls, while
    the ``limit``-th best score found so far (``cutoff[0]``, a min-heap of the best) only rises: once a candidate
    cannot reach it, even tied as shown (a tie might be won on the path), neither it nor any after it is returned,
    and their coverage is not computed. The heap holds one score per chunk, as first found: a chunk whose morph score
    later passes its exact one keeps its lower score there, which only makes the cutoff lower, never wrong.

    A chunk's coverage is read from its stored terms (``chunk_terms``), except where it costs less another way with
    the same result: the index terms of an ASCII text are read from the text itself (:func:`index_ascii_coverage`),
    and a chunk that the morphological table matches for a query of one morphological term holds that term (the
    table and ``chunk_terms`` are fed the same tokens, which hold no character FTS5's ``ascii`` tokenizer splits at).

    With ``semantic`` the semantic pass runs last (when the extra is installed; else one warning, and keywords only),
    computing first the vectors of chunks that have none (it writes them to the index).
    """
    terms = index_salient_terms(query)
    if not terms or limit <= 0:
        return []
    count = limit * CANDIDATE_FACTOR
    found: dict[int, _Found] = {}
    cutoff: list[float] = []
    least = -1.0  # cutoff[0] once the heap holds ``limit`` scores; below any score until then
    rows = _candidates(conn, "chunks_fts", fts_match_expression(terms), count)
    stored = _stored_terms(conn, "words", [row[0] for row in rows if not row[4].isascii()])
    needles = index_needles(terms)
    for (chunk_id, path, start, end, text, _), most in zip(rows, _shares(rows), strict=True):
        if _shown(most) < least:
            break
        words = stored.get(chunk_id)
        if words is None and text.isascii():
            score = index_ascii_coverage(terms, text) * most
        else:
            score = needle_coverage(needles, words or "") * most
        shown = _shown(score)
        found[chunk_id] = (-shown, path, start, end, text, score)
        least = _keep(cutoff, shown, limit)
    # A morph or semantic score is at most MORPH_SCORE_FACTOR (= SEMANTIC_SCORE_FACTOR): it can neither pass nor lift
    # an exact score above that, so when ``limit`` chunks score above it neither pass can change the answer.
    if least > MORPH_SCORE_FACTOR:
        return _ranked(found.values(), limit)
    morph_terms = morph_salient_terms(query)
    if not morph_terms:  # stop words alone: the exact search has answered
        return _ranked(found.values(), limit)
    rows = _candidates(conn, "chunks_morph", fts_match_expression(morph_terms, prefix=False), count)
    shares = _shares(rows)
    mosts = [MORPH_SCORE_FACTOR * share for share in shares]
    del rows[next((n for n, most in enumerate(mosts) if _shown(most) < least), len(rows)) :]  # never reached
    single = len(morph_terms) == 1
    # The stems of the rows that may be scored, but not of those that hold every term exactly (skipped below).
    wanted = [row[0] for row in rows if row[0] not in found or found[row[0]][5] <= MORPH_SCORE_FACTOR]
    stored = {} if single else _stored_terms(conn, "stems", wanted)
    needles = morph_needles(morph_terms)
    for (chunk_id, path, start, end, text, _), share, most in zip(rows, shares, mosts, strict=False):
        if _shown(most) < least:
            break
        known = found.get(chunk_id)
        if known is not None and known[5] > MORPH_SCORE_FACTOR:
            continue
        coverage = 1.0 if single else needle_coverage(needles, stored.get(chunk_id, ""))
        score = MORPH_SCORE_FACTOR * coverage * share
        shown = _shown(score)
        if known is None:
            least = _keep(cutoff, shown, limit)
        if known is None or score > known[5]:
            found[chunk_id] = (-shown, path, start, end, text, score)
    if semantic:
        _add_semantic(conn, query, found, count)
    return _ranked(found.values(), limit)


def search_memory(ws: Workspace, query: str, *, limit: int = 8, semantic: bool = False) -> list[SearchHit]:
    """Search the workspace's memory, refreshing the index incrementally first; best hits first.

    The refresh finds at once a note added, removed or renamed, and an edit to MEMORY.md or to one of the notes most
    recently changed; any other note edited in place is found once the last look at every note is older than
    ``FULL_LOOK_INTERVAL_S`` (30 s), when the refresh ``stat``-s every note again (see ``_index.py``).

    Dreaming's own output (DREAMS.md, ``memory/dreaming/``, ``memory/.dreams/``) is never indexed, so it is never
    returned. An empty query, or one with no letters or digits, returns no hits. ``semantic`` adds the semantic pass
    (:func:`search_index`).

    Raises:
        ToolError: the index cannot be opened at all.
    """
    conn = open_index(ws)
    try:
        refresh_index(ws, conn, full_look_every_s=FULL_LOOK_INTERVAL_S)
        return search_index(conn, query, limit=limit, semantic=semantic)
    finally:
        conn.close()


class MemoryIndex:
    """An open memory index that refreshes itself lazily; safe to share between threads.

    ``semantic`` adds the semantic pass to its searches (:func:`search_index`).
    """

    def __init__(
        self,
        ws: Workspace,
        *,
        max_staleness_s: float = DEFAULT_MAX_STALENESS_S,
        clock: Callable[[], float] = time.monotonic,
        semantic: bool = False,
    ) -> None:
        self._ws = ws
        self._semantic = semantic
        self._max_staleness_s = max_staleness_s
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._checked_at: float | None = None

    def refresh(self) -> IndexRefresh:
        """Re-check every file now (a full look: every note ``stat``-ed) and re-index what changed."""
        with self._lock:
            return self._refresh_locked(full_look_every_s=0.0)

    def _refresh_locked(self, *, full_look_every_s: float) -> IndexRefresh:
        if self._conn is None:
            self._conn = open_index(self._ws)
        result = refresh_index(self._ws, self._conn, full_look_every_s=full_look_every_s)
        self._checked_at = self._clock()
        return result

    def search(self, query: str, *, limit: int = 8) -> list[SearchHit]:
        """Search, re-checking the files first when the last check is older than the staleness bound.

        The check is the one-off search's (:func:`search_memory`): every note is ``stat``-ed only when the last full
        look recorded in the index is older than ``FULL_LOOK_INTERVAL_S``.
        """
        with self._lock:
            if (
                self._conn is None
                or self._checked_at is None
                or self._clock() - self._checked_at > self._max_staleness_s
            ):
                self._refresh_locked(full_look_every_s=FULL_LOOK_INTERVAL_S)
            assert self._conn is not None
            return search_index(self._conn, query, limit=limit, semantic=self._semantic)

    def close(self) -> None:
        """Close the index."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
