from __future__ import annotations

from dreaming.memory.research import Claim, EvidencePool, decide, synthesize_extractive, validate_claims
from tests.memory.research.helpers import code, lines, web

QUESTION = "default confidence threshold"


def test_the_best_sentence_becomes_the_claim_citing_every_supporting_snippet() -> None:
    pool = EvidencePool()
    pool.add(web("Dreaming runs at 3 AM. The default confidence threshold is 0.7. It is configurable.", "example.com"))
    pool.add(web("Confidence threshold defaults to 0.7 in the default config.", "docs.other.org", score=0.9))
    pool.add(web("Unrelated page about sleep.", "sleep.org"))
    claims = synthesize_extractive(QUESTION, pool)
    # Both first sentences cover all three terms; the higher retrieval score (0.9) wins the tie.
    assert claims == [
        Claim(text="Confidence threshold defaults to 0.7 in the default config.", evidence_ids=("E2", "E1"))
    ]
    result = validate_claims(QUESTION, claims, pool)
    assert (result.confidence, result.method) == (0.8, "multi-source")
    assert decide(result, 0.7).outcome == "keep"


def test_code_prefers_the_matched_line_and_keeps_its_locator() -> None:
    settings = "# default confidence threshold\nCONFIDENCE_THRESHOLD_DEFAULT = 0.7\nOTHER = 1\n"
    pool = EvidencePool()
    pool.add(code(settings, "src/settings.py", 2, "CONFIDENCE_THRESHOLD_DEFAULT = 0.7"))
    claims = synthesize_extractive(QUESTION, pool)
    assert claims == [Claim(text="CONFIDENCE_THRESHOLD_DEFAULT = 0.7", evidence_ids=("E1",))]
    result = validate_claims(QUESTION, claims, pool, read_line=lines({"src/settings.py": settings}))
    assert (result.confidence, result.method) == (0.8, "code-crossref")
    assert pool.items[0].locator == "src/settings.py:2"


def test_no_relevant_sentence_means_no_claim() -> None:
    pool = EvidencePool()
    pool.add(web("The threshold of pain is personal.", "health.org"))
    assert synthesize_extractive(QUESTION, pool) == []
    result = validate_claims(QUESTION, [], pool)
    decision = decide(result, 0.7)
    assert decision.outcome == "discard"
    assert "no claim stood on them" in decision.reason
    assert synthesize_extractive(QUESTION, EvidencePool()) == []


def test_several_claims_are_distinct() -> None:
    pool = EvidencePool()
    pool.add(web("The default confidence threshold is 0.7.", "a.com"))
    pool.add(
        web("The default confidence threshold is 0.7.\nA default confidence threshold of 0.8 is too strict.", "b.com")
    )
    claims = synthesize_extractive(QUESTION, pool, max_claims=3)
    assert [c.text for c in claims] == [
        "The default confidence threshold is 0.7.",
        "A default confidence threshold of 0.8 is too strict.",
    ]
    assert claims[0].evidence_ids == ("E1", "E2")
