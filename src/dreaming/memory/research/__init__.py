"""Gap research, the deterministic part: evidence, claims, validation, finding decisions, records, insights, DREAMS.md.

Imports no LangGraph and no LLM code; the research subgraph calls these functions. Its terms are the stemmed terms
of ``memory/_terms.py`` (``stemmed_*``), not memory search's index terms.
"""

from __future__ import annotations

from dreaming.memory._terms import identifiers, search_words, stemmed_salient_terms, stemmed_term_coverage
from dreaming.memory.research._evidence import (
    CODE_ROLES,
    REDACTED,
    Claim,
    Evidence,
    EvidencePool,
    LineRole,
    SourceHit,
    SourceType,
    clean_claims,
    content_hash,
    fence_evidence,
    fence_hits,
    redact_secrets,
)
from dreaming.memory.research._insights import (
    Conflict,
    InsightWrite,
    ResearchInsight,
    read_research_insights,
    research_slug,
    write_research_insight,
)
from dreaming.memory.research._records import (
    FindingDecision,
    FindingOutcome,
    Outcome,
    ResearchFinding,
    append_research_log,
    decide,
    finding_from_validation,
    research_log_row,
)
from dreaming.memory.research._relevance import GENERIC_STEMS, question_kind
from dreaming.memory.research._render import render_rem_research_section
from dreaming.memory.research._statements import PROSE_SUFFIXES, definition_name, is_statement, open_brackets
from dreaming.memory.research._synthesize import synthesize_extractive
from dreaming.memory.research._text import (
    ABBREVIATIONS,
    asked_names,
    bindings,
    names_in,
    numbers,
    reads_as_instruction,
    short_form,
)
from dreaming.memory.research._validate import (
    ClaimValidation,
    EvidenceCheck,
    LineReader,
    Validation,
    ValidationMethod,
    supports_text,
    validate_claims,
    validation_summary,
)

__all__ = [
    "ABBREVIATIONS",
    "CODE_ROLES",
    "GENERIC_STEMS",
    "PROSE_SUFFIXES",
    "REDACTED",
    "Claim",
    "ClaimValidation",
    "Conflict",
    "Evidence",
    "EvidenceCheck",
    "EvidencePool",
    "FindingDecision",
    "FindingOutcome",
    "InsightWrite",
    "LineReader",
    "LineRole",
    "Outcome",
    "ResearchFinding",
    "ResearchInsight",
    "SourceHit",
    "SourceType",
    "Validation",
    "ValidationMethod",
    "append_research_log",
    "asked_names",
    "bindings",
    "clean_claims",
    "content_hash",
    "decide",
    "definition_name",
    "fence_evidence",
    "fence_hits",
    "finding_from_validation",
    "identifiers",
    "is_statement",
    "names_in",
    "numbers",
    "open_brackets",
    "question_kind",
    "read_research_insights",
    "reads_as_instruction",
    "redact_secrets",
    "render_rem_research_section",
    "research_log_row",
    "research_slug",
    "search_words",
    "short_form",
    "stemmed_salient_terms",
    "stemmed_term_coverage",
    "supports_text",
    "synthesize_extractive",
    "validate_claims",
    "validation_summary",
    "write_research_insight",
]
