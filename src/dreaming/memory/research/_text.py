"""Salient terms and numbers: the fixed tokenization every research rule is built on.

Two kinds of term come out of a text:

- **identifiers**: a name with an underscore or a camelCase hump (``MAX_GAPS``, ``max_gaps_per_night``,
  ``bookingModification``). It is one strong term, normalized to lower snake case (``max_gaps``,
  ``booking_modification``), never stemmed and never split: a question about ``MAX_GAPS`` is not a question about
  every "max".
- **words**: everything else, lowercased and stemmed (``capped``, ``caps`` -> ``cap``; ``queries`` -> ``query``;
  ``stored``, ``store`` -> ``stor``), minus stop words, one-letter words and bare numbers.

When a *text* is searched for terms, an identifier in it also yields its parts as words, so that code meets prose:
``GAP_CAP_PCT`` holds the words "gap", "cap" and "pct" as well as the identifier ``gap_cap_pct``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["STOP_WORDS", "identifiers", "numbers", "salient_terms", "search_words", "term_coverage", "word_count"]

_STOP_WORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before being below between both but
    by can could did do does doing done down during each either else few for from further get gets got had has have
    having he her here hers him his how i if in into is it its itself just let may me might more most must my no nor not
    now of off on once only or other our ours out over own same shall she should so some such than that the their theirs
    them then there these they this those through to too under until up us use used uses using very via was we were
    what when where which while who whom why will with would you your yours
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
"""Words that carry no meaning for matching a claim to a snippet (English function words and question words)."""

_RUN = re.compile(r"[A-Za-z0-9_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_VOWEL = re.compile(r"[aeiouy]")
# A number stands alone: "v4" and "sha256" are names, not numbers; "0.7", "10,000" and "-3" are numbers.
_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])-?\d+(?:\.\d+)?(?![\w]|\.\d)")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def _fold_plural(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def _stem(token: str) -> str:
    # Deliberately crude and fixed: enough that "gaps" meets "gap", "capped" meets "cap" and "stored" meets "store".
    folded = _fold_plural(token)
    if folded == token:
        for suffix in ("ed", "ing"):
            base = token[: -len(suffix)]
            if token.endswith(suffix) and len(base) >= 3 and _VOWEL.search(base):
                if len(base) >= 4 and base[-1] == base[-2] and base[-1] not in "aeioulsz":
                    base = base[:-1]  # capped -> capp -> cap
                folded = base
                break
    if len(folded) > 3 and folded.endswith("e"):
        folded = folded[:-1]
    return folded


def _parts(run: str) -> list[str]:
    return [part.lower() for piece in run.split("_") for part in _CAMEL.split(piece) if part]


def _identifier(run: str) -> str | None:
    core = run.strip("_")
    if not core or not core[0].isalpha():
        return None
    parts = _parts(core)
    return "_".join(parts) if len(parts) >= 2 else None


def _runs(text: str) -> Iterator[tuple[str, str | None, list[str]]]:
    # Each run of name characters: as written, its identifier form (or None), its parts.
    for match in _RUN.finditer(text):
        run = match.group()
        yield run, _identifier(run), _parts(run)


def _is_salient_word(part: str) -> bool:
    return part not in STOP_WORDS and len(part) >= 2 and not _DIGITS.fullmatch(part)


def _tokens(text: str) -> set[str]:
    # What a text offers to match against: every stemmed word, identifier parts included, and every identifier.
    found: set[str] = set()
    for _, ident, parts in _runs(text):
        found.update(_stem(part) for part in parts)
        if ident is not None:
            found.add(ident)
    return found


def salient_terms(text: str) -> tuple[str, ...]:
    """Return the salient terms of ``text`` in order, unique: identifiers whole (``max_gaps``), stemmed words."""
    seen: dict[str, None] = {}
    for _, ident, parts in _runs(text):
        if ident is not None:
            seen.setdefault(ident, None)
            continue
        for part in parts:
            stem = _stem(part)
            if _is_salient_word(part) and _is_salient_word(stem):
                seen.setdefault(stem, None)
    return tuple(seen)


def identifiers(text: str) -> tuple[str, ...]:
    """Return the identifiers of ``text`` as written (``MAX_GAPS``, ``bookingModification``), in order, unique."""
    return tuple(dict.fromkeys(run.strip("_") for run, ident, _ in _runs(text) if ident is not None))


def search_words(text: str) -> tuple[str, ...]:
    """Return what to look for literally: identifiers as written, then each salient word in a searchable form.

    A word is searched by its stem when the stem is a prefix of it and has 4+ letters (``locked`` -> ``lock``),
    else by the word with its plural folded (``files`` -> ``file``, ``capped`` stays): a short stem such as ``fil``
    would match half of any codebase.
    """
    seen: dict[str, None] = dict.fromkeys(identifiers(text))
    for _, ident, parts in _runs(text):
        if ident is not None:
            continue
        for part in parts:
            stem, folded = _stem(part), _fold_plural(part)
            if _is_salient_word(part) and _is_salient_word(stem):
                seen.setdefault(stem if len(stem) >= 4 and folded.startswith(stem) else folded, None)
    return tuple(seen)


def word_count(text: str) -> tuple[int, int]:
    """Return ``(words, plain_words)``: word and number tokens (identifier parts counted), and those outside names.

    ``"MAX_GAPS is 5"`` has 4 words (max, gaps, is, 5) and 1 plain word (is); ``"max_gaps,"`` has 2 and 0.
    """
    words = plain = 0
    for match in _RUN.finditer(_DIGITS.sub("0", text)):
        run = match.group()
        parts = _parts(run)
        words += len(parts)
        if _identifier(run) is None and any(c.isalpha() for c in run):
            plain += 1
    return words, plain


def numbers(text: str) -> frozenset[str]:
    """Return the numbers written in ``text``, normalized (``"1.0"`` -> ``"1"``, ``"10,000"`` -> ``"10000"``)."""
    found: set[str] = set()
    for raw in _NUMBER.findall(text):
        value = raw.replace(",", "")
        sign = "-" if value.startswith("-") else ""
        value = value.lstrip("-")
        if "." in value:
            whole, frac = value.split(".", 1)
            frac = frac.rstrip("0")
            value = f"{int(whole)}.{frac}" if frac else str(int(whole))
        else:
            value = str(int(value))
        found.add("0" if value == "0" else sign + value)
    return frozenset(found)


def term_coverage(terms: tuple[str, ...], text: str) -> float:
    """Return the fraction of ``terms`` found in ``text`` (its words, identifier parts and identifiers); 1.0 if none."""
    if not terms:
        return 1.0
    present = _tokens(text)
    return sum(1 for t in terms if t in present) / len(terms)
