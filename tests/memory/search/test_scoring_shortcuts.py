"""The search's shortcuts give exactly what the plain computation gives.

Coverage is read from each chunk's stored terms (``chunk_terms``), or from an ASCII text itself, instead of tokenizing
the text again, a chunk the morphological table finds for one term is taken to hold it, and candidates past the one
that cannot reach the ``limit``-th score are not scored: all are checked here against the plain way, on random texts
(CJK, diacritics, underscores, repeated paragraphs for tied ranks) and random queries.
"""

from __future__ import annotations

import random
import sqlite3

import pytest

from dreaming.memory import Workspace
from dreaming.memory._terms import (
    PREFIX_MIN_CHARS,
    fts_match_expression,
    index_ascii_coverage,
    index_needles,
    index_salient_terms,
    index_term_coverage,
    index_tokens,
    morph_needles,
    morph_salient_terms,
    morph_term_coverage,
    morph_tokens,
    needle_coverage,
    spaced_terms,
)
from dreaming.memory.search import open_index, refresh_index, search_index
from dreaming.memory.search._search import (
    CANDIDATE_FACTOR,
    CANDIDATES_SQL,
    MORPH_SCORE_FACTOR,
    RELEVANCE_FLOOR,
    SearchHit,
    _snippet,
)

WORDS = [
    "kafka", "retention", "retentions", "limit", "limits", "rate", "deploy", "deployed", "the", "of", "café", "Straße",
    "Łódź", "备份任务", "証明書の更新", "max_gaps", "GAP_CAP", "bookingModification", "a1", "x", "queries", "query",
    "naïve", "ﬁle", "ｶﬀｪ", "２０２６", "data", "database", "db",
]  # fmt: skip


def _text(rng: random.Random) -> str:
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8))) for _ in range(rng.randint(1, 4))]
    return "\n".join(lines) + rng.choice(["", ".", "!", " -- ok"])


def _ascii_text(rng: random.Random) -> str:
    # Words with capitals, digits, underscores and punctuation around them, where a term may begin a word, end one or
    # sit inside one.
    words = [w for w in WORDS if w.isascii()] + ["Kafka-retention", "(limit)", "re.tention", "x1_y2", "LIMITS,"]
    return " ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) + rng.choice(["", ".", "\n", "!?"])


def _terms(rng: random.Random, tokens: list[str]) -> tuple[str, ...]:
    pool = [*tokens, "zzz", "kaf", "ret", "备份"]
    return tuple(dict.fromkeys(rng.choice(pool)[: rng.randint(1, 9)] for _ in range(rng.randint(1, 4))))


def _plain_index_coverage(terms: tuple[str, ...], text: str) -> float:
    words = set(index_tokens(text))
    hit = [t in words or (len(t) >= PREFIX_MIN_CHARS and any(w.startswith(t) for w in words)) for t in terms]
    return sum(hit) / len(terms) if terms else 0.0


def _plain_morph_coverage(terms: tuple[str, ...], text: str) -> float:
    tokens = set(morph_tokens(text))
    return sum(t in tokens for t in terms) / len(terms) if terms else 0.0


def test_coverage_from_spaced_terms_is_coverage_from_the_text() -> None:
    rng = random.Random(14)
    ascii_texts = 0
    for n in range(3000):
        text = _text(rng) if n % 2 else _ascii_text(rng)
        terms = tuple(t for t in _terms(rng, index_tokens(text)) if t)
        expected = _plain_index_coverage(terms, text)
        assert index_term_coverage(terms, text) == expected, (terms, text)
        assert needle_coverage(index_needles(terms), spaced_terms(index_tokens(text))) == expected, (terms, text)
        if text.isascii():
            ascii_texts += 1
            assert index_ascii_coverage(terms, text) == expected, (terms, text)
        stems = tuple(dict.fromkeys(rng.choice([*morph_tokens(text), "zzz"]) for _ in range(3)))
        assert morph_term_coverage(stems, text) == _plain_morph_coverage(stems, text), (stems, text)
        spaced = spaced_terms(morph_tokens(text))
        assert needle_coverage(morph_needles(stems), spaced) == _plain_morph_coverage(stems, text), (stems, text)
    assert ascii_texts > 1500


def test_terms_that_are_not_one_token_keep_the_plain_rule() -> None:
    assert index_term_coverage(["kafka retention", ""], "kafka retention") == 0.0
    assert index_term_coverage(["max_gaps"], "max_gaps") == 0.0  # tokens never hold an underscore


def _plain_search(conn: sqlite3.Connection, query: str, limit: int) -> list[SearchHit]:
    # search_index as it was: every candidate scored from its text, no cutoff.
    terms = index_salient_terms(query)
    if not terms or limit <= 0:
        return []
    found: dict[int, tuple[float, str, int, int, str]] = {}

    def candidates(table: str, expression: str) -> list[tuple[int, str, int, int, str, float]]:
        rows = conn.execute(CANDIDATES_SQL.format(table=table), (expression, limit * CANDIDATE_FACTOR)).fetchall()
        best = min((row[5] for row in rows), default=0.0)
        return [(i, p, s, e, t, r / best if best < 0 else 1.0) for i, p, s, e, t, r in rows]

    def share(relative: float) -> float:
        return RELEVANCE_FLOOR + (1 - RELEVANCE_FLOOR) * relative

    for chunk_id, path, start, end, text, relative in candidates("chunks_fts", fts_match_expression(terms)):
        found[chunk_id] = (index_term_coverage(terms, text) * share(relative), path, start, end, text)
    exact = sum(1 for score, *_ in found.values() if round(score, 4) > MORPH_SCORE_FACTOR)
    morph = morph_salient_terms(query)
    if exact < limit and morph:
        for chunk_id, path, start, end, text, relative in candidates(
            "chunks_morph", fts_match_expression(morph, prefix=False)
        ):
            if chunk_id in found and found[chunk_id][0] > MORPH_SCORE_FACTOR:
                continue
            score = MORPH_SCORE_FACTOR * morph_term_coverage(morph, text) * share(relative)
            if chunk_id not in found or score > found[chunk_id][0]:
                found[chunk_id] = (score, path, start, end, text)
    hits = [
        SearchHit(path=p, start_line=s, end_line=e, score=round(min(1.0, max(0.0, x)), 4), snippet=_snippet(t))
        for x, p, s, e, t in found.values()
    ]
    return sorted(hits, key=lambda hit: (-hit.score, hit.path, hit.start_line))[:limit]


@pytest.mark.parametrize("limit", [1, 3, 8])
def test_the_cutoff_and_stored_terms_change_no_hit(workspace: Workspace, limit: int) -> None:
    rng = random.Random(limit)
    workspace.memory_dir.mkdir(parents=True)
    shared = _text(rng)  # the same paragraph in several notes: equal ranks, ordered by path
    for n in range(60):
        paragraphs = [_text(rng) for _ in range(rng.randint(1, 4))] + ([shared] if n % 7 == 0 else [])
        (workspace.memory_dir / f"2026-04-{n:02d}.md").write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
    conn = open_index(workspace)
    try:
        refresh_index(workspace, conn)
        for _ in range(150):
            query = " ".join(rng.choice(WORDS)[: rng.randint(2, 9)] for _ in range(rng.randint(1, 3)))
            assert search_index(conn, query, limit=limit) == _plain_search(conn, query, limit), query
    finally:
        conn.close()
