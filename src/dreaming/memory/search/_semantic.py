"""The search's optional semantic pass: static word embeddings from the ``semantic`` extra (wordllama), never fetched.

``[search] semantic = true`` adds it; without the extra installed the search stays keyword + morphology, and one
warning says so. The model is wordllama's ``l2_supercat`` at 256 dimensions, whose weights (16 MB) and tokenizer ship
inside the wordllama wheel: it installs from the package registry with ``pip install 'dreaming[semantic]'`` and is
read from the installed package, never downloaded (:func:`load_embedder`). A text's vector is the mean of its tokens'
embeddings, normalized: no neural network runs, so embedding a workspace costs milliseconds per thousand chunks.

The index (``_index.py``) keeps one vector per chunk in ``chunk_vectors`` (float32 bytes), computed from the redacted
chunk text it already holds and dropped with its chunk. :func:`update_vectors` fills the missing ones before a
semantic search, and clears them all when the embedder that made them (``meta`` key ``embedder``) is not this one.
:func:`nearest_chunks` compares the query's vector with every chunk's (brute force: a matrix product).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreaming.memory.search._index import _transaction

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "EMBED_BATCH",
    "EMBED_MAX_CHARS",
    "SEMANTIC_DIMS",
    "SEMANTIC_MIN_SIMILARITY",
    "SEMANTIC_MODEL",
    "Embedder",
    "load_embedder",
    "nearest_chunks",
    "semantic_installed",
    "update_vectors",
]

SEMANTIC_MODEL = "l2_supercat"
"""wordllama's default model, the one its wheel ships (``wordllama/weights/l2_supercat_256.safetensors``)."""

SEMANTIC_DIMS = 256
"""The dimensions of the shipped weights (wordllama truncates them Matryoshka-style; the wheel holds 256)."""

SEMANTIC_MIN_SIMILARITY = 0.45
"""A chunk whose cosine similarity to the query is at least this is a semantic hit; below it, it is not returned.

Calibrated on text nobody here wrote (``python -m bench semantic``, ``bench/bench_semantic.py``): the research eval's
71 answerable questions over pinned third-party source (langgraph, tenacity, typer, tiktoken; 6,290 chunks cut as
notes are), each against the chunk holding its expected lines (positives), against every chunk of the three other
projects (314,811 unrelated pairs) and against the questions about them (7,152 unrelated prose pairs). Unrelated
pairs' 99th percentile is 0.26 (chunks) and 0.31 (questions); at 0.45, 0.01% of unrelated chunk pairs and 0.03% of
unrelated question pairs pass, and 28% of the positives (most of the rest hold the question's words: the keyword
passes find them). Per pair that is rare, but a query meets every chunk: 14% of the questions still find at least one
unrelated chunk above 0.45 among the other projects' 4,700 (6% at 0.5, 34% at 0.4), which is why a semantic hit scores
at most 0.6 and why a best hit sharing no word with the query still leaves a ``partial_match`` gap. Paraphrases of
everyday notes land around 0.45-0.6 ("salary raise" / "Got a pay increase of five percent": 0.57)."""

EMBED_BATCH = 256
"""Chunks embedded per call (and written per transaction) while the index's vectors are filled."""

_VECTOR_BYTES = SEMANTIC_DIMS * 4  # a stored vector: float32s; a blob of another length is damage, computed again

EMBED_MAX_CHARS = 2_000
"""A text is embedded from its first this many characters. wordllama neither truncates nor streams: it pads a batch
to its longest text, so one 5 MB line in a note took 9 GB of memory and 15 s to embed. Chunks of prose and code run
to about 1,100 characters (the calibration corpus's longest), so no ordinary chunk is cut."""

_log = logging.getLogger(__name__)
_load_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Embedder:
    """A loaded model that turns texts into unit vectors."""

    id: str
    """What made the vectors (model, dimensions, wordllama release), stored in the index's ``meta`` as ``embedder``."""
    model: Any
    """The ``wordllama.WordLlamaInference``."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Return one unit vector (float32) per text, from its first :data:`EMBED_MAX_CHARS` characters; a row each.

        A text with no token gets a zero vector.
        """
        import numpy as np

        if not texts:
            return np.zeros((0, SEMANTIC_DIMS), dtype=np.float32)
        cut = [text[:EMBED_MAX_CHARS] for text in texts]
        vectors = np.asarray(self.model.embed(cut, norm=False), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: NDArray[np.float32] = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        return unit


def semantic_installed() -> bool:
    """Whether the ``semantic`` extra (wordllama) is importable, without importing it."""
    return importlib.util.find_spec("wordllama") is not None


def _import_wordllama() -> Any:
    # wordllama calls ``logging.basicConfig(level=INFO)`` on import; a library must not configure the root logger
    # (every INFO record of every library would then be printed), so its handlers and level are put back.
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    return wordllama


@functools.cache
def load_embedder() -> Embedder | None:
    """Load the shipped model once per process; None (with one warning) when the extra is missing or unusable.

    Loads only from the installed package: ``disable_download=True`` makes wordllama raise rather than fetch a file it
    does not find. Its ``load`` looks for the tokenizer in ``wordllama/tokenizer/`` while the wheel ships it in
    ``wordllama/tokenizers/`` (0.4.0.post1), where its cache lookup (``cache_dir/tokenizers/``) finds it: so the
    cache directory given is the package's own, and neither ``~/.cache`` nor the network is ever looked at.
    """
    with _load_lock:
        try:
            wordllama = _import_wordllama()
        except ImportError as exc:
            _log.warning(
                "[search] semantic = true, but the semantic extra is not installed (%s): keyword search only; "
                "pip install 'dreaming[semantic]' adds it",
                exc,
            )
            return None
        try:
            model = wordllama.WordLlama.load(
                SEMANTIC_MODEL,
                dim=SEMANTIC_DIMS,
                cache_dir=Path(wordllama.__file__).parent,
                disable_download=True,
            )
        except (OSError, ValueError) as exc:  # FileNotFoundError: a file missing from the installed package
            _log.warning(
                "[search] semantic = true, but wordllama's model cannot be loaded (%s): keyword search only", exc
            )
            return None
        return Embedder(id=f"wordllama {wordllama.__version__} {SEMANTIC_MODEL} {SEMANTIC_DIMS}", model=model)


def update_vectors(conn: sqlite3.Connection, embedder: Embedder) -> int:
    """Give every chunk of the index a vector by ``embedder``; return how many were computed.

    Vectors made by another embedder (the ``meta`` key ``embedder`` differs) are deleted first. The texts are
    embedded outside any transaction, so another process refreshing the index is not held up; each vector is then
    written only if its chunk still holds the text it was computed from (a chunk id can be reused after a delete).
    A stored vector of the wrong size (a damaged index) is computed again, and never compared (:func:`nearest_chunks`).
    """
    row = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
    if row is None or row[0] != embedder.id:
        with _transaction(conn):
            conn.execute("DELETE FROM chunk_vectors")
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('embedder', ?)", (embedder.id,))
    missing: list[tuple[int, str]] = conn.execute(
        "SELECT c.id, c.text FROM chunks AS c LEFT JOIN chunk_vectors AS v ON v.id = c.id"
        " WHERE v.id IS NULL OR length(v.vector) != ? ORDER BY c.id",
        (_VECTOR_BYTES,),
    ).fetchall()
    for start in range(0, len(missing), EMBED_BATCH):
        batch = missing[start : start + EMBED_BATCH]
        vectors = embedder.embed([text for _, text in batch])
        with _transaction(conn):
            conn.executemany(
                "INSERT OR REPLACE INTO chunk_vectors (id, vector) SELECT id, ? FROM chunks WHERE id = ? AND text = ?",
                [(vector.tobytes(), chunk_id, text) for (chunk_id, text), vector in zip(batch, vectors, strict=True)],
            )
    return len(missing)


def nearest_chunks(
    conn: sqlite3.Connection, embedder: Embedder, query: str, *, count: int, min_similarity: float
) -> list[tuple[int, float]]:
    """Return ``(chunk id, cosine similarity)`` of the ``count`` chunks most similar to ``query``, best first.

    Only chunks at least ``min_similarity`` similar are returned; ties are broken by chunk id.
    """
    import numpy as np

    rows = conn.execute(
        "SELECT id, vector FROM chunk_vectors WHERE length(vector) = ? ORDER BY id", (_VECTOR_BYTES,)
    ).fetchall()
    if not rows or count <= 0:
        return []
    ids = np.fromiter((chunk_id for chunk_id, _ in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(vector for _, vector in rows), dtype=np.float32).reshape(len(rows), -1)
    similarity = matrix @ embedder.embed([query])[0]
    passing = np.flatnonzero(similarity >= min_similarity)
    order = passing[np.lexsort((ids[passing], -similarity[passing]))][:count]
    return [(int(ids[n]), float(similarity[n])) for n in order]
