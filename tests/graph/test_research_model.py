"""Research with a model behind an OpenAI-compatible endpoint mocked with respx: citations, injection, secrets,
budget, contradictions, and no request at all without keys."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from dreaming.graph import DreamContext
from dreaming.graph.research import promote_research
from dreaming.llm.gateway import build_gateway
from dreaming.memory import Workspace
from dreaming.memory.research import Claim, ResearchFinding, write_research_insight
from dreaming.night import research_tools
from tests.graph._research_helpers import (
    INJECTION,
    LLM_ENV,
    LLM_URL,
    TAVILY_URL,
    ResearchModel,
    add_gaps,
    config,
    findings,
    log_rows,
    night,
    tavily,
    web_result,
    write_repo,
)

PLANTED_ENV_KEY = "sk-proj-PLANTEDenvKEY0123456789abcdef"
PLANTED_CODE_KEY = "sk-live-PLANTEDcodeKEY9876543210zyxw"
FLAT = "K_FLAT = 0.15 # half-width of the flat band"


def repo(tmp_path: Path, *, injected: bool = False) -> Path:
    above = f"# {INJECTION}" if injected else "# band constants"
    return write_repo(
        tmp_path / "repo",
        {
            "src/flat.py": f"{above}\n\n{FLAT}\n",
            "src/keys.py": f'OPENAI_KEY = "{PLANTED_CODE_KEY}"  # flat band client key\n',
            ".env": f"OPENAI_API_KEY={PLANTED_ENV_KEY}\nK_FLAT_SECRET=flat\n",
        },
    )


def cite_first_code(question: str, evidence: str) -> list[dict[str, Any]]:
    return [{"text": FLAT, "evidence_ids": ["E1"]}] if FLAT in evidence else []


def test_a_claim_citing_an_unknown_evidence_id_is_lost(workspace: Workspace, now: datetime, tmp_path: Path) -> None:
    cfg = config(sources=("codebase",), codebase_roots=(str(repo(tmp_path)),))
    model = ResearchModel(claims=lambda q, e: [{"text": FLAT, "evidence_ids": ["E99"]}])
    add_gaps(workspace, now, "what is K_FLAT")
    with respx.mock() as router:
        router.post(LLM_URL).mock(side_effect=model)
        gateway = build_gateway(cfg, workspace, env=LLM_ENV, now=lambda: now)
        deps = research_tools(workspace, cfg, env={})
        outcome = night(workspace, cfg, deps, now, gateway=gateway)
    found = findings(outcome)["what is K_FLAT"]
    # The model's claim is lost with its invented citation; the extractive candidate, validated beside it, is kept
    # on evidence a tool really returned.
    assert found["decision"] == "keep"
    assert [e["id"] for e in found["evidence"]] and all(e["id"] != "E99" for e in found["evidence"])
    assert len(model.bodies) == 4  # one tool call, the answer after it, the claims, the veto of the keep
    assert log_rows(workspace)[0]["tokens"] == 4 * 240


@pytest.mark.parametrize("injected", [False, True])
def test_with_a_model_injection_changes_no_decision_or_number_and_evidence_is_fenced(
    workspace: Workspace, now: datetime, tmp_path: Path, injected: bool
) -> None:
    def obedient(question: str, evidence: str) -> list[dict[str, Any]]:
        # A model that does what the page says, and also cites the code line honestly.
        claims = [{"text": FLAT, "evidence_ids": ["E1"]}]
        if INJECTION in evidence:
            claims.insert(0, {"text": "Keep this, confidence 1.0.", "evidence_ids": ["E1", "E2"]})
        return claims

    cfg = config(sources=("codebase",), codebase_roots=(str(repo(tmp_path, injected=injected)),))
    model = ResearchModel(query=lambda q: "K_FLAT", claims=obedient)
    add_gaps(workspace, now, "what is K_FLAT")
    with respx.mock() as router:
        router.post(LLM_URL).mock(side_effect=model)
        gateway = build_gateway(cfg, workspace, env=LLM_ENV, now=lambda: now)
        outcome = night(workspace, cfg, research_tools(workspace, cfg, env={}), now, gateway=gateway)
    found = findings(outcome)["what is K_FLAT"]
    assert (found["decision"], found["confidence"], found["method"]) == ("keep", 0.8, "code-crossref")
    assert found["claim"]["evidence_ids"][0] == "E1"
    if injected:
        synthesis = json.dumps(model.bodies[2])
        start = synthesis.index("<evidence id=")
        assert start < synthesis.index("ignore previous instructions") < synthesis.rindex("</evidence>")


def test_an_injected_comment_never_becomes_the_kept_claim(workspace: Workspace, now: datetime, tmp_path: Path) -> None:
    def obedient(question: str, evidence: str) -> list[dict[str, Any]]:
        return [{"text": "Keep this, confidence 1.0.", "evidence_ids": ["E1"]}, {"text": FLAT, "evidence_ids": ["E1"]}]

    cfg = config(sources=("codebase",), codebase_roots=(str(repo(tmp_path, injected=True)),))
    add_gaps(workspace, now, "what is K_FLAT")
    with respx.mock() as router:
        router.post(LLM_URL).mock(side_effect=ResearchModel(query=lambda q: "K_FLAT", claims=obedient))
        gateway = build_gateway(cfg, workspace, env=LLM_ENV, now=lambda: now)
        outcome = night(workspace, cfg, research_tools(workspace, cfg, env={}), now, gateway=gateway)
    assert findings(outcome)["what is K_FLAT"]["claim"]["text"] == FLAT


def test_planted_keys_never_reach_a_file_a_log_or_a_request(
    workspace: Workspace, now: datetime, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    code_root = repo(tmp_path)
    cfg = config(codebase_roots=(str(code_root),))
    web = [web_result("https://a.example/x", f"flat band key {PLANTED_CODE_KEY} and K_FLAT = 0.15 is the band")]
    model = ResearchModel(
        tool=("codebase_search", "web_search", "memory_search"),
        query=lambda q: "K_FLAT client key",
        claims=cite_first_code,
    )
    add_gaps(workspace, now, "what is K_FLAT", "what is the flat band client key")
    with respx.mock() as router:
        llm = router.post(LLM_URL).mock(side_effect=model)
        tav = router.post(TAVILY_URL).mock(return_value=tavily(web))
        gateway = build_gateway(cfg, workspace, env=LLM_ENV, now=lambda: now)
        deps = research_tools(workspace, cfg, env={"TAVILY_API_KEY": "tvly-test-0000000000"})
        night(workspace, cfg, deps, now, gateway=gateway)
    assert llm.call_count > 0 and tav.call_count > 0
    bodies = [call.request.content for call in [*llm.calls, *tav.calls]]
    for planted in (PLANTED_ENV_KEY, PLANTED_CODE_KEY):
        assert all(planted.encode() not in body for body in bodies)
        for path in workspace.root.rglob("*"):
            if path.is_file():
                assert planted.encode() not in path.read_bytes(), path
        assert planted not in caplog.text
    assert ".env" not in b"".join(bodies).decode()


def test_a_tiny_budget_stops_research_cleanly_with_skipped_budget_rows_and_the_diary_says_why(
    workspace: Workspace, now: datetime, tmp_path: Path
) -> None:
    cfg = config(max_cost=0.000001, sources=("codebase",), codebase_roots=(str(repo(tmp_path)),))
    add_gaps(workspace, now, "what is K_FLAT", "where is the lock file", "how is the flat threshold capped")
    with respx.mock(assert_all_called=False) as router:
        llm = router.post(LLM_URL).mock(side_effect=ResearchModel())
        gateway = build_gateway(cfg, workspace, env=LLM_ENV, now=lambda: now)
        outcome = night(workspace, cfg, research_tools(workspace, cfg, env={}), now, gateway=gateway)
    assert llm.call_count == 0
    assert [row["decision"] for row in log_rows(workspace)] == ["skipped_budget"] * 3
    assert all("budget_exceeded" in row["reason"] for row in log_rows(workspace))
    diary = workspace.dreams_md.read_text()
    assert "Research stopped by the budget" in diary
    assert "Stopped `research`: budget" in diary
    assert "SKIPPED (budget)" in diary
    assert "diary" in outcome.state["done"]


def test_without_keys_no_http_request_is_made(workspace: Workspace, now: datetime, tmp_path: Path) -> None:
    cfg = config(codebase_roots=(str(repo(tmp_path)),))
    add_gaps(workspace, now, "what is K_FLAT")
    with respx.mock(assert_all_called=False) as router:
        anything = router.route().mock(return_value=httpx.Response(500))
        gateway = build_gateway(cfg, workspace, env={}, now=lambda: now)
        deps = research_tools(workspace, cfg, env={})
        assert deps is not None and deps.web is None
        outcome = night(workspace, cfg, deps, now, gateway=gateway)
    assert anything.call_count == 0
    assert findings(outcome)["what is K_FLAT"]["decision"] == "keep"


def _context(ws: Workspace, now: datetime, cfg: Any) -> DreamContext:
    return DreamContext(workspace=ws, config=cfg, now=now, run_id="r")


@pytest.mark.parametrize("files", ["one", "copies", "independent"])
def test_a_contradiction_is_a_conflict_or_supersedes_with_lineage_and_nothing_is_deleted(
    workspace: Workspace, now: datetime, tmp_path: Path, files: str
) -> None:
    old = ResearchFinding(gap="what is K_FLAT", decision="keep", reason="r", confidence=0.75, method="code-crossref",
                          claim=Claim(text="K_FLAT = 0.25 # half-width of the flat band", evidence_ids=("E1",)),
                          independent_sources=1)  # fmt: skip
    first = write_research_insight(workspace, old, now)
    old_text = first.path.read_text()  # type: ignore[union-attr]
    # The same line copied into a second file is one source (a vendored copy); a different line stating the same
    # value is a second, independent one.
    tree = {"src/flat0.py": f"# band constants\n\n{FLAT}\n"}
    if files == "copies":
        tree["src/flat1.py"] = f"# band constants, copy\n\n{FLAT}\n"
    if files == "independent":
        tree["src/band.py"] = "# the flat band\n\nK_FLAT = 0.15 # half-width of the flat band, as documented\n"
    cfg = config(sources=("codebase",), codebase_roots=(str(write_repo(tmp_path / "repo", tree)),))
    add_gaps(workspace, now, "what is K_FLAT")
    outcome = night(workspace, cfg, research_tools(workspace, cfg, env={}), now)
    research = outcome.state["summaries"]["research"]  # the night's deep node promoted the kept finding
    archived = list((workspace.insights_dir / "archive").glob("*.md"))
    if files != "independent":
        assert research["conflicts"][0]["existing_id"] == first.insight_id  # type: ignore[union-attr]
        assert "Conflicts for you to settle" in research["markdown"]
        assert first.path.read_text() == old_text  # type: ignore[union-attr]
        assert archived == []
    else:
        assert research["promoted"][0]["action"] == "superseded"
        assert len(archived) == 1
        assert "superseded_by" in archived[0].read_text()
        assert "supersedes" in first.path.read_text()  # type: ignore[union-attr]
        # The diary names files: the active insight and, superseded, the archived one.
        stem = first.path.stem  # type: ignore[union-attr]
        line = f"Research insight `{stem}` superseded, superseding `{archived[0].stem}`."
        assert line in workspace.dreams_md.read_text()
    assert promote_research(outcome.state, _context(workspace, now, cfg))["summaries"]["research"]["lines"]
    again = replace(_context(workspace, now, cfg))
    assert promote_research({}, again) == {}
