"""PR #65589's fingerprint, dedup, quality-gate, composite and batch-filter cases (reference B1.3), ported."""

from __future__ import annotations

import math
import re
from dataclasses import FrozenInstanceError, dataclass

import pytest

from dreaming.config import BudgetConfig
from dreaming.llm.budget import (
    Allowed,
    CandidateGuard,
    Skipped,
    filter_candidates,
    is_low_quality,
)
from dreaming.memory import fingerprint

DEFAULTS = BudgetConfig()


def guard(config: BudgetConfig = DEFAULTS, *, tripped: bool = False) -> CandidateGuard:
    return CandidateGuard(config, lambda: tripped)


# Fingerprint


def test_fingerprint_is_stable() -> None:
    assert fingerprint("user prefers dark mode") == fingerprint("user prefers dark mode")


def test_fingerprint_normalizes_case_and_whitespace() -> None:
    assert fingerprint("  Hello   World  ") == fingerprint("hello world")
    assert fingerprint("a\t\nb") == fingerprint("a b")


def test_fingerprint_distinguishes_different_text() -> None:
    assert fingerprint("user prefers dark mode") != fingerprint("user prefers light mode")


@pytest.mark.parametrize("text", ["", "x", "z" * 100_000, "ünïcödé ✓"])
def test_fingerprint_is_16_lowercase_hex(text: str) -> None:
    assert re.fullmatch(r"[0-9a-f]{16}", fingerprint(text))


def test_fingerprint_is_sha256_prefix() -> None:
    # sha256("hello world")
    assert fingerprint(" Hello  WORLD ") == "b94d27b9934d3e08"


# Dedup


def test_first_sighting_allowed_second_duplicate() -> None:
    g = guard()
    assert g.check("a fact", 0.5, 2) == Allowed()
    second = g.check("a fact", 0.5, 2)
    assert isinstance(second, Skipped) and second.reason == "duplicate"


def test_case_and_whitespace_variant_is_duplicate() -> None:
    g = guard()
    g.check("A  Fact", 0.5, 2)
    decision = g.check(" a fact ", 0.5, 2)
    assert isinstance(decision, Skipped) and decision.reason == "duplicate"


def test_different_snippet_is_not_duplicate() -> None:
    g = guard()
    g.check("alpha", 0.5, 2)
    assert g.check("beta", 0.5, 2) == Allowed()


def test_processed_count_counts_distinct() -> None:
    g = guard()
    for text in ("a", "b", "a"):
        g.check(text, 0.5, 2)
    assert g.processed_count == 2


def test_two_guards_do_not_share_state() -> None:
    first, second = guard(), guard()
    first.check("shared", 0.5, 2)
    assert second.check("shared", 0.5, 2) == Allowed()


# Quality gate


@pytest.mark.parametrize(
    ("confidence", "recalls", "low"),
    [
        (0.5, 2, False),
        (0.0, 2, True),
        (0.5, 0, True),
        (math.nan, 2, True),
        (-0.1, 2, True),
        (0.5, math.nan, True),
        (math.inf, 2, True),  # not in the PR: infinity is not finite, so low quality
        (0.5, -math.inf, True),
        (0.05, 1, False),  # exactly at the thresholds passes (>=)
        (0.049, 1, True),
        (0.05, 0.999, True),
    ],
)
def test_quality_gate_defaults(confidence: float, recalls: float, low: bool) -> None:
    assert is_low_quality(confidence, recalls, DEFAULTS) is low


@pytest.mark.parametrize(
    ("confidence", "recalls", "low"),
    [(0.3, 5, True), (0.8, 2, True), (0.8, 5, False), (0.5, 3, False), (0.8, 3, False)],
)
def test_quality_gate_custom_thresholds(confidence: float, recalls: float, low: bool) -> None:
    config = BudgetConfig(min_confidence=0.5, min_recalls=3)
    assert is_low_quality(confidence, recalls, config) is low


def test_low_quality_candidate_is_not_remembered() -> None:
    g = guard()
    assert isinstance(g.check("text", 0.0, 0), Skipped)
    assert g.check("text", 0.5, 2) == Allowed()
    assert g.processed_count == 1


# Composite order: budget -> quality -> duplicate


def test_valid_candidate_allowed() -> None:
    assert guard().check("fresh insight", 0.9, 3) == Allowed()


def test_defaults_allow_minimal_candidate() -> None:
    assert guard().check("minimal", 0.06, 1) == Allowed()


def test_duplicate_reason() -> None:
    g = guard()
    g.check("same", 0.9, 3)
    assert g.check("same", 0.9, 3) == Skipped(
        reason="duplicate", detail=f"fingerprint {fingerprint('same')} already seen this run"
    )


def test_low_quality_reason() -> None:
    decision = guard().check("zero", 0.0, 3)
    assert isinstance(decision, Skipped) and decision.reason == "low_quality"


def test_budget_wins_over_quality_and_duplicate() -> None:
    tripped = {"value": False}
    g = CandidateGuard(DEFAULTS, lambda: tripped["value"])
    g.check("seen", 0.9, 3)
    tripped["value"] = True
    for text, confidence in (("seen", 0.9), ("junk", 0.0), ("new", 0.9)):
        decision = g.check(text, confidence, 3)
        assert isinstance(decision, Skipped) and decision.reason == "budget_exceeded"


def test_quality_wins_over_duplicate() -> None:
    g = guard()
    g.check("seen", 0.9, 3)
    decision = g.check("seen", 0.0, 3)
    assert isinstance(decision, Skipped) and decision.reason == "low_quality"


def test_decisions_are_frozen() -> None:
    decision = Skipped(reason="duplicate")
    with pytest.raises(FrozenInstanceError):
        decision.reason = "low_quality"  # type: ignore[misc]


# Batch filter (score mapped to confidence, as upstream)


@dataclass(frozen=True)
class Ranked:
    snippet: str
    score: float
    recalls: float


def run_filter(items: list[Ranked], g: CandidateGuard | None = None):  # type: ignore[no-untyped-def]
    return filter_candidates(
        items, g or guard(), text=lambda r: r.snippet, confidence=lambda r: r.score, recalls=lambda r: r.recalls
    )


def test_filter_all_valid() -> None:
    result = run_filter([Ranked("alpha", 0.8, 3), Ranked("beta", 0.8, 3), Ranked("gamma", 0.8, 3)])
    assert [r.snippet for r in result.passed] == ["alpha", "beta", "gamma"]
    assert (result.duplicate, result.low_quality, result.budget_exceeded) == (0, 0, 0)


def test_filter_counts_duplicates() -> None:
    result = run_filter([Ranked("same content", 0.8, 3), Ranked("same content", 0.8, 3), Ranked("other", 0.8, 3)])
    assert len(result.passed) == 2 and result.duplicate == 1


def test_filter_counts_low_quality() -> None:
    result = run_filter([Ranked("good", 0.8, 3), Ranked("zero", 0.0, 0), Ranked("tiny", 0.01, 0)])
    assert [r.snippet for r in result.passed] == ["good"] and result.low_quality == 2


def test_filter_with_exhausted_budget() -> None:
    result = run_filter([Ranked("a", 0.8, 3), Ranked("b", 0.8, 3)], guard(tripped=True))
    assert result.passed == () and result.budget_exceeded == 2


def test_filter_empty() -> None:
    result = run_filter([])
    assert result.passed == () and (result.duplicate, result.low_quality, result.budget_exceeded) == (0, 0, 0)
