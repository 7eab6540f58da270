from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta

from dreaming.memory import Workspace, iter_jsonl
from dreaming.memory.files import InputReport
from dreaming.memory.research import (
    Claim,
    Conflict,
    EvidencePool,
    InsightWrite,
    ResearchFinding,
    append_research_log,
    decide,
    finding_from_validation,
    read_research_insights,
    render_rem_research_section,
    research_log_row,
    research_slug,
    validate_claims,
    write_research_insight,
)
from tests.memory.research.helpers import code, lines, web

QUESTION = "default confidence threshold"
SETTINGS = "# Research settings\nCONFIDENCE_THRESHOLD = 0.7  # keep findings\n"


def _finding(
    claim: str = "The default confidence threshold is 0.7",
    *,
    domains: tuple[str, ...] = ("example.com", "docs.other.org"),
    question: str = QUESTION,
) -> ResearchFinding:
    pool = EvidencePool()
    for domain in domains:
        pool.add(web(f"{claim}. ({domain})", domain))
    ids = tuple(e.id for e in pool)
    validation = validate_claims(question, [Claim(text=claim, evidence_ids=ids)], pool)
    return finding_from_validation(question, validation, decide(validation, 0.7), evidence=pool, tokens=12)


def _code_finding() -> ResearchFinding:
    pool = EvidencePool()
    pool.add(code(SETTINGS, "src/settings.py", 2, "CONFIDENCE_THRESHOLD = 0.7  # keep findings"))
    validation = validate_claims(
        QUESTION,
        [Claim(text="CONFIDENCE_THRESHOLD = 0.7", evidence_ids=("E1",))],
        pool,
        read_line=lines({"src/settings.py": SETTINGS}),
    )
    return finding_from_validation(QUESTION, validation, decide(validation, 0.7), evidence=pool)


def test_slug() -> None:
    assert research_slug("What's the Default confidence-threshold?") == "what-s-the-default-confidence-threshold"
    assert research_slug("???") == "question"
    assert len(research_slug("word " * 40)) <= 60


def test_a_kept_finding_becomes_an_insight_file(workspace: Workspace, now: datetime) -> None:
    finding = _code_finding()
    assert finding.kept
    result = write_research_insight(workspace, finding, now)
    assert isinstance(result, InsightWrite)
    assert result.action == "created"
    assert result.path == workspace.insights_dir / "research-default-confidence-threshold.md"
    text = result.path.read_text(encoding="utf-8")
    assert result.insight_id == "research-default-confidence-threshold"  # the file's name: what DREAMS.md shows
    assert text.startswith(f"---\nid: {result.insight_id}\nkind: research\n")
    assert 'question: "default confidence threshold"' in text
    assert "confidence: 0.80\nvalidation_method: code-crossref\n" in text
    assert 'sources:\n  - "src/settings.py:2"\n' in text
    assert "first_promoted: 2026-04-15\nlast_confirmed: 2026-04-15\nstatus: active\n---\n" in text
    assert "# 🔎 Research: default confidence threshold" in text
    assert "## Finding\n\nCONFIDENCE_THRESHOLD = 0.7\n" in text
    assert "## Sources\n\n- [E1] codebase: src/settings.py:2\n" in text
    assert "## Validation\n\n- Method: code-crossref\n- Confidence: 0.80\n" in text
    # Same inputs, same date: same bytes, nothing rewritten.
    again = write_research_insight(workspace, finding, now)
    assert isinstance(again, InsightWrite) and again.action == "unchanged"
    assert result.path.read_text(encoding="utf-8") == text


def test_reconfirming_moves_only_last_confirmed(workspace: Workspace, now: datetime) -> None:
    first = write_research_insight(workspace, _finding(), now)
    later = write_research_insight(workspace, _finding(), now + timedelta(days=3))
    assert isinstance(first, InsightWrite) and isinstance(later, InsightWrite)
    assert later.action == "confirmed"
    assert later.insight_id == first.insight_id
    text = later.path.read_text(encoding="utf-8")
    assert "first_promoted: 2026-04-15\nlast_confirmed: 2026-04-18\n" in text


def test_a_weaker_contradiction_is_a_conflict_and_writes_nothing(workspace: Workspace, now: datetime) -> None:
    old = write_research_insight(workspace, _finding(), now)
    assert isinstance(old, InsightWrite)
    before = sorted(p.name for p in workspace.insights_dir.rglob("*"))
    # Same question, another number, code-verified but a single source: not better supported, and 1 < 2 sources.
    pool = EvidencePool()
    other = "# Research settings\nCONFIDENCE_THRESHOLD = 0.75  # default confidence\n"
    pool.add(code(other, "src/settings.py", 2, "CONFIDENCE_THRESHOLD = 0.75  # default confidence"))
    validation = validate_claims(
        QUESTION,
        [Claim(text="default CONFIDENCE_THRESHOLD = 0.75", evidence_ids=("E1",))],
        pool,
        read_line=lines({"src/settings.py": other}),
    )
    finding = finding_from_validation(QUESTION, validation, decide(validation, 0.7), evidence=pool)
    assert finding.kept and finding.confidence == 0.8
    result = write_research_insight(workspace, finding, now)
    assert isinstance(result, Conflict)
    assert result.existing.id == old.insight_id
    assert "is not better than the existing (2 source(s), confidence 0.80)" in result.reason
    assert "1 independent source(s), 2 needed" in result.reason
    assert result.existing.claim and result.finding.claim  # both sides, for the user to settle
    assert sorted(p.name for p in workspace.insights_dir.rglob("*")) == before
    section = render_rem_research_section([finding], conflicts=[result])
    assert "#### Conflicts for you to settle" in section
    assert old.insight_id in section


def test_a_stronger_multi_source_contradiction_supersedes_with_lineage(workspace: Workspace, now: datetime) -> None:
    weak_pool = EvidencePool()
    weak_pool.add(code(SETTINGS, "src/settings.py", 2, "CONFIDENCE_THRESHOLD = 0.7  # keep findings"))
    weak_validation = validate_claims(
        QUESTION,
        [Claim(text="The confidence threshold for promotion is 0.7", evidence_ids=("E1",))],
        weak_pool,
        read_line=lines({"src/settings.py": SETTINGS}),
    )
    weak = finding_from_validation(QUESTION, weak_validation, decide(weak_validation, 0.7), evidence=weak_pool)
    assert weak.confidence == 0.7
    old = write_research_insight(workspace, weak, now)
    assert isinstance(old, InsightWrite)

    strong = _finding("The default confidence threshold is 0.75", domains=("a.com", "b.org", "c.net"))
    assert strong.confidence == 0.9 and strong.independent_sources == 3
    result = write_research_insight(workspace, strong, now + timedelta(days=1))
    assert isinstance(result, InsightWrite)
    assert result.action == "superseded"
    (archived,) = result.archived_to
    assert archived.parent == workspace.archive_dir
    assert archived.name.startswith(f"{old.path.stem}--")
    # Ids are file names, in the archive too: supersedes names the archived file, superseded_by the active one.
    assert result.superseded == (archived.stem,) and result.insight_id == result.path.stem == old.insight_id
    archived_text = archived.read_text(encoding="utf-8")
    assert archived_text.startswith(f"---\nid: {archived.stem}\n")
    assert "status: superseded\n" in archived_text
    assert f"superseded_by: {result.insight_id}\n" in archived_text
    assert "The confidence threshold for promotion is 0.7" in archived_text
    new_text = result.path.read_text(encoding="utf-8")
    assert f"supersedes: {archived.stem}\n" in new_text
    assert [i.id for i in read_research_insights(workspace)] == [result.insight_id]


def test_a_related_question_under_another_slug_is_also_protected(workspace: Workspace, now: datetime) -> None:
    write_research_insight(workspace, _finding(), now)
    rival = _finding("The default confidence threshold is 0.5", domains=("a.com",), question="confidence threshold")
    # A single web domain is never kept (0.55); force the comparison by pretending it was kept with one source.
    forced = dataclasses.replace(rival, decision="keep")
    result = write_research_insight(workspace, forced, now)
    assert isinstance(result, Conflict)
    assert len(list(workspace.insights_dir.glob("*.md"))) == 1


def test_research_log_rows(workspace: Workspace, now: datetime) -> None:
    kept = _finding()
    failed = ResearchFinding(gap="flaky gap", decision="failed", reason="web: RetryableToolError after 3 attempts")
    rows = [research_log_row("run-1", f, now) for f in (kept, failed)]
    append_research_log(workspace, rows)
    read = [row for _, row in iter_jsonl(workspace.research_log, InputReport())]
    assert read[0] == {
        "v": 1,
        "run_id": "run-1",
        "ts": "2026-04-15T03:00:00+00:00",
        "gap": QUESTION,
        "decision": "keep",
        "confidence": 0.8,
        "method": "multi-source",
        "user_stated": False,
        "claim": "The default confidence threshold is 0.7",
        "evidence_ids": ["E1", "E2"],
        "locators": ["https://example.com/doc", "https://docs.other.org/doc"],
        "tokens": 12,
        "cost_usd": 0.0,
        "reason": kept.reason,
        "duration_s": 0.0,
    }
    assert read[1]["decision"] == "failed" and read[1]["evidence_ids"] == []
    json.dumps(read)


def test_rem_research_section() -> None:
    kept = _code_finding()
    discarded = _finding(domains=("blog.example",))
    abstained = ResearchFinding(gap="what is X", decision="abstain", reason="no evidence found")
    skipped = ResearchFinding(gap="late gap", decision="skipped_time", reason="research time limit reached")
    section = render_rem_research_section(
        [kept, discarded, abstained, skipped], backlog=["ancillary pricing connections"]
    )
    assert section == (
        "#### Investigated 4 knowledge gaps\n"
        "\n"
        '1. ✅ "default confidence threshold" (confidence: 0.80)\n'
        "   - Sources: codebase (src/settings.py:2)\n"
        "   - Learned: CONFIDENCE_THRESHOLD = 0.7\n"
        "   - Validation: code cross-reference confirmed (code-crossref)\n"
        "\n"
        '2. ❌ "default confidence threshold" (confidence: 0.55) — DISCARDED\n'
        "   - Why: only one source says it, and one web page or note is not enough on its own\n"
        f"   - Details: {discarded.reason}\n"
        "   - Sources: web (https://blog.example/doc)\n"
        "   - Action: needs user clarification\n"
        "\n"
        '3. ⚪ "what is X" — ABSTAINED\n'
        "   - Reason: no evidence found\n"
        "\n"
        '4. ⏭️ "late gap" — SKIPPED (time limit)\n'
        "   - Reason: research time limit reached\n"
        "\n"
        "#### Research backlog: needs you\n"
        "\n"
        '- "ancillary pricing connections"\n'
    )
    assert discarded.reason.startswith("confidence 0.55 < 0.70 (web-confirm): only one independent source")


def test_rem_research_lists_three_sources_and_says_why_a_gap_was_discarded_in_plain_words() -> None:
    pool = EvidencePool()
    for n in range(5):
        pool.add(web(f"Unrelated page {n} about the weather.", f"site{n}.example"))
    validation = validate_claims("committee 2025 return", [], pool)
    finding = finding_from_validation("committee 2025 return", validation, decide(validation, 0.7), evidence=pool)
    section = render_rem_research_section([finding])
    assert "   - Why: 5 passages were found, but none of them states an answer to the question\n" in section
    assert "   - Details: 5 evidence item(s) found but no claim stood on them\n" in section
    assert (
        "   - Sources: web (https://site0.example/doc), web (https://site1.example/doc), "
        "web (https://site2.example/doc), and 2 more\n"
    ) in section
    fragment = EvidencePool()
    fragment.add(web("The committee return for 2025 was 4 percent.", "a.example"))
    weak = validate_claims("committee 2025 return", [Claim(text="return 2025,", evidence_ids=("E1",))], fragment)
    assert decide(weak, 0.7).why == "the closest match is a fragment of code or text, not a statement"


def test_a_wrong_finding_at_confidence_one_does_not_block_a_better_supported_one(
    workspace: Workspace, now: datetime
) -> None:
    wrong = dataclasses.replace(_finding("The default confidence threshold is 0.9"), confidence=1.0,
                                independent_sources=1, method="web-confirm")  # fmt: skip
    old = write_research_insight(workspace, wrong, now)
    assert isinstance(old, InsightWrite)
    right = _finding()  # two agreeing domains, 0.80: better supported, though less confident
    assert right.independent_sources == 2 and right.confidence < wrong.confidence
    new = write_research_insight(workspace, right, now + timedelta(days=1))
    assert isinstance(new, InsightWrite) and new.action == "superseded"
    assert new.superseded == tuple(path.stem for path in new.archived_to) and len(new.superseded) == 1


def test_the_users_own_word_is_never_superseded(workspace: Workspace, now: datetime) -> None:
    stated = dataclasses.replace(_finding("The default confidence threshold is 0.9"), user_stated=True,
                                 independent_sources=1, confidence=0.75)  # fmt: skip
    assert isinstance(write_research_insight(workspace, stated, now), InsightWrite)
    result = write_research_insight(workspace, _finding(), now + timedelta(days=1))
    assert isinstance(result, Conflict) and "the user's own word" in result.reason


def test_an_older_file_whose_id_field_is_not_its_name_is_known_by_its_name(workspace: Workspace, now: datetime) -> None:
    written = write_research_insight(workspace, _finding(), now)
    assert isinstance(written, InsightWrite)
    text = written.path.read_text(encoding="utf-8")
    written.path.write_text(text.replace(f"id: {written.insight_id}\n", f"id: {written.insight_id}-cd1e5cac\n"))
    (insight,) = read_research_insights(workspace)
    assert insight.id == written.path.stem
    again = write_research_insight(workspace, _finding(), now + timedelta(days=1))
    assert isinstance(again, InsightWrite) and again.insight_id == written.path.stem
    assert f"id: {written.path.stem}\n" in again.path.read_text(encoding="utf-8")  # rewritten as the file's name
