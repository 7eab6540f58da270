"""A model fault during one gap's research fails that gap only (issue 9, item 8).

Three answerable gaps, a model behind an OpenAI-compatible endpoint mocked with respx, and one fault injected into
the middle gap at one step of its model work (the tool loop, the claims, the veto): the night completes, the other
two gaps are kept and promoted, and the middle one is ``failed`` with the call's reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import httpx
import pytest
import respx

from dreaming.llm.gateway import build_gateway
from dreaming.memory import Workspace
from dreaming.memory.gaps import list_gaps
from dreaming.night import research_tools
from tests.graph._research_helpers import (
    LLM_ENV,
    LLM_URL,
    ResearchModel,
    add_gaps,
    completion,
    config,
    findings,
    log_rows,
    night,
    write_repo,
)

GAPS = ("what is K_FLAT", "what is LOCK_TIMEOUT", "what is CACHE_MAX_ENTRIES")
FAULTY = GAPS[1]


def repo(tmp_path: Path) -> Path:
    return write_repo(
        tmp_path / "repo",
        {
            "src/flat.py": "# band constants\n\nK_FLAT = 0.15 # half-width of the flat band\n",
            "src/lock.py": "# lock constants\n\nLOCK_TIMEOUT = 10 # seconds a second run waits for the lock\n",
            "src/cache.py": "# cache constants\n\nCACHE_MAX_ENTRIES = 500 # answers the request cache keeps\n",
        },
    )


def _stalls(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("the server stalled past the timeout")


def _oversized(request: httpx.Request) -> httpx.Response:
    # A server that ignores the cap and runs on: usage far past what the request allowed.
    return completion({"content": "word " * 4000}, tokens=(200, 4000))


FAULTS: dict[str, tuple[Callable[[httpx.Request], httpx.Response], str]] = {
    "timeout": (_stalls, "timeout"),
    "http 500": (lambda r: httpx.Response(500, json={"error": {"message": "internal error"}}), "http_500"),
    "broken json": (
        lambda r: httpx.Response(
            200, content=b'{"id": "x", "choices": [{', headers={"content-type": "application/json"}
        ),
        "malformed_reply",
    ),
    "oversized": (_oversized, "oversized_reply"),
}


class FaultyModel:
    """The scripted research model, except that one gap's call at one step gets ``fault`` instead."""

    def __init__(self, step: str, fault: Callable[[httpx.Request], httpx.Response]) -> None:
        self.model = ResearchModel(query=lambda q: q.removeprefix("what is "))
        self.step = step
        self.fault = fault
        self.faulted = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        asked = next(m["content"] for m in body["messages"] if m["role"] == "user").split("\n")[0]
        names = [t["function"]["name"] for t in body.get("tools") or []]
        step = "claims" if "ClaimsAnswer" in names else "veto" if "VetoAnswer" in names else "loop"
        if asked == f"Question: {FAULTY}" and step == self.step:
            self.faulted += 1
            return self.fault(request)
        return self.model(request)


@pytest.mark.parametrize("step", ["loop", "claims", "veto"])
@pytest.mark.parametrize("fault", FAULTS)
def test_a_model_fault_fails_its_gap_and_the_night_keeps_the_others(
    workspace: Workspace, now: datetime, tmp_path: Path, step: str, fault: str
) -> None:
    respond, kind = FAULTS[fault]
    cfg = config(sources=("codebase",), codebase_roots=(str(repo(tmp_path)),))
    add_gaps(workspace, now, *GAPS)
    model = FaultyModel(step, respond)
    with respx.mock(assert_all_mocked=True) as router:
        router.post(LLM_URL).mock(side_effect=model)
        gateway = build_gateway(cfg, workspace, env=LLM_ENV, now=lambda: now)
        outcome = night(workspace, cfg, research_tools(workspace, cfg, env={}), now, gateway=gateway)
    assert model.faulted == 1  # one call failed; the gap's model work stopped there
    assert "diary" in outcome.state["done"]  # the night went on to the end
    found = findings(outcome)
    assert {gap: found[gap]["decision"] for gap in GAPS} == {GAPS[0]: "keep", FAULTY: "failed", GAPS[2]: "keep"}
    assert f"the model call failed ({kind}" in found[FAULTY]["reason"]
    rows = {row["gap"]: row for row in log_rows(workspace)}
    assert rows[FAULTY]["decision"] == "failed" and kind in rows[FAULTY]["reason"]
    assert len(list((workspace.root / "memory" / "insights").glob("research-*.md"))) == 2  # both kept gaps promoted
    gaps = {gap.query: gap for gap in list_gaps(workspace, now=now)}
    assert gaps[FAULTY].last_outcome == "failed" and gaps[FAULTY].status == "open"  # researched again another night
    assert gaps[GAPS[0]].status == gaps[GAPS[2]].status == "kept"
    entry = workspace.dreams_md.read_text()
    assert f'"{FAULTY}" — FAILED' in entry and f"Calls failed: {kind} 1." in entry
    report = gateway.report()
    assert report.failures == {kind: 1} and report.oversized_replies == (1 if kind == "oversized_reply" else 0)
