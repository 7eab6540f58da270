"""Research in the nightly graph, offline: what is kept, discarded, abstained or failed, and why."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import httpx
import pytest
import respx

from dreaming.memory import Workspace
from dreaming.memory.gaps import list_gaps
from dreaming.memory.research import SourceHit
from dreaming.night import research_tools
from dreaming.tools.codebase import FakeCodebaseSearch
from dreaming.tools.memory_search import FakeMemorySearch
from dreaming.tools.sources import ResearchTools
from dreaming.tools.web import FakeWebSearch, TavilyWebSearch
from tests.graph._research_helpers import (
    INJECTION,
    TAVILY_URL,
    add_gaps,
    code_hit,
    config,
    findings,
    log_rows,
    night,
    tavily,
    web_result,
    write_repo,
)

FLAT = "K_FLAT = 0.15 # half-width of the flat band"


def no_memory() -> FakeMemorySearch:
    return FakeMemorySearch(lambda query, limit: [])


def test_a_gap_answered_from_code_is_kept_as_code_crossref_with_its_path_line(
    workspace: Workspace, now: datetime, tmp_path: Path
) -> None:
    repo = write_repo(tmp_path / "repo", {"src/flat.py": f'"""Band constants."""\n\n{FLAT}\n'})
    cfg = config(sources=("codebase",), codebase_roots=(str(repo),))
    deps = research_tools(workspace, cfg, env={})
    assert deps is not None and deps.web is None
    add_gaps(workspace, now, "what is K_FLAT")
    outcome = night(workspace, cfg, deps, now)
    found = findings(outcome)["what is K_FLAT"]
    assert found["decision"] == "keep"
    assert found["method"] == "code-crossref"
    assert found["confidence"] == pytest.approx(0.80)
    assert found["claim"]["text"] == FLAT
    # The root is outside the workspace: the locator is relative to the root's parent folder.
    assert [e["locator"] for e in found["evidence"]] == ["repo/src/flat.py:3"]
    row = log_rows(workspace)[0]
    assert (row["decision"], row["method"], row["run_id"]) == ("keep", "code-crossref", outcome.run_id)
    assert list_gaps(workspace)[0].status == "kept"
    diary = workspace.dreams_md.read_text()
    assert '✅ "what is K_FLAT" (confidence: 0.80)' in diary
    assert "src/flat.py:3" in diary


def test_agreeing_pages_from_two_domains_are_kept_multi_source_and_one_weak_page_is_discarded(
    workspace: Workspace, now: datetime
) -> None:
    sentence = "The consolidation lock file is memory/.dreams/dreaming.lock in the workspace."
    lonely = "Dreaming runs nightly at 03:00 by default on most installs of the agent."

    def answer(request: httpx.Request) -> httpx.Response:
        query = httpx.Request("POST", TAVILY_URL, content=request.content).read().decode()
        if "lock" in query:
            return tavily([web_result("https://docs.a.example/lock", sentence),
                           web_result("https://www.b.example/faq", sentence + " Stale locks are taken over.")])  # fmt: skip
        if "nightly" in query:
            return tavily([web_result("https://blog.c.example/post", lonely)])
        return tavily([])

    cfg = config(sources=("web",))
    add_gaps(workspace, now, "where is the consolidation lock file", "when does dreaming run nightly")
    with respx.mock(assert_all_called=False) as router:
        route = router.post(TAVILY_URL).mock(side_effect=answer)
        deps = research_tools(workspace, cfg, env={"TAVILY_API_KEY": "tvly-test-0000000000"})
        assert deps is not None and deps.web is not None
        outcome = night(workspace, cfg, deps, now)
    assert route.call_count == 4  # two gaps x (question, salient variant)
    by_gap = findings(outcome)
    kept = by_gap["where is the consolidation lock file"]
    assert (kept["decision"], kept["method"], kept["confidence"]) == ("keep", "multi-source", pytest.approx(0.8))
    assert {e["domain"] for e in kept["evidence"]} == {"docs.a.example", "b.example"}
    weak = by_gap["when does dreaming run nightly"]
    assert weak["decision"] == "discard"
    assert weak["confidence"] < 0.7
    assert "only one independent source (web:blog.c.example)" in weak["reason"]
    diary = workspace.dreams_md.read_text()
    assert "Why: only one source says it, and one web page or note is not enough on its own" in diary
    assert "Details: confidence" in diary
    gap = next(g for g in list_gaps(workspace) if g.query == "when does dreaming run nightly")
    assert (gap.status, gap.attempts, gap.last_outcome) == ("open", 1, "discarded")


def test_a_gap_without_evidence_abstains_and_no_claim_is_invented(workspace: Workspace, now: datetime) -> None:
    deps = ResearchTools(codebase=FakeCodebaseSearch(lambda q: []), memory=no_memory(), web=FakeWebSearch(lambda q: []))
    add_gaps(workspace, now, "what was the committee's 2025 return")
    outcome = night(workspace, config(), deps, now)
    found = findings(outcome)["what was the committee's 2025 return"]
    assert (found["decision"], found["claim"], found["evidence"]) == ("abstain", None, [])
    assert "nothing is answered from a model's own knowledge" in found["reason"]
    assert "ABSTAINED" in workspace.dreams_md.read_text()


def test_injection_in_a_page_and_a_code_comment_changes_no_decision_or_number(
    workspace: Workspace, now: datetime, tmp_path: Path
) -> None:
    page = "The flat threshold is capped at 0.05 by the review step."
    line = "FLAT_CAP = 0.05  # the flat threshold is capped at 0.05"

    def deps(injected: bool) -> ResearchTools:
        extra = f" {INJECTION.capitalize()}." if injected else ""
        above = f"# {INJECTION}" if injected else "# review constants"
        web = SourceHit(source_type="web", locator="https://x.example/p", snippet=page + extra, domain="x.example")
        code = SourceHit(source_type="codebase", locator="src/review.py:9", snippet=f"{above}\n{line}",
                         path="src/review.py", line=9, line_text=line)  # fmt: skip
        return ResearchTools(
            codebase=FakeCodebaseSearch(lambda q: [code]), memory=no_memory(), web=FakeWebSearch(lambda q: [web]),
            read_line=lambda path, number: line,
        )  # fmt: skip

    results = []
    for injected in (False, True):
        ws = Workspace.at(tmp_path / f"ws-{injected}")
        ws.root.mkdir()
        add_gaps(ws, now, "how is the flat threshold capped", "how is the review step done")
        outcome = night(ws, config(), deps(injected), now)
        results.append(
            [
                (f["decision"], f["confidence"], f["method"], (f["claim"] or {}).get("text"))
                for f in findings(outcome).values()
            ]
        )
    clean, planted = results
    # The formula's own maximum: code line + web page, both strong.
    assert clean[0][:3] == ("keep", 1.0, "code-crossref")
    # Planted text vouches for nothing: the injected page no longer counts, and a line of code alone does not answer
    # a how-question. An injection can only lower a number, never raise one, and is never the finding.
    assert planted[0][0] == "discard" and planted[0][1] < clean[0][1]
    assert all(p[1] <= c[1] for p, c in zip(planted, clean, strict=True))
    assert all(INJECTION not in str(text).lower() for *_, text in planted)


def test_a_failing_source_is_marked_failed_while_the_others_finish_and_a_fully_failed_gap_is_recorded(
    workspace: Workspace, now: datetime
) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    answers = iter([httpx.Response(429, json={"detail": {"error": "slow down"}})] + [httpx.ReadTimeout("slow")] * 20)

    def flaky(request: httpx.Request) -> httpx.Response:
        item = next(answers)
        if isinstance(item, Exception):
            raise item
        return item

    def code(query: str) -> list[SourceHit]:
        if "lock" in query:
            return [code_hit("src/lock.py", 4, "LOCK_FILE = 'memory/.dreams/dreaming.lock'  # consolidation lock file")]
        raise_failure(query)
        return []

    def raise_failure(query: str) -> None:
        from dreaming.errors import ToolError

        raise ToolError(f"ripgrep failed for {query!r}")

    add_gaps(workspace, now, "where is the consolidation lock file", "who wrote the flat threshold")
    with respx.mock() as router:
        route = router.post(TAVILY_URL).mock(side_effect=flaky)
        web = TavilyWebSearch("tvly-test-0000000000", retries=2, backoff_s=0.5, sleep=sleep)
        deps = ResearchTools(codebase=FakeCodebaseSearch(code), web=web, read_line=lambda p, n: None)
        outcome = night(workspace, config(sources=("codebase", "web")), deps, now)
    assert route.call_count == 6  # two gaps x one query each x three attempts (the first failure stops the source)
    assert waits == [0.5, 1.0, 0.5, 1.0]
    by_gap = findings(outcome)
    lock = by_gap["where is the consolidation lock file"]
    assert lock["decision"] in {"keep", "discard"} and lock["evidence"]
    assert "failed sources: web: RetryableToolError" in lock["reason"]
    failed = by_gap["who wrote the flat threshold"]
    assert failed["decision"] == "failed"
    assert "every source failed" in failed["reason"] and "codebase: ToolError" in failed["reason"]
    assert "diary" in outcome.state["done"]
    assert "Source `web` failed" in workspace.dreams_md.read_text()
    gap = next(g for g in list_gaps(workspace) if g.query == "who wrote the flat threshold")
    assert gap.last_outcome == "failed"


def test_the_time_limit_skips_gaps_and_the_fixed_plan_queries_question_and_salient_variant(
    workspace: Workspace, now: datetime
) -> None:
    search = FakeCodebaseSearch(lambda q: [])
    deps = ResearchTools(codebase=search)
    add_gaps(workspace, now, "What is the K_FLAT constant?")
    outcome = night(workspace, config(sources=("codebase",)), deps, now)
    assert search.calls == ["What is the K_FLAT constant?", "K_FLAT constant"]
    assert findings(outcome)["What is the K_FLAT constant?"]["decision"] == "abstain"

    other = Workspace.at(workspace.root.parent / "other")
    other.root.mkdir()
    add_gaps(other, now, "a", "b")
    ticks = iter([1000.0] + [5000.0] * 50)  # the deadline is set at 1000 s + 1 min; every gap starts after it
    outcome = night(other, config(max_research_time_minutes=1), deps, now, clock=lambda: next(ticks))
    assert {f["decision"] for f in findings(outcome).values()} == {"skipped_time"}
    assert list_gaps(other)[0].attempts == 0  # a skipped gap is not a fruitless attempt
    assert "time limit" in other.dreams_md.read_text()


def test_research_off_leaves_the_night_as_before(workspace: Workspace, now: datetime) -> None:
    add_gaps(workspace, now, "what is K_FLAT")
    search = FakeCodebaseSearch(lambda q: [])
    outcome = night(workspace, config(enabled=False), ResearchTools(codebase=search), now)
    assert search.calls == []
    assert "research" not in outcome.state["summaries"]
    assert not workspace.research_log.exists()
