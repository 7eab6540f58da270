"""Validation: fixed support rules and the one confidence formula. Nothing here reads a model's opinion.

**Statement.** A claim that is not a statement by the substance rule of ``_statements`` (a definition, or at least
``MIN_CLAIM_WORDS`` word tokens with a plain word among them), or that reads as an instruction to the agent
(``_text.reads_as_instruction``), is supported by nothing.

**Cited text.** For codebase evidence only the **cited lines** count: the matched line, plus a definition's
docstring on the next line, each re-read now at ``path:line`` through the injected ``read_line`` and equal to the
recorded line (whitespace-trimmed, secrets redacted); the context lines around them support nothing. A line in a
docstring's usage example, and evidence that reads as an instruction, support and contradict nothing. For web and
memory evidence the cited text is the snippet. The item's **context** is its cited text plus, for code, its path and
its enclosing def/class.

**Support.** A cited item supports a claim when all of these hold:

1. **values**: every value-bearing token of the claim (numbers, quoted literals, exception names, True/False/None;
   ``_text.value_tokens``) occurs in the cited text; where the cited text binds one of them to a name, the claim
   names that name (``exp_base defaults to 1`` is not supported by ``multiplier: float = 1, exp_base: float = 2``);
   and a claim written as code (``name = value``) binds values the cited text binds. A comment never supports a
   claim with a value (it is what someone said about the code, not the code);
2. **names**: at least ``SUPPORT_TERM_FRACTION`` (0.6) of the claim's salient terms (less ``GENERIC_WORDS`` such as
   "default") occur in the item's context;
3. **no values, no overlap**: a claim with no value and no binding is prose; it is supported only by an item whose
   context holds at least ``PROSE_SUPPORT_FRACTION`` (0.9) of its salient terms (near-verbatim). Word overlap
   alone never supports: an unrelated note sharing three words with a code line corroborates nothing.

A support is **strong** when the item's context holds *all* of the claim's salient terms.

**Relevance** is decided by ``_relevance``: an off-topic truth is not an answer, and its confidence is 0.

**Contradiction.** Evidence of the gap (cited or not, usable by the rules above) contradicts a claim when it binds a
name the claim binds to another literal value (a number, a quoted literal, a constant; ``x = x`` contradicts
nothing), and it speaks from the same place as the claim's cited evidence (the same file and def/class for code), or
from the place of the question's asked names (for code, its path or def/class holds them: a line elsewhere that
merely mentions ``FileText`` with ``mode="w"`` says nothing of what ``FileText`` defines), or, when the question does
not name the claim's place, from anywhere it mentions the asked names: the question cannot choose between places
binding the name differently (one encoding's token id against another's). A source counts as contradicting only when
none of its evidence supports the claim.

**Independence.** One source per web domain; for code, one per file, and lines that are the same once normalized are
one source across files (a copied line, a vendored copy, a generated file); all memory evidence together is one.

**Confidence**, rounded to 4 places and clamped to [0, 1]::

    sum(SOURCE_WEIGHTS[i] for the i-th supporting source; 0.05 for each beyond the fourth)   0.45, 0.25, 0.10, 0.05
    + CODE_BONUS      0.25  when a supporting line of code re-verified and the claim states a value, or a
                            re-verified docstring or comment belongs to the def/class the question asks or talks
                            about (its name holds an asked name, or a specific question word the path does not)
    + STRONG_BONUS    0.10  when some supporting item is a strong support
    - CONTRADICTION_PENALTY 0.25 per contradicting source

so, at the default threshold 0.7: one re-verified code line gives 0.70 (0.80 strong), kept as ``code-crossref``;
two agreeing web domains give 0.70 (0.80 strong), kept as ``multi-source``; one web domain gives 0.55 when strong
(``web-confirm``) and 0.45 when weak (``single-source``), both discarded: one web page is never enough alone.

**User-stated.** A claim stated verbatim on a line of the user's own notes (memory evidence), holding a value or a
name and relevant to the question, is the user's word about their own setup: its confidence is at least
``USER_STATED_CONFIDENCE`` (0.75) with one source, labelled ``user_stated``, method ``single-source``.

**Method**: ``code-crossref`` when a re-verified code line supports; else ``multi-source`` with two or more supporting
sources; else ``web-confirm`` for one strongly supporting web domain; else ``single-source`` (also for no support).

Only these constants and the rules above produce numbers: evidence text is read for the claim's terms, values and
bindings and never parsed for scores, so a snippet saying "confidence 1.0, keep this" changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dreaming.memory._terms import stemmed_salient_terms, stemmed_term_coverage
from dreaming.memory.research._evidence import Claim, Evidence, EvidencePool, clean_claims, redact_secrets
from dreaming.memory.research._relevance import (
    GENERIC_STEMS,
    PROPER_NAME,
    RELEVANCE_FRACTION,
    about_scope,
    answer_relevance,
    is_code,
    off_topic,
)
from dreaming.memory.research._statements import MIN_CLAIM_WORDS, cited_span, is_statement
from dreaming.memory.research._text import (
    asked_names,
    bindings,
    has_value,
    names_in,
    reads_as_instruction,
    value_tokens,
)

__all__ = [
    "CODE_BONUS",
    "CONTRADICTION_PENALTY",
    "PROSE_SUPPORT_FRACTION",
    "SETTLED_CONFIDENCE",
    "SOURCE_WEIGHTS",
    "STRONG_BONUS",
    "SUPPORT_TERM_FRACTION",
    "USER_STATED_CONFIDENCE",
    "ClaimValidation",
    "EvidenceCheck",
    "LineReader",
    "Validation",
    "ValidationMethod",
    "independent_sources",
    "supports_text",
    "validate_claims",
    "validation_summary",
]

ValidationMethod = Literal["code-crossref", "multi-source", "web-confirm", "single-source"]
LineReader = Callable[[str, int], "str | None"]
"""``read_line(path, line)``: the file's current text at that 1-based line, or None when it cannot be read."""

SUPPORT_TERM_FRACTION = 0.6
"""Share of the claim's salient terms an item's context must hold to support it."""
PROSE_SUPPORT_FRACTION = 0.9
"""Share of a value-less claim's salient terms an item's cited text must hold to support it (near-verbatim)."""
SOURCE_WEIGHTS = (0.45, 0.25, 0.10, 0.05)
"""Confidence added by the first, second, third and each further independent supporting source."""
CODE_BONUS = 0.25
"""Added once when a supporting code line was re-read and still holds the text."""
STRONG_BONUS = 0.10
"""Added once when some supporting item's context holds every salient term of the claim."""
CONTRADICTION_PENALTY = 0.25
"""Subtracted per independent contradicting source."""
SETTLED_CONFIDENCE = 0.7
"""Claims at or above this confidence are ranked by relevance first (see ``Validation.best``)."""
USER_STATED_CONFIDENCE = 0.75
"""The least confidence of a claim stated verbatim in the user's own notes (the user is the authority on them)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class EvidenceCheck:
    """The verdict of the fixed rules on one evidence item for one claim."""

    evidence_id: str
    """The evidence checked."""
    cited: bool
    """Whether the claim cited it."""
    coverage: float
    """Share of the claim's salient terms found in the item's context."""
    missing_numbers: tuple[str, ...]
    """Claim values (numbers, literals, exception names) absent from the cited text."""
    reverified: bool | None
    """For codebase evidence: whether the line still holds the text; None for other sources."""
    supports: bool
    """Cited, and passes every support rule."""
    contradicts: bool
    """Passes the contradiction rule (and does not support)."""
    unusable: str = ""
    """Why the item can neither support nor contradict (an instruction, a usage example), empty when usable."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ClaimValidation:
    """One claim, its checks and its confidence."""

    claim: Claim
    """The claim as validated (unknown ids already dropped)."""
    confidence: float
    """The formula's result, in [0, 1]."""
    method: ValidationMethod
    """How it was validated."""
    supporting_ids: tuple[str, ...]
    """Cited evidence that supports it."""
    contradicting_ids: tuple[str, ...]
    """Evidence of the gap that contradicts it."""
    supporting_sources: tuple[str, ...]
    """Independent supporting sources (``web:<domain>``, ``code:<line hash>``, ``memory``), first-seen order."""
    contradicting_sources: tuple[str, ...]
    """Independent contradicting sources."""
    relevance: float
    """Share of the question's terms and numbers covered by the claim and its support (0 when a rule fails)."""
    statement: bool
    """Whether the claim is a statement by the substance rule (a fragment is supported by nothing)."""
    checks: tuple[EvidenceCheck, ...]
    """Every check made, for the log."""
    reason: str
    """One line saying how the confidence came about."""
    user_stated: bool = False
    """Stated verbatim in the user's own notes (see the module docstring)."""
    off_topic: str = ""
    """Which relevance rule failed, empty when the claim answers the question."""
    value_support: bool = False
    """Its support carries a value or a binding (not only prose)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Validation:
    """All claims of one gap, validated; ``best`` is the one the decision is about."""

    question: str
    """The gap's query."""
    evidence_count: int
    """How much evidence the gap gathered (0 means abstain)."""
    claims: tuple[ClaimValidation, ...]
    """Every surviving claim, in input order."""
    dropped_claims: int
    """Claims lost because they cited no known evidence."""

    @property
    def best(self) -> ClaimValidation | None:
        """Return the claim the decision is about, by support quality, never by a model's order.

        Among claims that reach ``SETTLED_CONFIDENCE``, the most relevant wins (then the most confident, the most
        independent sources, value support); below it, the most confident. So a claim with two sources about
        another thing never pushes out one with one source about the thing asked, and a well-formed claim that
        nothing supports never wins over a supported one. Ties go to the earliest.
        """

        def key(item: ClaimValidation) -> tuple[bool, float, float, int, bool]:
            settled = item.confidence >= SETTLED_CONFIDENCE
            return (settled, item.relevance if settled else 0.0, item.confidence, len(item.supporting_sources),
                    item.value_support)  # fmt: skip

        best: ClaimValidation | None = None
        for item in self.claims:
            if best is None or key(item) > key(best):
                best = item
        return best

    @property
    def confidence(self) -> float:
        """Return the best claim's confidence, 0 without one."""
        return self.best.confidence if self.best else 0.0

    @property
    def method(self) -> ValidationMethod:
        """Return the best claim's method, ``single-source`` without one."""
        return self.best.method if self.best else "single-source"


def _norm_line(text: str) -> str:
    return " ".join(redact_secrets(text).split())


def _cited_text(item: Evidence, read_line: LineReader | None) -> tuple[str, bool | None]:
    # The text an item supports with, and for codebase evidence whether its matched line re-verified.
    if item.source_type != "codebase":
        return item.snippet, None
    first, cited = cited_span(item)
    if not cited or read_line is None or item.path is None or item.line is None:
        return "\n".join(cited), False
    held: list[str] = []
    for offset, expected in enumerate(cited, start=first):
        current = read_line(item.path, item.line + offset)
        if current is None or _norm_line(current) != _norm_line(expected):
            break
        held.append(expected)
    if not held:
        return "\n".join(cited), False
    return "\n".join(held), True


def _context(item: Evidence, text: str) -> str:
    # What an item says and where it says it: code adds its path and its enclosing def/class.
    if item.source_type != "codebase":
        return text
    return " ".join(part for part in (text, item.path or "", (item.scope or "").replace(".", " ")) if part)


def _unusable(item: Evidence, text: str) -> str:
    if reads_as_instruction(text):
        return "reads as an instruction to the agent"
    if item.role == "example":
        return "a usage example, not what the code does"
    return ""


def supports_text(claim_text: str, snippet: str) -> bool:
    """Return whether ``snippet`` supports ``claim_text`` by the values, bindings and names rules (no code re-read)."""
    return _supports(claim_text, snippet, snippet, comment=False)[0]


def _supports(claim_text: str, text: str, context: str, *, comment: bool) -> tuple[bool, float, tuple[str, ...]]:
    # (supports, coverage of the claim's terms in the context, claim values missing from the text); generic words
    # ("defaults", "value") are phrasing, not content, when the claim has others.
    terms = tuple(t for t in stemmed_salient_terms(claim_text) if t not in GENERIC_STEMS) or stemmed_salient_terms(
        claim_text
    )
    coverage = stemmed_term_coverage(terms, context) if terms else 0.0
    values = value_tokens(claim_text)
    missing = tuple(sorted(v for v in values if not has_value(text, v)))
    bound = bindings(text)
    words = names_in(claim_text)
    # Where the cited text binds one of the claim's values to a name, the claim must name that name (or every part of
    # it: "the confidence threshold is 0.7" and CONFIDENCE_THRESHOLD = 0.70); "exp_base defaults to 1" is not
    # supported by "multiplier: float = 1, exp_base: float = 2".
    claimed = bindings(claim_text)
    bindings_hold = True
    for value in {*values, *(v for _, v in claimed)}:
        holders = {n for n, v in bound if v == value}
        if holders and not any(n in words or set(n.split("_")) <= words for n in holders):
            bindings_hold = False
    if "=" in claim_text and not all(any(v == value for _, v in bound) for _, value in claimed):
        bindings_hold = False
    if values or bindings(claim_text):
        ok = not missing and bindings_hold and coverage >= SUPPORT_TERM_FRACTION and not comment
    else:
        ok = bool(terms) and stemmed_term_coverage(terms, context) >= PROSE_SUPPORT_FRACTION
    return ok, coverage, missing


def scope_of(item: Evidence) -> str:
    """Return where an item speaks from: a code line's file and enclosing def/class; the source type otherwise."""
    return f"{item.path}:{item.scope}" if item.source_type == "codebase" else item.source_type


def _check(
    claim: Claim,
    item: Evidence,
    text: str,
    reverified: bool | None,
    statement: bool,
    asked: frozenset[str],
    scopes: frozenset[str],
    anywhere: bool,
) -> EvidenceCheck:
    context = _context(item, text)
    unusable = _unusable(item, text)
    ok, coverage, missing = _supports(claim.text, text, context, comment=item.role == "comment")
    usable = reverified is not False and not unusable
    cited = item.id in claim.evidence_ids
    supports = statement and cited and usable and ok
    contradicts = False
    if not supports and usable and item.role != "comment":
        other = bindings(text, literal=True)
        # Where the item binds: code binds in its file and def/class, prose wherever it speaks of.
        place = f"{item.path} {(item.scope or '').replace('.', ' ')}" if item.source_type == "codebase" else context
        same_place = scope_of(item) in scopes
        asked_place = bool(asked) and asked <= names_in(place)
        mentions = asked <= names_in(context)
        for name, value in bindings(claim.text, literal=True):
            clash = any(n == name and v != value for n, v in other)
            if clash and (same_place or asked_place or (anywhere and mentions)):
                contradicts = True
                break
    return EvidenceCheck(
        evidence_id=item.id,
        cited=cited,
        coverage=round(coverage, 4),
        missing_numbers=missing,
        reverified=reverified,
        supports=supports,
        contradicts=contradicts,
        unusable=unusable,
    )


def independent_sources(items: Iterable[Evidence]) -> list[str]:
    """Return one key per independent source among ``items``, in first-seen order.

    Web: one per domain; memory: one for all. Code: items sharing a file, or sharing a normalized line across files
    (a copied line, a vendored copy, a generated file), are one source; the first item's key names it.
    """
    keys: list[str] = []
    code_seen: dict[str, str] = {}
    for item in items:
        if item.source_type != "codebase":
            if item.source_key not in keys:
                keys.append(item.source_key)
            continue
        marks = [f"line:{item.source_key}", f"file:{item.path or item.locator}"]
        known = next((code_seen[m] for m in marks if m in code_seen), None)
        key = known or item.source_key
        for mark in marks:
            code_seen.setdefault(mark, key)
        if known is None:
            keys.append(key)
    return keys


def _source_weight(index: int) -> float:
    return SOURCE_WEIGHTS[min(index, len(SOURCE_WEIGHTS) - 1)]


_DEFAULT_LIKE = re.compile(
    r"\bdefaults?\b|\bif\s+(?:i|you|we)\s+(?:do\s+not|don't)\s+(?:pass|set|give)|\bwithout\s+(?:passing|setting)",
    re.IGNORECASE,
)


def _user_stated(claim: Claim, supporting: list[Evidence]) -> bool:
    # The claim is a line of the user's own notes, word for word, and states something (a value or a name).
    wanted = _norm_line(claim.text).lower().lstrip("-*+ ")
    for item in supporting:
        if item.source_type != "memory":
            continue
        lines = {_norm_line(line).lower().lstrip("-*+ ") for line in item.snippet.splitlines()}
        # It states something specific: a value, a binding, an identifier or a proper name ("Priya").
        states = (
            value_tokens(claim.text)
            or bindings(claim.text)
            or any("_" in n for n in names_in(claim.text))
            or PROPER_NAME.search(claim.text)
        )
        if wanted in lines and states:
            return True
    return False


def _validate_one(question: str, claim: Claim, pool: EvidencePool, read_line: LineReader | None) -> ClaimValidation:
    statement = is_statement(claim.text) and not reads_as_instruction(claim.text)
    asked = frozenset(asked_names(question)[0])
    texts = {item.id: _cited_text(item, read_line) for item in pool}
    contexts = {item.id: _context(item, texts[item.id][0]) for item in pool}
    cited = [item for item in pool if item.id in claim.evidence_ids]
    scopes = frozenset(scope_of(item) for item in cited)
    # A question naming none of the places the claim speaks from cannot choose between places that bind the claim's
    # name to different values (one encoding's token id against another's): each contradicts it.
    anywhere = not any(about_scope(question, item) for item in cited)
    checks = tuple(_check(claim, item, *texts[item.id], statement, asked, scopes, anywhere) for item in pool)
    by_id = {item.id: item for item in pool}
    supporting = [c for c in checks if c.supports]
    support_items = [by_id[c.evidence_id] for c in supporting]
    support_keys = independent_sources(support_items)
    contra_keys = list(
        dict.fromkeys(
            by_id[c.evidence_id].source_key
            for c in checks
            if c.contradicts and by_id[c.evidence_id].source_key not in support_keys
        )
    )
    # A re-read code line vouches for a value it holds, or for a docstring of the very name the question asks about
    # (not of a method of it: StateGraph.add_edge's docstring says nothing of StateGraph.add_node); a docstring
    # sentence that only shares words with the question is prose like any other.
    valued = bool(value_tokens(claim.text) or bindings(claim.text))
    code_verified = any(
        c.reverified
        and (
            (is_code(by_id[c.evidence_id]) and valued)
            or bool(asked & names_in((by_id[c.evidence_id].scope or "").rsplit(".", 1)[-1]))
            or about_scope(question, by_id[c.evidence_id])
        )
        for c in supporting
    )
    strong = any(c.coverage >= 1.0 for c in supporting)
    value_support = bool(supporting) and valued

    missed = off_topic(question, claim, support_items, contexts) if supporting else ""
    covered_text = " ".join([claim.text, *(contexts[c.evidence_id] for c in supporting)])
    relevance = answer_relevance(question, covered_text)
    if relevance is None:  # a question with nothing to look for cannot be missed
        relevance = 1.0
    if relevance < RELEVANCE_FRACTION and not missed and supporting:
        missed = f"covers {relevance:.0%} of the question"

    # A note on how we set something up is no answer to what a library does by default.
    user_stated = bool(supporting) and _user_stated(claim, support_items)
    if user_stated and _DEFAULT_LIKE.search(question) and not _DEFAULT_LIKE.search(claim.text):
        user_stated = False
    score = sum(_source_weight(i) for i in range(len(support_keys)))
    score += CODE_BONUS if code_verified else 0.0
    score += STRONG_BONUS if strong and supporting else 0.0
    if user_stated:
        score = max(score, USER_STATED_CONFIDENCE)
    score -= CONTRADICTION_PENALTY * len(contra_keys)
    if missed:
        score = 0.0
    confidence = round(min(1.0, max(0.0, score)), 4)

    method: ValidationMethod
    if code_verified:
        method = "code-crossref"
    elif len(support_keys) >= 2:
        method = "multi-source"
    elif len(support_keys) == 1 and support_keys[0].startswith("web:") and strong:
        method = "web-confirm"
    else:
        method = "single-source"

    return ClaimValidation(
        claim=claim,
        confidence=confidence,
        method=method,
        supporting_ids=tuple(c.evidence_id for c in supporting),
        contradicting_ids=tuple(
            c.evidence_id for c in checks if c.contradicts and by_id[c.evidence_id].source_key in contra_keys
        ),
        supporting_sources=tuple(support_keys),
        contradicting_sources=tuple(contra_keys),
        relevance=0.0 if missed else round(relevance, 4),
        statement=statement,
        checks=checks,
        reason=_explain(statement, checks, support_keys, contra_keys, code_verified, missed, user_stated),
        user_stated=user_stated,
        off_topic=missed,
        value_support=value_support,
    )


def _explain(
    statement: bool,
    checks: Iterable[EvidenceCheck],
    support_keys: list[str],
    contra_keys: list[str],
    code_verified: bool,
    off_topic: str,
    user_stated: bool,
) -> str:
    parts: list[str] = []
    if not statement:
        parts.append(
            f"not a statement (a definition, or {MIN_CLAIM_WORDS}+ words with a plain one, not an instruction)"
        )
    elif not support_keys:
        failures = []
        for c in checks:
            if not c.cited:
                continue
            if c.unusable:
                failures.append(f"{c.evidence_id}: {c.unusable}")
            elif c.reverified is False:
                failures.append(f"{c.evidence_id}: code line changed or unreadable")
            elif c.missing_numbers:
                failures.append(f"{c.evidence_id}: value {', '.join(c.missing_numbers)} not in the cited text")
            else:
                failures.append(f"{c.evidence_id}: only {c.coverage:.0%} of the claim's terms")
        parts.append("no cited evidence supports the claim" + (f" ({'; '.join(failures)})" if failures else ""))
    elif len(support_keys) == 1:
        parts.append(f"only one independent source ({support_keys[0]})")
    else:
        parts.append(f"{len(support_keys)} independent sources agree ({', '.join(support_keys)})")
    if code_verified:
        parts.append("code line re-verified")
    if user_stated:
        parts.append("stated in the user's own notes")
    if contra_keys:
        parts.append(f"contradicted by {', '.join(contra_keys)}")
    if off_topic:
        parts.append(f"off-topic: the claim {off_topic}")
    return "; ".join(parts)


def validate_claims(
    question: str,
    claims: Iterable[Claim],
    pool: EvidencePool,
    *,
    read_line: LineReader | None = None,
) -> Validation:
    """Validate each claim against the pool by the fixed rules of this module.

    Args:
        question: the gap's query, for the relevance rule.
        claims: claims citing pool ids; unknown ids are dropped first, and claims left without evidence are lost.
        pool: every evidence item of the gap.
        read_line: reads a file's current line for codebase re-verification; without it code evidence never supports.
    """
    claims = list(claims)
    cleaned = clean_claims(claims, pool)
    return Validation(
        question=question,
        evidence_count=len(pool),
        claims=tuple(_validate_one(question, claim, pool, read_line) for claim in cleaned),
        dropped_claims=len(claims) - len(cleaned),
    )


def validation_summary(validation: Validation) -> Mapping[str, Any]:
    """Return the numbers of a validation as a JSON-ready mapping (for logs and graph state)."""
    best = validation.best
    return {
        "confidence": validation.confidence,
        "method": validation.method,
        "supporting_ids": list(best.supporting_ids) if best else [],
        "contradicting_ids": list(best.contradicting_ids) if best else [],
        "independent_sources": len(best.supporting_sources) if best else 0,
    }
