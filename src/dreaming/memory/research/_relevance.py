"""Relevance: does a claim answer the question asked? Fixed rules on words and names; no model's opinion.

A claim that fails any of these is off-topic and its confidence is 0: an off-topic truth is not an answer.
``off_topic`` checks them in this order, on the claim and its supporting evidence (each item's cited text, path and
enclosing def/class):

1. **Names and subjects.** Every name the question asks about (identifiers, dotted and backticked names,
   CamelCase words: ``_text.asked_names``) appears whole in the claim or its support, or is a class the evidence
   shows inheriting from one that does; every subject it names
   (``the backoff library``, ``stamina's``, ``a cleo Command``) in a code item's path or in a note or page; and the
   claim names no other library (``in the fire library, ...``).
2. **Kind** (:func:`question_kind`). An exception question needs an exception named; a value question a value
   (a note or a page may give a name), a binding when code supports it, a literal when only a function body does,
   and a number when it asks how many, how long, a size, a port, a timeout.
3. **What is asked beyond the library.** The question's specific terms (less ``GENERIC_WORDS``, exception words,
   question words and a few verbs) that the path does not already hold must be covered at least
   ``RELEVANCE_FRACTION`` (0.5) by the claim and its def/class, and more than half when neither the path, the
   def/class nor an identifier of the claim spelling two of them names any.
4. **The name bound.** A value claim binds its value to the name asked (not to a parameter whose *type* is the
   asked class: ``retry_policy = None`` does not answer a question about ``RetryPolicy``'s attempts).
5. **The scope.** A line of code inside a def/class counts only when that scope shares a word with the question,
   or the claim spells the thing asked as one identifier (``recursion_limit`` for "the recursion limit").
6. **Prose.** A how/why question rests on some prose, not on lines of code alone (a ``raise`` answers what happens
   under a condition).

Then :func:`answer_relevance` must reach ``RELEVANCE_FRACTION`` with at least ``MIN_RELEVANT_TERMS`` terms found.
"""

from __future__ import annotations

import itertools
import re
from typing import Literal

from dreaming.memory._terms import STEMMED_STOP_WORDS, identifiers, stemmed_salient_terms, stemmed_term_coverage
from dreaming.memory.research._evidence import CODE_ROLES, Claim, Evidence
from dreaming.memory.research._statements import mapping_entry
from dreaming.memory.research._text import (
    SCOPE_NOTE,
    asked_names,
    bindings,
    exception_names,
    named_libraries,
    names_in,
    numbers,
    value_tokens,
    whole_names,
    with_abbreviations,
)

__all__ = [
    "GENERIC_STEMS",
    "GENERIC_WORDS",
    "MIN_RELEVANT_TERMS",
    "PROPER_NAME",
    "RELEVANCE_FRACTION",
    "QuestionKind",
    "about_scope",
    "answer_relevance",
    "is_code",
    "off_topic",
    "question_coverage",
    "question_kind",
]

QuestionKind = Literal["value", "exception", "prose"]

RELEVANCE_FRACTION = 0.5
"""Share of the question's terms and numbers the claim and its support must cover (generic words such as
``default``, ``value`` or ``error`` left out: they say what kind of answer is wanted, not what it is about)."""
MIN_RELEVANT_TERMS = 2
"""And at least this many of them (or all, when the question has fewer)."""
_EXCEPTION_WORDS = frozenset({"exception", "error", "rais", "raise", "throw", "thrown", "fail", "get", "give"})
_EXCEPTION_QUESTION = re.compile(r"\b(?:exception|error|raise[sd]?|throws?|thrown)\b", re.IGNORECASE)
_DEFAULT_QUESTION = re.compile(r"\bdefaults?\b", re.IGNORECASE)
_PROSE_QUESTION = re.compile(
    r"^\s*(?:does|do|can|will|is|are|should|could|would)\b|\bwhat\s+happens\b|\bwhat\s+does\b.*\bdo\b|"
    r"\bwhy\b|\bhow\b(?!\s+(?:many|much|long|often|big|large|old))",
    re.IGNORECASE,
)


def question_kind(question: str) -> QuestionKind:
    """Return what a question asks for: an ``exception`` name, a ``value``, or ``prose``.

    ``default`` asks for a value; an exception word (``error``, ``raise``...) for an exception; a yes/no, why,
    how or "what happens" question asks for prose; any other question (what, which, where, who, when, how many...)
    asks for a value: a name, a number, a place.
    """
    if _DEFAULT_QUESTION.search(question):
        return "value"
    if _EXCEPTION_QUESTION.search(question):
        return "exception"
    if _PROSE_QUESTION.search(question):
        return "prose"
    return "value"


def question_coverage(question: str, text: str, *, ignore: frozenset[str] = frozenset()) -> float | None:
    """Return the share of the question's salient terms and numbers found in ``text``; None when it has neither.

    Fewer than ``MIN_RELEVANT_TERMS`` of them found (when the question has that many) counts as 0: one shared word
    of a short question ("search" of "who owns the search service") is not relevance. Terms in ``ignore`` (words
    that say what kind of answer is wanted, such as ``default`` or ``error``) are left out when others remain.
    """
    skip = set(ignore) | set(stemmed_salient_terms(" ".join(sorted(ignore))))
    terms = tuple(t for t in stemmed_salient_terms(question) if t not in skip) or stemmed_salient_terms(question)
    wanted = numbers(question)
    total = len(terms) + len(wanted)
    if total == 0:
        return None
    found = stemmed_term_coverage(terms, text) * len(terms) + len(wanted & numbers(text))
    if found < min(total, MIN_RELEVANT_TERMS) - 1e-9:
        return 0.0
    return found / total


def answer_relevance(question: str, text: str) -> float | None:
    """Return :func:`question_coverage` of ``text``, less the question's generic, exception and question words.

    Verbs such as "write" or "stamp" are left out too: they say what happens to the thing asked about, not what it is.
    """
    return question_coverage(question, text, ignore=GENERIC_WORDS | _EXCEPTION_WORDS | _VERBS | _WH)


def off_topic(question: str, claim: Claim, supporting: list[Evidence], contexts: dict[str, str]) -> str:
    """Return the first relevance rule ``claim`` fails on its ``supporting`` evidence, or "" when it answers.

    ``contexts`` maps evidence ids to what each item says and where (its cited text, path and def/class).
    """
    names, subjects = asked_names(question)
    held = whole_names(" ".join([claim.text, *(contexts[item.id] for item in supporting)]))
    held |= _heirs(held, " ".join(contexts.values()))
    missing = [n for n in names if n not in held]
    if missing:
        return f"does not name {', '.join(missing)}"
    for subject in subjects:
        where = [
            (item.path or "") if item.source_type == "codebase" else f"{claim.text} {item.snippet}"
            for item in supporting
        ]
        if not any(subject in names_in(text) or subject in text.lower() for text in where):
            return f"is not about {subject}"
    foreign = [s for s in named_libraries(claim.text) if s not in _question_words(question)]
    if foreign:
        return f"is about {foreign[0]}, which the question does not name"
    kind = question_kind(question)
    if kind == "exception" and not exception_names(claim.text):
        return "names no exception"
    named = any(item.source_type != "codebase" for item in supporting) and PROPER_NAME.search(claim.text)
    if kind == "value" and not value_tokens(claim.text) and not bindings(claim.text) and not named:
        return "states no value"
    code = [item for item in supporting if item.source_type == "codebase" and is_code(item)]
    if kind == "value" and code and not bindings(claim.text):
        return "binds no value to a name (a call or a message is not a definition)"
    if kind == "value" and code and all(i.role == "body" for i in code) and not value_tokens(claim.text):
        return "is a computation inside a function, not a definition"
    if kind == "value" and _NUMBER_QUESTION.search(question) and not numbers(claim.text):
        return "states no number, and the question asks for one"
    # An identifier of the claim built from two question words ("recursion_limit") names the thing asked itself.
    spelled = any(spells(i, question) for i in identifiers(claim.text))
    paths = " ".join(item.path or "" for item in supporting if item.source_type == "codebase")
    if paths:
        # The path names the library; what the question asks about it must be in the claim or its def/class.
        said = " ".join([claim.text, *((item.scope or "").replace(".", " ") for item in supporting)])
        specific = _specific_terms(question)
        residual = [t for t in specific if not _in_path(t, paths)]
        covered = sum(t in names_in(said) for t in residual)
        # A line whose path and def/class name nothing of the question must carry more than half of it on its own.
        scopes = names_in(" ".join((item.scope or "").replace(".", " ") for item in supporting))
        anchored = len(residual) < len(specific) or any(t in scopes for t in specific) or spelled
        if residual and (
            covered < RELEVANCE_FRACTION * len(residual) or (not anchored and covered <= len(residual) / 2)
        ):
            return f"says too little of what the question asks ({covered} of {len(residual)}: {', '.join(residual)})"
    if kind == "value" and bindings(claim.text) and not _binds_asked(question, claim.text):
        return "binds its value to another name than the one asked"
    for item in supporting:
        scope = (item.scope or "").replace(".", " ")
        if is_code(item) and scope and not spelled and not (names_in(scope) & _question_words(question)):
            return f"is about {item.scope}, which the question does not name"
    raise_answers = exception_names(claim.text) and _CONDITION.search(question)
    if kind == "prose" and all(is_code(item) for item in supporting) and not raise_answers:
        return "is a line of code, and the question asks how or why"
    return ""


GENERIC_WORDS = frozenset(
    {"default", "defaults", "value", "values", "parameter", "parameters", "param", "params", "option", "options",
     "argument", "arguments", "arg", "args", "name", "names", "type", "types", "setting", "settings", "config",
     "field", "attribute", "variable", "constant", "number", "kind", "sort"}
)  # fmt: skip
"""Words that say what kind of thing a question asks for, not which one: they never tie a claim to a question."""
GENERIC_STEMS = GENERIC_WORDS | frozenset(stemmed_salient_terms(" ".join(sorted(GENERIC_WORDS))))


PROPER_NAME = re.compile(r"\w[\s:;,]+[A-Z][a-z]+")
"""A capitalized word inside a sentence ("owner: Priya"): in a note or a page, a name is an answer."""
_CONDITION = re.compile(r"\bwhat\s+happens\b|\bif\b|\bwhen\b", re.IGNORECASE)
"""A question about what happens under a condition, which a ``raise`` answers."""
_NUMBER_QUESTION = re.compile(
    r"\b(?:how\s+(?:many|much|long|often)|number|count|size|timeout|port|percent|bytes|"
    r"(?:milli)?seconds?|minutes?|hours?|days?)\b",
    re.IGNORECASE,
)
_VERBS = frozenset(
    {"write", "store", "keep", "use", "make", "get", "set", "add", "run", "start", "take", "give", "look", "find",
     "call", "return", "create", "send", "read", "load", "save", "put", "happen", "stamp"}
)  # fmt: skip
"""Verbs that say what happens to the thing asked about, not what it is."""
_WH = frozenset({"what", "which", "where", "who", "when", "how", "many", "much", "long", "often"})
"""Question words (most are stop words already)."""


_SUBCLASS = re.compile(r"\bclass\s+([A-Za-z_]\w*)\s*\(([^)]*)\)")


def _heirs(held: set[str], pool_text: str) -> set[str]:
    # Classes the evidence shows inheriting from a held class hold what it holds: a question about
    # wait_random_exponential is answered by wait_exponential.__init__ when "class wait_random_exponential
    # (wait_exponential)" is among the evidence.
    heirs: set[str] = set()
    for match in _SUBCLASS.finditer(pool_text):
        bases = {whole for base in match.group(2).split(",") for whole in whole_names(base.strip().split(".")[-1])}
        if bases & held:
            heirs |= whole_names(match.group(1))
    return heirs


def is_code(item: Evidence) -> bool:
    """Return whether ``item`` is a line of code (a codebase hit without a role, an older one or a fake, counts)."""
    return item.source_type == "codebase" and (item.role or "code") in CODE_ROLES


def about_scope(question: str, item: Evidence) -> bool:
    """Return whether ``item`` lies in the def/class the question talks about.

    Its innermost scope names a specific question term that its path does not ("tenacity's chained wait strategy"
    and ``wait_chain``'s docstring).
    """
    innermost = (item.scope or "").rsplit(".", 1)[-1]
    if item.source_type != "codebase" or not innermost or innermost.startswith("__"):
        return False
    terms = [t for t in _specific_terms(question) if not _in_path(t, item.path or "")]
    return bool(set(terms) & names_in(innermost))


def _in_path(term: str, paths: str) -> bool:
    # A path holds a term as a name ("tenacity/wait.py" holds "wait") or, for longer terms, inside one ("graph" in
    # "langgraph/...": a library's own name is no part of the question's subject).
    return term in names_in(paths) or (len(term) >= 4 and term in paths.lower())


def spells(identifier: str, question: str) -> bool:
    """Return whether ``identifier`` spells two consecutive words of ``question``.

    ``recursion_limit`` spells "the recursion limit"; ``STYLE_COMMANDS_TABLE_SHOW_LINES`` does not spell "command line".
    """
    parts = stemmed_salient_terms(" ".join(_parts_of(identifier)))
    terms = stemmed_salient_terms(question)
    return bool(set(itertools.pairwise(parts)) & set(itertools.pairwise(terms)))


def _parts_of(identifier: str) -> list[str]:
    return [p for piece in identifier.split("_") for p in re.split(r"(?<=[a-z0-9])(?=[A-Z])", piece) if p]


def _specific_terms(question: str) -> list[str]:
    # The question's salient terms minus the words that only say what kind of answer is wanted.
    skip = GENERIC_WORDS | _EXCEPTION_WORDS | _VERBS | _WH
    skip |= set(stemmed_salient_terms(" ".join(sorted(skip))))
    return [t for t in stemmed_salient_terms(question) if t not in skip]


def _question_words(question: str) -> set[str]:
    names, subjects = asked_names(question)
    words = with_abbreviations([*names, *subjects, *stemmed_salient_terms(question), *names_in(question)])
    return words - STEMMED_STOP_WORDS - GENERIC_WORDS


def _binds_asked(question: str, claim_text: str) -> bool:
    # The claim binds its value to the name asked: an identifier the question writes in snake or upper case, or a
    # name sharing a word of the question beyond the words of its CamelCase names (a ``RetryPolicy`` question asks
    # about an attribute of the class, so ``retry_policy = None`` is not its answer).
    written = {i.lower() for i in identifiers(question) if not i[:1].isupper() or i.isupper()}
    camel_parts = {part for name in asked_names(question)[0] if name not in written for part in name.split("_")}
    words = _question_words(question) - camel_parts
    if any(name in written or names_in(name) & words for name, _ in bindings(claim_text)):
        return True
    # A sentence ("the confidence threshold for promotion is 0.7") binds a phrase, not one word: it is enough that it
    # names what was asked (itself: the def/class it sits in binds nothing). A line of code binds exactly the name on
    # its left, and a mapping entry ("ENDOFTEXT: 100257") its key.
    said = SCOPE_NOTE.sub("", claim_text)
    return "=" not in said and mapping_entry(said) is None and bool(names_in(said) & words)
