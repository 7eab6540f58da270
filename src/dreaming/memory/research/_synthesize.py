"""Extractive synthesis: without a model, the claim is the evidence's own best sentence, never a generated one."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from dreaming.memory._terms import stemmed_salient_terms
from dreaming.memory.research._evidence import REDACTED, Claim, Evidence
from dreaming.memory.research._relevance import RELEVANCE_FRACTION, answer_relevance, question_kind
from dreaming.memory.research._statements import cited_code_lines, code_statement, is_statement
from dreaming.memory.research._text import (
    asked_names,
    bindings,
    names_in,
    reads_as_instruction,
    value_tokens,
    with_abbreviations,
)
from dreaming.memory.research._validate import supports_text

__all__ = ["MAX_CLAIM_CHARS", "MAX_EXTRACTIVE_CLAIMS", "synthesize_extractive"]

MAX_CLAIM_CHARS = 400
"""Longer sentences are not used as claims (a minified line is not a finding)."""
MAX_EXTRACTIVE_CLAIMS = 12
"""Candidates drawn per gap; validation picks the best surviving one."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")
_LIST_LEAD = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")


@dataclass(frozen=True, slots=True)
class _Candidate:
    text: str
    evidence: Evidence
    coverage: float
    tier: int


def _sentences(item: Evidence) -> list[str]:
    # Memory is line-oriented; web prose is split into sentences. Fragments and instructions are never claims.
    lines = [_LIST_LEAD.sub("", line).strip() for line in item.snippet.splitlines()]
    if item.source_type != "web":
        return [line for line in lines if line and is_statement(line) and not reads_as_instruction(line)]
    out: list[str] = []
    for line in lines:
        out.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return [sentence for sentence in out if is_statement(sentence) and not reads_as_instruction(sentence)]


def _tier(kind: str, statement_kind: str, names_it: bool, has_value: bool) -> int:
    # Lower is better: what the question asks for first (a definition of the asked name, a raise, a sentence).
    if kind == "value":
        if statement_kind == "definition":
            return 0 if names_it else 1
        return 1 if has_value else 3
    if kind == "exception":
        return {"raise": 0, "prose": 1 if has_value else 2, "definition": 2}.get(statement_kind, 3)
    return {"prose": 0, "signature": 1, "raise": 1}.get(statement_kind, 2)


def _statements(question: str, item: Evidence) -> list[tuple[str, int]]:
    kind = question_kind(question)
    if item.source_type != "codebase":
        return [(s, _tier(kind, "prose", False, bool(value_tokens(s) or bindings(s)))) for s in _sentences(item)]
    found = code_statement(item)
    if found is None or reads_as_instruction(found.text):
        return []
    names, _ = asked_names(question)
    wanted = with_abbreviations([*names, *stemmed_salient_terms(question)])
    in_scope = bool(names) and bool(set(names) & names_in((item.scope or "").replace(".", " ")))
    names_it = found.name is not None and bool(names_in(found.name) & wanted) and (in_scope or not names)
    names_it = names_it or (found.name is not None and found.name.lower() in {n.replace("_", "") for n in names})
    return [(found.text, _tier(kind, found.kind, names_it, bool(value_tokens(found.text))))]


def _support_text(item: Evidence) -> str:
    # What another piece of evidence can back a claim with: a code match's cited lines, else its snippet.
    return "\n".join(cited_code_lines(item)) if item.source_type == "codebase" else item.snippet


def synthesize_extractive(
    question: str, evidence: Iterable[Evidence], *, max_claims: int = MAX_EXTRACTIVE_CLAIMS
) -> list[Claim]:
    """Draw up to ``max_claims`` claims from the evidence itself, each citing every snippet that supports it.

    Candidates are statements: each sentence of web prose, each line of memory, and for a codebase match the one
    statement its matched line offers (``_statements.code_statement``: a definition with its docstring, a raise, a
    docstring or comment, another substantive line, with its enclosing scope), never a context line, never a usage
    example, never an instruction. Fragments and lines holding a redacted secret are never candidates. Candidates
    covering under ``RELEVANCE_FRACTION`` of the question's terms and numbers (with a code match's path) are
    dropped; the rest are ranked by what the question asks for (``question_kind``: a definition binding an asked
    name, a raise, a sentence), then by that coverage, then the retrieval score of their evidence, then arrival
    order. Validation picks among them. A claim cites its own evidence first, then every other item that supports
    it by the validation rules (values, bindings, terms) on that item's cited text.
    """
    items = list(evidence)
    candidates: list[_Candidate] = []
    for item in items:
        where = item.path or "" if item.source_type == "codebase" else ""
        for text, tier in _statements(question, item):
            # A line that held a secret is about the secret, not an answer: never a claim.
            if len(text) > MAX_CLAIM_CHARS or REDACTED in text or not stemmed_salient_terms(text):
                continue
            coverage = answer_relevance(question, f"{text} {where}") or 0.0
            if coverage >= RELEVANCE_FRACTION:
                candidates.append(_Candidate(text, item, coverage, tier))
    order = {item.id: index for index, item in enumerate(items)}
    candidates.sort(key=lambda c: (c.tier, -c.coverage, -c.evidence.score, order[c.evidence.id]))

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
