"""Query terms: the one tokenizer shared by the index query, hit scoring and gap classification.

Tokens are runs of letters and digits (what SQLite's ``unicode61`` tokenizer keeps), lowercased, with diacritics
removed (``remove_diacritics 2``). Because a term can only ever contain letters and digits, a term quoted for FTS5
can never be FTS5 syntax: user input is never parsed as a query language.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = [
    "MAX_QUERY_TERMS",
    "PREFIX_MIN_CHARS",
    "STOP_WORDS",
    "fts_match_expression",
    "query_terms",
    "salient_terms",
    "term_coverage",
]

MAX_QUERY_TERMS = 32
"""Longer queries keep their first 32 distinct terms, so one pasted paragraph cannot make a search slow."""

PREFIX_MIN_CHARS = 4
"""A term of at least this many characters also matches words it begins ("deploy" finds "deployment")."""

_STOP_WORDS_TEXT = """
    a about above after again all also am an and any are as at be because been before being below between both but
    by can could did do does doing down during each few for from further had has have having he her here hers him his
    how i if in into is it its itself just me more most my no nor not now of off on once only or other our ours out
    over own same she should so some such than that the their theirs them then there these they this those through to
    too under until up very was we were what when where which while who whom why will with would you your yours
"""

STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
"""English function words that say nothing about what a query is about."""

_TOKEN = re.compile(r"[^\W_]+")


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokens(text: str) -> list[str]:
    """Return every token of ``text``, folded, in order (repeats kept)."""
    return _TOKEN.findall(_fold(text))


def query_terms(query: str) -> tuple[str, ...]:
    """Return the distinct tokens of ``query`` in order of first appearance, at most :data:`MAX_QUERY_TERMS`."""
    return tuple(dict.fromkeys(tokens(query)))[:MAX_QUERY_TERMS]


def salient_terms(query: str) -> tuple[str, ...]:
    """Return the query's terms without stop words; all its terms when every one is a stop word."""
    terms = query_terms(query)
    salient = tuple(term for term in terms if term not in STOP_WORDS)
    return salient or terms


def _matches(term: str, words: set[str]) -> bool:
    if term in words:
        return True
    return len(term) >= PREFIX_MIN_CHARS and any(word.startswith(term) for word in words)


def term_coverage(terms: Iterable[str], text: str) -> float:
    """Return the fraction of ``terms`` found in ``text``, with the same prefix rule as the index query."""
    wanted = tuple(terms)
    if not wanted:
        return 0.0
    words = set(tokens(text))
    return sum(1 for term in wanted if _matches(term, words)) / len(wanted)


def fts_match_expression(terms: Iterable[str]) -> str:
    """Return an FTS5 MATCH expression that finds chunks containing any of ``terms``.

    Each term is a double-quoted FTS5 string (terms hold only letters and digits, so nothing needs escaping), with a
    trailing ``*`` (prefix query) when it is long enough. Returns ``""`` for no terms.
    """
    parts = [f'"{term}"*' if len(term) >= PREFIX_MIN_CHARS else f'"{term}"' for term in terms]
    return " OR ".join(parts)
