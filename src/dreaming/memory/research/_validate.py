"""Validation: fixed support rules and the one confidence formula. Nothing here reads a model's opinion.

**Statement.** A claim that is not a statement by the substance rule of ``_statements`` (a definition, or at least
``MIN_CLAIM_WORDS`` word tokens with a plain word among them) is supported by nothing: ``max_gaps,`` is not a
finding, however well it matches.

**Support.** A claim is supported by one cited evidence item when all of these hold:

1. the claim has at least one salient term (identifiers whole, stemmed words minus stop words, see ``_text``), and at
   least ``SUPPORT_TERM_FRACTION`` (0.6) of them occur in the item's text;
2. every number written in the claim occurs in the item's text (``"0.70"`` equals ``"0.7"``, ``"10,000"`` equals
   ``"10000"``);
3. for codebase evidence, the item's text is only the **cited lines**: the matched line, plus a definition's docstring
   on the next line (``_statements.cited_code_lines``), never the context lines around them, which a reader sees but
   nothing rests on (an injected comment above a constant supports nothing). Each cited line is re-read now at
   ``path:line``, ``path:line+1`` through the injected ``read_line`` and must equal the recorded line
   (whitespace-trimmed, secrets redacted). A stale or unreadable matched line supports nothing; a stale docstring is
   dropped from the text.

For web and memory evidence the item's text is its snippet.

A support is **strong** when the item's text holds *all* of the claim's salient terms (coverage 1.0).

**Contradiction.** Any evidence of the gap (cited or not) contradicts a claim when the claim states numbers, the item's
text covers at least ``SUPPORT_TERM_FRACTION`` of the claim's salient terms, lacks at least one of the claim's
numbers, and states some other number. A claim without numbers is never contradicted by this rule. Codebase
evidence must re-verify to count either way.

**Independence.** One source per web domain, one per file, and all memory evidence together is one source. A source
counts as contradicting only when none of its evidence supports the claim.

**Relevance.** The claim plus its supporting items' texts must cover at least ``RELEVANCE_FRACTION`` (0.5) of the
question's salient terms and numbers; otherwise the confidence is 0 (an off-topic truth is not an answer).

**Confidence**, rounded to 4 places and clamped to [0, 1]::

    sum(SOURCE_WEIGHTS[i] for the i-th supporting source; 0.05 for each beyond the fourth)   0.45, 0.25, 0.10, 0.05
    + CODE_BONUS      0.25  when a supporting codebase line re-verified
    + STRONG_BONUS    0.10  when some supporting snippet is a strong support
    - CONTRADICTION_PENALTY 0.25 per contradicting source

so, at the default threshold 0.7: one re-verified code file gives 0.70 (0.80 strong), kept as ``code-crossref``; two
agreeing web domains give 0.70 (0.80 strong), kept as ``multi-source``; one web domain gives 0.55 when strong
(``web-confirm``) and 0.45 when weak (``single-source``), both discarded: one web page is never enough alone. Memory
alone is ``single-source`` (0.45 / 0.55).

**Method**: ``code-crossref`` when a re-verified code line supports; else ``multi-source`` with two or more supporting
sources; else ``web-confirm`` for one strongly supporting web domain; else ``single-source`` (also for no support).

Only these constants and the rules above produce numbers: evidence text is read for terms and numbers of the claim and
never parsed for scores, so a snippet saying "confidence 1.0, keep this" changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dreaming.memory.research._claims import Claim, clean_claims
from dreaming.memory.research._evidence import Evidence, EvidencePool, redact_secrets
from dreaming.memory.research._statements import MIN_CLAIM_WORDS, cited_code_lines, is_statement
from dreaming.memory.research._text import numbers, salient_terms, term_coverage

__all__ = [
    "CODE_BONUS",
    "CONTRADICTION_PENALTY",
    "RELEVANCE_FRACTION",
    "SOURCE_WEIGHTS",
    "STRONG_BONUS",
    "SUPPORT_TERM_FRACTION",
    "ClaimValidation",
    "EvidenceCheck",
    "LineReader",
    "Validation",
    "ValidationMethod",
    "question_coverage",
    "supports_text",
    "validate_claims",
    "validation_summary",
]

ValidationMethod = Literal["code-crossref", "multi-source", "web-confirm", "single-source"]
LineReader = Callable[[str, int], "str | None"]
"""``read_line(path, line)``: the file's current text at that 1-based line, or None when it cannot be read."""

SUPPORT_TERM_FRACTION = 0.6
"""Share of the claim's salient terms a snippet must contain to support (or contradict) it."""
RELEVANCE_FRACTION = 0.5
"""Share of the question's terms and numbers the claim and its support must cover."""
SOURCE_WEIGHTS = (0.45, 0.25, 0.10, 0.05)
"""Confidence added by the first, second, third and each further independent supporting source."""
CODE_BONUS = 0.25
"""Added once when a supporting code line was re-read and still holds the text."""
STRONG_BONUS = 0.10
"""Added once when some supporting snippet contains every salient term of the claim."""
CONTRADICTION_PENALTY = 0.25
"""Subtracted per independent contradicting source."""


@dataclass(frozen=True, kw_only=True, slots=True)
class EvidenceCheck:
    """The verdict of the fixed rules on one evidence item for one claim."""

    evidence_id: str
    """The evidence checked."""
    cited: bool
    """Whether the claim cited it."""
    coverage: float
    """Share of the claim's salient terms found in the snippet."""
    missing_numbers: tuple[str, ...]
    """Claim numbers absent from the snippet."""
    reverified: bool | None
    """For codebase evidence: whether the line still holds the text; None for other sources."""
    supports: bool
    """Cited, and passes every support rule."""
    contradicts: bool
    """Passes the contradiction rule (and does not support)."""


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
    """Independent supporting sources (``web:<domain>``, ``codebase:<path>``, ``memory``), first-seen order."""
    contradicting_sources: tuple[str, ...]
    """Independent contradicting sources."""
    relevance: float
    """Share of the question's terms and numbers covered by the claim and its support."""
    statement: bool
    """Whether the claim is a statement by the substance rule (a fragment is supported by nothing)."""
    checks: tuple[EvidenceCheck, ...]
    """Every check made, for the log."""
    reason: str
    """One line saying how the confidence came about."""


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
        """Return the claim with the highest confidence (then most sources, then earliest), or None."""
        best: ClaimValidation | None = None
        for item in self.claims:
            key = (item.confidence, len(item.supporting_sources))
            if best is None or key > (best.confidence, len(best.supporting_sources)):
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
    cited = cited_code_lines(item)
    if not cited or read_line is None or item.path is None or item.line is None:
        return "\n".join(cited), False
    held: list[str] = []
    for offset, expected in enumerate(cited):
        current = read_line(item.path, item.line + offset)
        if current is None or _norm_line(current) != _norm_line(expected):
            break
        held.append(expected)
    if not held:
        return "\n".join(cited), False
    return "\n".join(held), True


def supports_text(claim_text: str, snippet: str) -> bool:
    """Return whether ``snippet`` supports ``claim_text`` by rules 1 and 2 (terms and numbers; no code re-read)."""
    terms = salient_terms(claim_text)
    return (
        bool(terms)
        and term_coverage(terms, snippet) >= SUPPORT_TERM_FRACTION
        and numbers(claim_text) <= numbers(snippet)
    )


def _check(claim: Claim, item: Evidence, text: str, reverified: bool | None, statement: bool) -> EvidenceCheck:
    terms = salient_terms(claim.text)
    claim_numbers = numbers(claim.text)
    snippet_numbers = numbers(text)
    coverage = term_coverage(terms, text) if terms else 0.0
    missing = tuple(sorted(claim_numbers - snippet_numbers))
    usable = reverified is not False
    on_topic = bool(terms) and coverage >= SUPPORT_TERM_FRACTION
    cited = item.id in claim.evidence_ids
    supports = statement and cited and usable and on_topic and not missing
    contradicts = (
        not supports
        and usable
        and on_topic
        and bool(claim_numbers)
        and bool(missing)
        and bool(snippet_numbers - claim_numbers)
    )
    return EvidenceCheck(
        evidence_id=item.id,
        cited=cited,
        coverage=round(coverage, 4),
        missing_numbers=missing,
        reverified=reverified,
        supports=supports,
        contradicts=contradicts,
    )


def question_coverage(question: str, text: str) -> float | None:
    """Return the share of the question's salient terms and numbers found in ``text``; None when it has neither."""
    terms = salient_terms(question)
    wanted = numbers(question)
    total = len(terms) + len(wanted)
    if total == 0:
        return None
    return (term_coverage(terms, text) * len(terms) + len(wanted & numbers(text))) / total


def _source_weight(index: int) -> float:
    return SOURCE_WEIGHTS[min(index, len(SOURCE_WEIGHTS) - 1)]


def _validate_one(question: str, claim: Claim, pool: EvidencePool, read_line: LineReader | None) -> ClaimValidation:
    statement = is_statement(claim.text)
    texts = {item.id: _cited_text(item, read_line) for item in pool}
    checks = tuple(_check(claim, item, *texts[item.id], statement) for item in pool)
    by_id = {item.id: item for item in pool}
    supporting = [c for c in checks if c.supports]
    support_keys = list(dict.fromkeys(by_id[c.evidence_id].source_key for c in supporting))
    contra_keys = list(
        dict.fromkeys(
            by_id[c.evidence_id].source_key
            for c in checks
            if c.contradicts and by_id[c.evidence_id].source_key not in support_keys
        )
    )
    code_verified = any(c.reverified for c in supporting)
    strong = any(c.coverage >= 1.0 for c in supporting)

    covered_text = " ".join([claim.text, *(texts[c.evidence_id][0] for c in supporting)])
    relevance = question_coverage(question, covered_text)
    if relevance is None:  # a question with nothing to look for cannot be missed
        relevance = 1.0

    score = sum(_source_weight(i) for i in range(len(support_keys)))
    score += CODE_BONUS if code_verified else 0.0
    score += STRONG_BONUS if strong and supporting else 0.0
    score -= CONTRADICTION_PENALTY * len(contra_keys)
    if relevance < RELEVANCE_FRACTION:
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
        relevance=round(relevance, 4),
        statement=statement,
        checks=checks,
        reason=_explain(statement, checks, support_keys, contra_keys, code_verified, relevance),
    )


def _explain(
    statement: bool,
    checks: Iterable[EvidenceCheck],
    support_keys: list[str],
    contra_keys: list[str],
    code_verified: bool,
    relevance: float,
) -> str:
    parts: list[str] = []
    if not statement:
        parts.append(f"not a statement (a definition, or {MIN_CLAIM_WORDS}+ words with a plain one)")
    elif not support_keys:
        failures = []
        for c in checks:
            if not c.cited:
                continue
            if c.reverified is False:
                failures.append(f"{c.evidence_id}: code line changed or unreadable")
            elif c.missing_numbers:
                failures.append(f"{c.evidence_id}: number {', '.join(c.missing_numbers)} not in snippet")
            else:
                failures.append(f"{c.evidence_id}: only {c.coverage:.0%} of the claim's terms")
        parts.append("no cited evidence supports the claim" + (f" ({'; '.join(failures)})" if failures else ""))
    elif len(support_keys) == 1:
        parts.append(f"only one independent source ({support_keys[0]})")
    else:
        parts.append(f"{len(support_keys)} independent sources agree ({', '.join(support_keys)})")
    if code_verified:
        parts.append("code line re-verified")
    if contra_keys:
        parts.append(f"contradicted by {', '.join(contra_keys)}")
    if relevance < RELEVANCE_FRACTION:
        parts.append(f"off-topic: covers {relevance:.0%} of the question")
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
