"""The research subgraph: its shape, its budget node and candidate checks, and the ceilings around it."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
import respx
from langgraph.errors import GraphRecursionError

from dreaming.config import BudgetConfig
from dreaming.graph import build_dream_graph
from dreaming.graph.build import build_research_graph
from dreaming.llm import Allowed, Skipped, build_gateway
from dreaming.memory import Workspace
from dreaming.memory.gaps import record_gap
from dreaming.night import research_tools
from dreaming.tools.codebase import FakeCodebaseSearch
from dreaming.tools.sources import ResearchTools
from tests.graph._research_helpers import (
    LLM_ENV,
    LLM_URL,
    ResearchModel,
    add_gaps,
    code_hit,
    config,
    findings,
    log_rows,
    night,
    write_repo,
)

FLAT = "K_FLAT = 0.15 # half-width of the flat band"


def _repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo", {"src/flat.py": f"# band constants\n\n{FLAT}\n"})


def _events(ws: Workspace) -> list[dict[str, object]]:
    return [json.loads(line) for line in ws.events.read_text().splitlines()] if ws.events.exists() else []


def test_research_is_a_compiled_subgraph_sent_one_gap_at_a_time() -> None:
    nodes = set(build_dream_graph().compile().get_graph(xray=True).nodes)
    inner = {f"research_gap:{n}" for n in ("budget_research", "research", "validate", "keep", "discard", "abstain")}
    assert inner <= nodes
    sub = build_research_graph()
    assert set(sub.nodes) == {"budget_research", "research", "validate", "keep", "discard", "abstain"}
    # Its own state: the gap, its evidence and usage never enter the night's state; only its result does.
    assert set(sub.compile().get_output_jsonschema()["properties"]) == {"research_results"}


def test_min_recalls_5_spends_nothing_on_a_gap_seen_twice(workspace: Workspace, now: datetime, tmp_path: Path) -> None:
    cfg = config(sources=("codebase",), codebase_roots=(str(_repo(tmp_path)),))
    cfg = replace(cfg, budget=replace(cfg.budget, min_recalls=5))
    for _ in range(2):
        record_gap(workspace, "what is K_FLAT", "no_results", best_score=0.0, now=now)
    with respx.mock(assert_all_called=False) as router:
        llm = router.post(LLM_URL).mock(side_effect=ResearchModel())
        gateway = build_gateway(cfg, workspace, env=LLM_ENV, now=lambda: now)
        night(workspace, cfg, research_tools(workspace, cfg, env={}), now, gateway=gateway)
    assert llm.call_count == 0  # no model spend on a gap recalled twice, under a floor of five
    row = log_rows(workspace)[0]
    assert row["decision"] == "keep" and row["tokens"] == 0  # still researched, on the evidence alone
    assert "no model work (low_quality" in row["reason"]
    refused = [e for e in _events(workspace) if e["type"] == "llm.refused"]
    assert refused and "low_quality" in str(refused[0]["reason"])


def test_the_same_gap_is_refused_as_a_duplicate_once_allowed_in_the_run(workspace: Workspace, now: datetime) -> None:
    guard = build_gateway(config(), workspace, env=LLM_ENV, now=lambda: now).candidates
    assert isinstance(guard.check("what is K_FLAT", 1.0, 2), Allowed)
    again = guard.check("  What is   K_FLAT ", 1.0, 2)
    assert isinstance(again, Skipped) and again.reason == "duplicate"
    fresh = build_gateway(config(), workspace, env=LLM_ENV, now=lambda: now).candidates
    assert isinstance(fresh.check("what is K_FLAT", 1.0, 2), Allowed)  # a new run forgets
    # The order of the checks: quality before duplicate.
    low = guard.check("what is K_FLAT", float("nan"), 2)
    assert isinstance(low, Skipped) and low.reason == "low_quality"


def test_two_gaps_that_keep_the_same_claim_keep_it_once(workspace: Workspace, now: datetime) -> None:
    hit = code_hit("src/flat.py", 3, FLAT)
    deps = ResearchTools(codebase=FakeCodebaseSearch(lambda q: [hit]), read_line=lambda p, n: FLAT)
    add_gaps(workspace, now, "what is K_FLAT", "K_FLAT value")
    outcome = night(workspace, config(sources=("codebase",)), deps, now)
    decisions = {gap: f["decision"] for gap, f in findings(outcome).items()}
    assert decisions == {"what is K_FLAT": "keep", "K_FLAT value": "skipped_duplicate"}
    assert "same finding as the gap 'what is K_FLAT'" in findings(outcome)["K_FLAT value"]["reason"]


def test_the_per_gap_tool_call_ceiling_holds(workspace: Workspace, now: datetime) -> None:
    search = FakeCodebaseSearch(lambda q: [code_hit("src/flat.py", 3, FLAT)])
    deps = ResearchTools(codebase=search, read_line=lambda p, n: FLAT)
    add_gaps(workspace, now, "what is the value of K_FLAT")  # the fixed plan would make two calls
    outcome = night(workspace, config(sources=("codebase",), max_tool_calls_per_gap=1), deps, now)
    assert search.calls == ["what is the value of K_FLAT"]
    assert outcome.state["research_results"][0]["tool_calls"] == 1


def test_the_recursion_limit_is_passed_to_every_invocation(workspace: Workspace, now: datetime) -> None:
    cfg = config(sources=("codebase",))
    cfg = replace(cfg, budget=replace(cfg.budget, recursion_limit=3))
    deps = ResearchTools(codebase=FakeCodebaseSearch(lambda q: []), read_line=lambda p, n: None)
    add_gaps(workspace, now, "what is K_FLAT")
    with pytest.raises(GraphRecursionError):
        night(workspace, cfg, deps, now)


def test_the_breaker_trips_in_the_middle_of_research(workspace: Workspace, now: datetime, tmp_path: Path) -> None:
    # A cap that allows a few calls, not all: research goes on without a model once the window is full.
    cfg = config(sources=("codebase",), codebase_roots=(str(_repo(tmp_path)),))
    cfg = replace(cfg, budget=BudgetConfig(max_cost_usd=0.002))
    queries = [f"what is K_FLAT in case {i}" for i in range(6)]
    add_gaps(workspace, now, *queries)
    with respx.mock(assert_all_called=False) as router:
        llm = router.post(LLM_URL).mock(side_effect=ResearchModel())
        gateway = build_gateway(cfg, workspace, env=LLM_ENV, now=lambda: now)
        deps = research_tools(workspace, cfg, env={})
        night(workspace, cfg, deps, now, gateway=gateway)
    rows = log_rows(workspace)
    assert 0 < llm.call_count < 4 * len(queries)
    assert gateway.breaker_tripped()
    assert gateway.ledger.spend_in_window(now) <= cfg.budget.max_cost_usd
    assert any(row["tokens"] > 0 for row in rows)
    stopped = [row for row in rows if row["decision"] == "skipped_budget" or "budget" in row["reason"]]
    assert stopped, rows
