"""Salient terms and numbers: the fixed tokenization every research rule is built on."""

from __future__ import annotations

import re

__all__ = ["STOP_WORDS", "numbers", "salient_terms", "term_coverage"]

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

_TOKEN = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
# A number stands alone: "v4" and "sha256" are names, not numbers; "0.7", "10,000" and "-3" are numbers.
_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])-?\d+(?:\.\d+)?(?![\w]|\.\d)")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def _stem(token: str) -> str:
    # Just enough folding that "gaps" meets "gap" and "queries" meets "query"; deliberately crude and fixed.
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def _tokens(text: str) -> list[str]:
    # Identifiers split into words ("max_gaps_per_night", "bookingModification") so that code meets prose.
    return [_stem(t) for t in _TOKEN.findall(_CAMEL.sub(r"\1 \2", text).lower())]


def salient_terms(text: str) -> tuple[str, ...]:
    """Return the salient terms: lowercased, stemmed word tokens minus stop words and bare numbers, in order, unique."""
    seen: dict[str, None] = {}
    for token in _tokens(text):
        if token in STOP_WORDS or len(token) < 2 or _DIGITS.fullmatch(token):
            continue
        seen.setdefault(token, None)
    return tuple(seen)


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
    """Return the fraction of ``terms`` that occur as tokens of ``text`` (1.0 when there are no terms)."""
    if not terms:
        return 1.0
    present = set(_tokens(text))
    return sum(1 for t in terms if t in present) / len(terms)
