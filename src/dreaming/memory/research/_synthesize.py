"""Extractive synthesis: without a model, the claim is the evidence's own best sentence, never a generated one."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from dreaming.memory.research._claims import Claim
from dreaming.memory.research._evidence import REDACTED, Evidence
from dreaming.memory.research._statements import cited_code_lines, code_statement, is_statement
from dreaming.memory.research._text import salient_terms, term_coverage
from dreaming.memory.research._validate import RELEVANCE_FRACTION, question_coverage, supports_text

__all__ = ["MAX_CLAIM_CHARS", "synthesize_extractive"]

MAX_CLAIM_CHARS = 400
"""Longer sentences are not used as claims (a minified line is not a finding)."""

_NAMED_DEFINITION, _PROSE, _OTHER_CODE = 0, 1, 2
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")


@dataclass(frozen=True, slots=True)
class _Candidate:
    text: str
    evidence: Evidence
    coverage: float
    tier: int


def _sentences(item: Evidence) -> list[str]:
    # Memory is line-oriented; web prose is split into sentences. Fragments are never claims.
    lines = [line.strip() for line in item.snippet.splitlines()]
    if item.source_type != "web":
        return [line for line in lines if line and is_statement(line)]
    out: list[str] = []
    for line in lines:
        out.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return [sentence for sentence in out if is_statement(sentence)]


def _statements(question: str, item: Evidence) -> list[tuple[str, int]]:
    # (text, tier): 0 a definition of a name the question asks about, 1 prose, 2 any other code statement.
    if item.source_type != "codebase":
        return [(sentence, _PROSE) for sentence in _sentences(item)]
    found = code_statement(item)
    if found is None:
        return []
    if found.kind == "prose":
        return [(found.text, _PROSE)]
    names_it = found.name is not None and term_coverage(salient_terms(question), found.name) >= RELEVANCE_FRACTION
    return [(found.text, _NAMED_DEFINITION if found.kind == "definition" and names_it else _OTHER_CODE)]


def _support_text(item: Evidence) -> str:
    # What another piece of evidence can back a claim with: a code match's cited lines, else its snippet.
    return "\n".join(cited_code_lines(item)) if item.source_type == "codebase" else item.snippet


def synthesize_extractive(question: str, evidence: Iterable[Evidence], *, max_claims: int = 1) -> list[Claim]:
    """Draw up to ``max_claims`` claims from the evidence itself, each citing every snippet that supports it.

    Candidates are statements (``_statements``): each sentence of web prose, each line of memory, and for a codebase
    match the one statement its matched line offers (a definition with its docstring, a docstring or comment, a prose
    file's line, or another substantive code line), never a context line. Fragments and lines holding a redacted
    secret are never candidates. Candidates covering under ``RELEVANCE_FRACTION`` of the question's terms and numbers
    are dropped; the rest are ranked by that coverage, then by kind (a definition of a name the question asks about,
    then prose, then other code), then the retrieval score of their evidence, then arrival order. With no candidate
    there is no claim and the gap is not answered. A claim cites its own evidence first, then every other item that
    supports it by the validation rules (terms, numbers) on that item's cited text.
    """
    items = list(evidence)
    candidates: list[_Candidate] = []
    for item in items:
        for text, tier in _statements(question, item):
            # A line that held a secret is about the secret, not an answer: never a claim.
            if len(text) > MAX_CLAIM_CHARS or REDACTED in text or not salient_terms(text):
                continue
            coverage = question_coverage(question, text) or 0.0
            if coverage >= RELEVANCE_FRACTION:
                candidates.append(_Candidate(text, item, coverage, tier))
    order = {item.id: index for index, item in enumerate(items)}
    candidates.sort(key=lambda c: (-c.coverage, c.tier, -c.evidence.score, order[c.evidence.id]))

    claims: list[Claim] = []
    seen: set[str] = set()
    for candidate in candidates:
        key = " ".join(candidate.text.lower().split())
        if key in seen:
            continue
        seen.add(key)
        others = [
            item.id
            for item in items
            if item is not candidate.evidence and supports_text(candidate.text, _support_text(item))
        ]
        claims.append(Claim(text=candidate.text, evidence_ids=(candidate.evidence.id, *others)))
        if len(claims) >= max_claims:
            break
    return claims
