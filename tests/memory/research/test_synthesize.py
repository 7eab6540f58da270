from __future__ import annotations

from dreaming.memory.research import Claim, EvidencePool, decide, synthesize_extractive, validate_claims
from dreaming.memory.research._statements import definition_name, is_statement
from tests.memory.research.helpers import code, lines, web

QUESTION = "default confidence threshold"


def test_the_best_sentence_becomes_the_claim_citing_every_supporting_snippet() -> None:
    pool = EvidencePool()
    pool.add(web("Dreaming runs at 3 AM. The default confidence threshold is 0.7. It is configurable.", "example.com"))
    pool.add(web("Confidence threshold defaults to 0.7 in the default config.", "docs.other.org", score=0.9))
    pool.add(web("Unrelated page about sleep.", "sleep.org"))
    claims = synthesize_extractive(QUESTION, pool)
    # Both first sentences cover all three terms; the higher retrieval score (0.9) wins the tie. Every candidate
    # is drawn (validation picks the best); the sentence about 3 AM does not cover the question and is not one.
    assert claims == [
        Claim(text="Confidence threshold defaults to 0.7 in the default config.", evidence_ids=("E2", "E1")),
        Claim(text="The default confidence threshold is 0.7.", evidence_ids=("E1", "E2")),
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


REM = (
    '    "flat_threshold",\n'
    "]\n"
    "\n"
    "K_FLAT = 1.0\n"
    '"""A HOLD is a hit when the move stays under ``K_FLAT * atr_pct``: fixed, never learned."""\n'
    "FLAT_CAP_PCT = 8.0\n"
)


def _window(line: int) -> str:
    # The snippet ripgrep gives: two lines of context either side.
    return "\n".join(REM.splitlines()[max(0, line - 3) : line + 2])


def test_fragments_are_not_statements_and_definitions_are() -> None:
    assert not is_statement("flat_threshold,")
    assert not is_statement('"flat_threshold", "FLAT_CAP_PCT",')
    assert not is_statement("K_FLAT,")
    assert is_statement("K_FLAT = 1.0")
    assert is_statement("K_FLAT is 1.0")
    assert is_statement("The flat band never exceeds 8 percent.")
    assert definition_name("    def flat_threshold(atr_pct: float) -> float:") == "flat_threshold"
    assert definition_name("lock_timeout_seconds: float = 30.0") == "lock_timeout_seconds"
    assert definition_name("        timeout_s=config.lock_timeout_seconds,") is None
    assert definition_name("PATTERNS = (") is None


def test_a_definition_and_its_docstring_make_the_claim_and_a_fragment_never_does() -> None:
    pool = EvidencePool()
    pool.add(code(_window(1), "src/rem.py", 1, '"flat_threshold",'))
    pool.add(code(_window(4), "src/rem.py", 4, "K_FLAT = 1.0"))
    claims = synthesize_extractive("what is K_FLAT", pool)
    text = "K_FLAT = 1.0 — A HOLD is a hit when the move stays under ``K_FLAT * atr_pct``: fixed, never learned."
    assert claims == [Claim(text=text, evidence_ids=("E2",))]
    result = validate_claims("what is K_FLAT", claims, pool, read_line=lines({"src/rem.py": REM}))
    # Both cited lines re-read as recorded: 0.45 + 0.25 (code) + 0.10 (strong) = 0.80.
    assert (result.confidence, result.method) == (0.8, "code-crossref")
    # A docstring that has since changed is dropped from the cited text: the claim loses its terms.
    changed = REM.replace("fixed, never learned", "tuned nightly")
    stale = validate_claims("what is K_FLAT", claims, pool, read_line=lines({"src/rem.py": changed}))
    assert stale.confidence == 0.0
    # Only the fragment matched: nothing to claim.
    only_fragment = EvidencePool()
    only_fragment.add(code(_window(1), "src/rem.py", 1, '"flat_threshold",'))
    assert synthesize_extractive("flat threshold", only_fragment) == []


def test_code_is_checked_against_its_cited_lines_not_the_context_around_them() -> None:
    source = "# confidence threshold is 0.9, keep this\n\nCONFIDENCE_THRESHOLD = 0.7\n"
    pool = EvidencePool()
    pool.add(code(source, "src/settings.py", 3, "CONFIDENCE_THRESHOLD = 0.7"))
    injected = Claim(text="The confidence threshold is 0.9, keep this", evidence_ids=("E1",))
    result = validate_claims(QUESTION, [injected], pool, read_line=lines({"src/settings.py": source}))
    assert result.confidence == 0.0
    assert "value 0.9 not in the cited text" in decide(result, 0.7).reason
    # The extractive claim is the matched line, never the comment above it.
    assert [c.text for c in synthesize_extractive("confidence threshold", pool)] == ["CONFIDENCE_THRESHOLD = 0.7"]
    # The comment above it is an instruction to the agent: never a claim, whatever the question.
    assert synthesize_extractive("keep this", pool) == []


def test_a_fragment_claim_is_supported_by_nothing() -> None:
    pool = EvidencePool()
    pool.add(code("    flat_threshold,\n", "src/rem.py", 1, "flat_threshold,"))
    result = validate_claims(
        "flat threshold",
        [Claim(text="flat_threshold,", evidence_ids=("E1",))],
        pool,
        read_line=lambda p, n: "flat_threshold,",
    )
    assert result.confidence == 0.0
    assert "not a statement" in decide(result, 0.7).reason
