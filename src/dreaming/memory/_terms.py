"""Terms: the one home of tokenizing, stop words and term coverage, for memory search and for research.

There are three tokenizers, on purpose, and each keeps its exact results:

- **Index terms** (``index_*``, memory search, hit scoring and gap classification): they must match what SQLite's
  FTS5 ``unicode61`` tokenizer indexes. Tokens are runs of letters and digits (any script), lowercased, with
  diacritics removed (``remove_diacritics 2``), not stemmed: a long term also matches the words it begins (the FTS5
  prefix query). Because a term can only ever contain letters and digits, a term quoted for FTS5 can never be FTS5
  syntax: user input is never parsed as a query language.
- **Stemmed terms** (``stemmed_*``, research: matching a question, a claim and a snippet of code or prose): they must
  make code meet prose. Two kinds of term come out of a text:

  - *identifiers*: a name with an underscore or a camelCase hump (``MAX_GAPS``, ``max_gaps_per_night``,
    ``bookingModification``). It is one strong term, normalized to lower snake case (``max_gaps``,
    ``booking_modification``), never stemmed and never split: a question about ``MAX_GAPS`` is not a question about
    every "max".
  - *words*: everything else, lowercased and stemmed by the Snowball English stemmer (``capped``, ``caps`` ->
    ``cap``; ``queries`` -> ``queri``; ``detection``, ``detected`` -> ``detect``), minus stop words, one-letter words
    and bare numbers.

  When a *text* is searched for terms, an identifier in it also yields its parts as words, so that code meets prose:
  ``GAP_CAP_PCT`` holds the words "gap", "cap" and "pct" as well as the identifier ``gap_cap_pct``.

- **Morphological terms** (``morph_*``, memory search's second table, beside the index terms): what the exact
  tokens miss. Words are folded harder than FTS5 folds them (NFKC, case folding, diacritics dropped, and the Latin
  letters that Unicode does not decompose spelled out: ``Straße`` -> ``strasse``, ``Łódź`` -> ``lodz``) and stemmed by
  the same Snowball stemmer (``limits`` -> ``limit``). Runs of Han, Hiragana, Katakana or Hangul, which have no spaces
  between words, become overlapping character bigrams (a one-character run stays as it is), so a Chinese or Japanese
  query matches without a segmenter: ``备份任务`` is ``备份 份任 任务``. A run of one script ends where another begins,
  so a Japanese particle between two words joins neither (``証明書の更新`` is ``証明 明書 更新``).

Their stop-word lists differ too: research also drops question words and verbs such as "use" or "get"; morphological
terms have no stop words at all (the index terms' list) and no one-kana particles of Japanese (``の``, ``を``, ``は``).
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = [
    "DIGITS",
    "INDEX_STOP_WORDS",
    "MAX_QUERY_TERMS",
    "MORPH_TOKENIZER_VERSION",
    "NAME_RUN",
    "PREFIX_MIN_CHARS",
    "STEMMED_STOP_WORDS",
    "fts_match_expression",
    "identifier_form",
    "identifiers",
    "index_ascii_coverage",
    "index_needles",
    "index_salient_terms",
    "index_term_coverage",
    "index_tokens",
    "is_salient_word",
    "morph_needles",
    "morph_salient_terms",
    "morph_term_coverage",
    "morph_tokens",
    "name_parts",
    "name_runs",
    "needle_coverage",
    "query_coverage",
    "query_terms",
    "search_words",
    "spaced_terms",
    "stem_word",
    "stemmed_salient_terms",
    "stemmed_term_coverage",
    "stemmed_tokens",
    "word_count",
]

MAX_QUERY_TERMS = 32
"""Longer queries keep their first 32 distinct terms, so one pasted paragraph cannot make a search slow."""

PREFIX_MIN_CHARS = 4
"""A term of at least this many characters also matches words it begins ("deploy" finds "deployment")."""

_INDEX_STOP_WORDS_TEXT = """
    a about above after again all also am an and any are as at be because been before being below between both but
    by can could did do does doing down during each few for from further had has have having he her here hers him his
    how i if in into is it its itself just me more most my no nor not now of off on once only or other our ours out
    over own same she should so some such than that the their theirs them then there these they this those through to
    too under until up very was we were what when where which while who whom why will with would you your yours
"""

INDEX_STOP_WORDS = frozenset(_INDEX_STOP_WORDS_TEXT.split())
"""English function words that say nothing about what a memory search is about."""

_TOKEN = re.compile(r"[^\W_]+")


def _fold_diacritics(text: str) -> str:
    if text.isascii():  # the common case, and NFKD changes no ASCII character
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def index_tokens(text: str) -> list[str]:
    """Return every token of ``text``, folded, in order (repeats kept)."""
    return _TOKEN.findall(_fold_diacritics(text))


def query_terms(query: str) -> tuple[str, ...]:
    """Return the distinct tokens of ``query`` in order of first appearance, at most :data:`MAX_QUERY_TERMS`."""
    return tuple(dict.fromkeys(index_tokens(query)))[:MAX_QUERY_TERMS]


def index_salient_terms(query: str) -> tuple[str, ...]:
    """Return the query's terms without stop words; all its terms when every one is a stop word."""
    terms = query_terms(query)
    salient = tuple(term for term in terms if term not in INDEX_STOP_WORDS)
    return salient or terms


def _matches(term: str, words: set[str]) -> bool:
    if term in words:
        return True
    return len(term) >= PREFIX_MIN_CHARS and any(word.startswith(term) for word in words)


def index_term_coverage(terms: Iterable[str], text: str) -> float:
    """Return the fraction of ``terms`` found in ``text``, with the same prefix rule as the index query."""
    wanted = tuple(terms)
    if not wanted:
        return 0.0
    if all(_TOKEN.fullmatch(term) for term in wanted):
        return needle_coverage(index_needles(wanted), spaced_terms(index_tokens(text)))
    words = set(index_tokens(text))
    return sum(1 for term in wanted if _matches(term, words)) / len(wanted)


def spaced_terms(tokens: Iterable[str]) -> str:
    """Return the distinct ``tokens`` joined by spaces, with a space before and after (`` kafka retention ``).

    Tokens hold no space, so in this string `` term `` is a token and `` term`` a token that ``term`` begins: the
    needles of :func:`index_needles` and :func:`morph_needles`, one substring search each (:func:`needle_coverage`).
    """
    return f" {' '.join(dict.fromkeys(tokens))} "


def index_needles(terms: Iterable[str]) -> tuple[str, ...]:
    """Return what finds each index term (one token) in :func:`spaced_terms`, by the prefix rule of the index query."""
    return tuple(f" {term}" if len(term) >= PREFIX_MIN_CHARS else f" {term} " for term in terms)


def morph_needles(terms: Iterable[str]) -> tuple[str, ...]:
    """Return what finds each morphological term in :func:`spaced_terms` (whole tokens only)."""
    return tuple(f" {term} " for term in terms)


def needle_coverage(needles: tuple[str, ...], spaced: str) -> float:
    """Return the fraction of ``needles`` in ``spaced``: the coverage of their terms in the text it spaces out.

    ``needle_coverage(index_needles(terms), spaced_terms(index_tokens(text)))`` is :func:`index_term_coverage` and
    ``needle_coverage(morph_needles(terms), spaced_terms(morph_tokens(text)))`` is :func:`morph_term_coverage`.
    """
    if not needles:
        return 0.0
    return len([needle for needle in needles if needle in spaced]) / len(needles)


def index_ascii_coverage(terms: tuple[str, ...], text: str) -> float:
    """Return the fraction of index ``terms`` in ``text``, an ASCII text, read from the text itself.

    For such a text it is ``needle_coverage(index_needles(terms), spaced_terms(index_tokens(text)))``: its index tokens
    are its runs of ASCII letters and digits, lowercased, so a term is one of them (or begins one, when it is at least
    :data:`PREFIX_MIN_CHARS` long) where it occurs in the lowercased text with no letter or digit before it (nor
    after it, for a short term). A few substring searches cost less than fetching the chunk's stored terms.
    """
    if not terms:
        return 0.0
    lowered = text.lower()
    found = 0
    for term in terms:
        size = len(term)
        at = lowered.find(term)
        while at >= 0:
            if (at == 0 or not lowered[at - 1].isalnum()) and (
                size >= PREFIX_MIN_CHARS or not lowered[at + size : at + size + 1].isalnum()
            ):
                found += 1
                break
            at = lowered.find(term, at + 1)
    return found / len(terms)


def fts_match_expression(terms: Iterable[str], *, prefix: bool = True) -> str:
    """Return an FTS5 MATCH expression that finds chunks containing any of ``terms``.

    Each term is a double-quoted FTS5 string (index and morphological terms hold only letters and digits, so nothing
    needs escaping), with a trailing ``*`` (prefix query) when it is long enough and ``prefix`` is true. Returns ``""``
    for no terms.
    """
    parts = [f'"{term}"*' if prefix and len(term) >= PREFIX_MIN_CHARS else f'"{term}"' for term in terms]
    return " OR ".join(parts)


# -- Morphological terms (memory search's second table). ------------------------------------------------------------

MORPH_TOKENIZER_VERSION = "morph-1"
"""Names what :func:`morph_tokens` does. Change it with any change to its output: the search index stores it and is
rebuilt when it differs, since the index deletes a chunk's tokens by computing them again."""

# Scripts written without spaces between words. The prolonged sound mark (U+30FC) belongs to both kana.
_HAN = "\u3005\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_HIRAGANA = "\u3041-\u3096\u309d-\u309f\u30fc"
_KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
_HANGUL = "\u1100-\u11ff\u3131-\u318e\ua960-\ua97f\uac00-\ud7a3\ud7b0-\ud7ff"
_MORPH_RUN = re.compile(
    f"([{_HAN}]+|[{_HIRAGANA}]+|[{_KATAKANA}]+|[{_HANGUL}]+)|([^\\W_{_HAN}{_HIRAGANA}{_KATAKANA}{_HANGUL}]+)"
)
_ONE_KANA = re.compile(f"[{_HIRAGANA}]")
# Latin letters that NFKD leaves whole (no combining mark to drop); ß is handled by case folding (ß -> ss).
_LETTER_FOLDS = str.maketrans({"æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"})


def _morph_runs(text: str) -> list[tuple[str, str]]:
    # ``(cjk_run, "")`` or ``("", word_run)`` for each run of ``text``. NFKC first: half-width katakana and full-width
    # Latin meet their usual forms, and Hangul syllables stay whole (NFKD would split them into jamo, and would strip
    # the voicing marks off kana).
    runs: list[tuple[str, str]] = _MORPH_RUN.findall(unicodedata.normalize("NFKC", text).casefold())
    return runs


def _cjk_tokens(run: str) -> list[str]:
    if len(run) > 1:
        return [run[i : i + 2] for i in range(len(run) - 1)]
    return [] if _ONE_KANA.fullmatch(run) else [run]  # a one-kana run is a particle (の, を, は)


@functools.lru_cache(maxsize=65_536)
def _word_tokens(run: str) -> tuple[str, ...]:
    # A run of letters and digits outside the CJK scripts, already case folded. Cached: words repeat (Zipf), and
    # folding and stemming one costs far more than the lookup.
    folded = run if run.isascii() else _fold_diacritics(run).translate(_LETTER_FOLDS)
    return tuple(
        stem_word(word) if word.isascii() else word for word in _TOKEN.findall(folded) if word not in INDEX_STOP_WORDS
    )


def morph_tokens(text: str) -> list[str]:
    """Return every morphological token of ``text`` in order (repeats kept): what the second table indexes.

    Stop words and one-kana particles are left out: they would double the table's size and never find a note that the
    exact search does not (a query of stop words alone is the exact table's).
    """
    tokens: list[str] = []
    for cjk, word in _morph_runs(text):
        tokens.extend(_word_tokens(word) if word else _cjk_tokens(cjk))
    return tokens


def morph_salient_terms(query: str) -> tuple[str, ...]:
    """Return the query's distinct morphological tokens, at most :data:`MAX_QUERY_TERMS`; none for stop words alone."""
    return tuple(dict.fromkeys(morph_tokens(query)))[:MAX_QUERY_TERMS]


def morph_term_coverage(terms: Iterable[str], text: str) -> float:
    """Return the fraction of morphological ``terms`` among the morphological tokens of ``text`` (exact tokens)."""
    wanted = tuple(terms)
    if not wanted:
        return 0.0
    if text.isascii():
        # What morph_tokens does to ASCII text (NFKC and case folding are lowercasing, every run is one word), for
        # each distinct word once.
        tokens = {stem_word(word) for word in set(_TOKEN.findall(text.lower())) - INDEX_STOP_WORDS}
    else:
        tokens = set(morph_tokens(text))
    return sum(1 for term in wanted if term in tokens) / len(wanted)


def query_coverage(query: str, text: str) -> float:
    """Return the share of the query's salient terms that ``text`` holds: exactly or by morphology, the higher."""
    return max(
        index_term_coverage(index_salient_terms(query), text),
        morph_term_coverage(morph_salient_terms(query), text),
    )


# -- Stemmed terms (research). ---------------------------------------------------------------------------------------

_STEMMED_STOP_WORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before being below between both but
    by can could did do does doing done down during each either else few for from further get gets got had has have
    having he her here hers him his how i if in into is it its itself just let may me might more most must my no nor not
    now of off on once only or other our ours out over own same shall she should so some such than that the their theirs
    them then there these they this those through to too under until up us use used uses using very via was we were
    what when where which while who whom why will with would you your yours
"""
STEMMED_STOP_WORDS = frozenset(_STEMMED_STOP_WORDS_TEXT.split())
"""Words that carry no meaning for matching a claim to a snippet (English function words and question words)."""

NAME_RUN = re.compile(r"[A-Za-z0-9_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_STEMMER_LOCK = threading.Lock()
DIGITS = re.compile(r"\d+(?:\.\d+)?")


def _fold_plural(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


@functools.cache
def _english_stemmer() -> Any:
    # Made on first use: importing snowballstemmer loads every language's stemmer, which a command that only lists
    # gaps or shows the status never needs.
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65_536)
def stem_word(token: str) -> str:
    # The Snowball (Porter 2) English stemmer, fixed and well known: "gaps" meets "gap", "capped" "cap", "detection"
    # "detected". A stem shorter than 2 letters keeps the word.
    with _STEMMER_LOCK:  # a Snowball stemmer keeps state between words: one thread at a time
        stem = _english_stemmer().stemWord(token)
    return stem if len(stem) >= 2 else token


def name_parts(run: str) -> list[str]:
    return [part.lower() for piece in run.split("_") for part in _CAMEL.split(piece) if part]


def identifier_form(run: str) -> str | None:
    core = run.strip("_")
    if not core or not core[0].isalpha():
        return None
    parts = name_parts(core)
    return "_".join(parts) if len(parts) >= 2 else None


def name_runs(text: str) -> Iterator[tuple[str, str | None, list[str]]]:
    # Each run of name characters: as written, its identifier form (or None), its parts.
    for match in NAME_RUN.finditer(text):
        run = match.group()
        yield run, identifier_form(run), name_parts(run)


def is_salient_word(part: str) -> bool:
    return part not in STEMMED_STOP_WORDS and len(part) >= 2 and not DIGITS.fullmatch(part)


def stemmed_tokens(text: str) -> set[str]:
    # What a text offers to match against: every stemmed word, identifier parts included, and every identifier.
    found: set[str] = set()
    for _, ident, parts in name_runs(text):
        found.update(stem_word(part) for part in parts)
        if ident is not None:
            found.add(ident)
    return found


def stemmed_salient_terms(text: str) -> tuple[str, ...]:
    """Return the salient terms of ``text`` in order, unique: identifiers whole (``max_gaps``), stemmed words."""
    seen: dict[str, None] = {}
    for _, ident, parts in name_runs(text):
        if ident is not None:
            seen.setdefault(ident, None)
            continue
        for part in parts:
            stem = stem_word(part)
            if is_salient_word(part) and is_salient_word(stem):
                seen.setdefault(stem, None)
    return tuple(seen)


def identifiers(text: str) -> tuple[str, ...]:
    """Return the identifiers of ``text`` as written (``MAX_GAPS``, ``bookingModification``), in order, unique."""
    return tuple(dict.fromkeys(run.strip("_") for run, ident, _ in name_runs(text) if ident is not None))


def search_words(text: str) -> tuple[str, ...]:
    """Return what to look for literally: identifiers as written, then each salient word in a searchable form.

    A word is searched by its stem when the stem is a prefix of it and has 4+ letters (``locked`` -> ``lock``),
    else by the word with its plural folded (``files`` -> ``file``, ``capped`` stays): a short stem such as ``fil``
    would match half of any codebase.
    """
    seen: dict[str, None] = dict.fromkeys(identifiers(text))
    for _, ident, parts in name_runs(text):
        if ident is not None:
            continue
        for part in parts:
            stem, folded = stem_word(part), _fold_plural(part)
            if is_salient_word(part) and is_salient_word(stem):
                seen.setdefault(stem if len(stem) >= 4 and folded.startswith(stem) else folded, None)
    return tuple(seen)


def word_count(text: str) -> tuple[int, int]:
    """Return ``(words, plain_words)``: word and number tokens (identifier parts counted), and those outside names.

    ``"MAX_GAPS is 5"`` has 4 words (max, gaps, is, 5) and 1 plain word (is); ``"max_gaps,"`` has 2 and 0.
    """
    words = plain = 0
    for match in NAME_RUN.finditer(DIGITS.sub("0", text)):
        run = match.group()
        parts = name_parts(run)
        words += len(parts)
        if identifier_form(run) is None and any(c.isalpha() for c in run):
            plain += 1
    return words, plain


def stemmed_term_coverage(terms: tuple[str, ...], text: str) -> float:
    """Return the fraction of ``terms`` found in ``text`` (its words, identifier parts and identifiers); 1.0 if none."""
    if not terms:
        return 1.0
    present = stemmed_tokens(text)
    return sum(1 for t in terms if t in present) / len(terms)
