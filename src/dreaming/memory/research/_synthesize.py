"""Extractive synthesis: without a model, the claim is the evidence's own best sentence, never a generated one."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from dreaming.memory.research._claims import Claim
from dreaming.memory.research._evidence import REDACTED, Evidence
from dreaming.memory.research._text import numbers, salient_terms, term_coverage
from dreaming.memory.research._validate import RELEVANCE_FRACTION, supports_text

__all__ = ["MAX_CLAIM_CHARS", "synthesize_extractive"]

MAX_CLAIM_CHARS = 400
"""Longer sentences are not used as claims (a minified line is not a finding)."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")


@dataclass(frozen=True, slots=True)
class _Candidate:
    text: str
    evidence: Evidence
    coverage: float
    is_matched_line: bool


def _sentences(item: Evidence) -> list[str]:
    # Code and memory are line-oriented; prose is split into sentences.
    lines = [line.strip() for line in item.snippet.splitlines()]
    if item.source_type != "web":
        return [line for line in lines if line]
    out: list[str] = []
    for line in lines:
        out.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return out


def _question_coverage(question: str, text: str) -> float:
    terms = salient_terms(question)
    wanted = numbers(question)
    total = len(terms) + len(wanted)
    if total == 0:
        return 0.0
    return (term_coverage(terms, text) * len(terms) + len(wanted & numbers(text))) / total


def synthesize_extractive(question: str, evidence: Iterable[Evidence], *, max_claims: int = 1) -> list[Claim]:
    """Draw up to ``max_claims`` claims from the evidence itself, each citing every snippet that supports it.

    Each sentence (each line, for code and memory) of each snippet is ranked by the share of the question's terms
    and numbers it covers, then the retrieval score of its evidence, then whether it is a code match's own line, then
    arrival order. Sentences holding a redacted secret are skipped. Sentences covering under ``RELEVANCE_FRACTION``
    of the question are never claims; with no such sentence, there is no claim and the gap is not answered. A claim
    cites its own evidence first, then every other snippet that supports it by the validation rules (terms, numbers).
    """
    items = list(evidence)
    candidates: list[_Candidate] = []
    for item in items:
        for sentence in _sentences(item):
            # A line that held a secret is about the secret, not an answer: never a claim.
            if len(sentence) > MAX_CLAIM_CHARS or REDACTED in sentence or not salient_terms(sentence):
                continue
            coverage = _question_coverage(question, sentence)
            if coverage >= RELEVANCE_FRACTION:
                matched = item.line_text is not None and sentence == item.line_text.strip()
                candidates.append(_Candidate(sentence, item, coverage, matched))
    order = {item.id: index for index, item in enumerate(items)}
    candidates.sort(key=lambda c: (-c.coverage, -c.evidence.score, not c.is_matched_line, order[c.evidence.id]))

    claims: list[Claim] = []
    seen: set[str] = set()
    for candidate in candidates:
        key = " ".join(candidate.text.lower().split())
        if key in seen:
            continue
        seen.add(key)
        others = [
            item.id for item in items if item is not candidate.evidence and supports_text(candidate.text, item.snippet)
        ]
        claims.append(Claim(text=candidate.text, evidence_ids=(candidate.evidence.id, *others)))
        if len(claims) >= max_claims:
            break
    return claims
