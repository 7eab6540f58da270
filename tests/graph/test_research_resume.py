"""A night killed in the middle of research resumes from its checkpoint without redoing finished gaps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from dreaming.memory import Workspace
from tests.conftest import NOW
from tests.graph._research_helpers import add_gaps, log_rows

ROOT = Path(__file__).resolve().parents[2]
"""The repository: its ``src`` (the tree under test, not whatever copy is installed) and ``tests`` go on a child's path."""

NIGHT = """
import asyncio, json, os, sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import respx

from dreaming.llm import build_gateway
from dreaming.night import run_night
from dreaming.tools.sources import ResearchTools
from dreaming.memory import Workspace
from dreaming.tools.codebase import FakeCodebaseSearch
from tests.graph._research_helpers import LLM_ENV, LLM_URL, ResearchModel, code_hit, config

root, log, crash_after = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
ws = Workspace.at(root)
now = datetime.fromisoformat(sys.argv[4])
cfg = config(sources=("codebase",), concurrency=1)
started: list[str] = []

async def code(query):
    if query not in started:
        if len(started) >= crash_after:
            # Die mid-way through the next gap. The finished branch's writes are committed by a background task a few
            # milliseconds after it returns; a kill inside that window redoes that one branch (at least once).
            await asyncio.sleep(0.3)
            os._exit(137)
        started.append(query)
    with log.open("a") as handle:
        handle.write(json.dumps({"tool": query}) + "\\n")
    return [code_hit(f"src/{query.split()[-1]}.py", 3, f"{query} = 0.15 # the {query}")]

model = ResearchModel(claims=lambda q, e: [{"text": f"{q} = 0.15 # the {q}", "evidence_ids": ["E1"]}])

def endpoint(request):
    body = json.loads(request.content)
    question = next(m["content"] for m in body["messages"] if m["role"] == "user").split("\\n")[0]
    with log.open("a") as handle:
        handle.write(json.dumps({"llm": question, "n": len(body["messages"]), "tools": [t["function"]["name"] for t in body.get("tools") or []]}) + "\\n")
    return model(request)

with respx.mock() as router:
    router.post(LLM_URL).mock(side_effect=endpoint)
    gateway = build_gateway(cfg, ws, env=LLM_ENV, now=lambda: now)
    deps = ResearchTools(codebase=FakeCodebaseSearch(code), read_line=lambda p, n: None)
    complete = lambda base: replace(base, research=deps, gateway=gateway)
    asyncio.run(run_night(ws, cfg, now=now, make_context=complete))
"""

GAPS = ("alpha", "beta", "gamma", "delta")


def _night(ws: Path, log: Path, crash_after: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(NIGHT), str(ws), str(log), str(crash_after), NOW.isoformat()],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


def _entries(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.slow
def test_a_killed_night_resumes_without_rerunning_or_repaying_finished_gaps(
    workspace: Workspace, tmp_path: Path
) -> None:
    add_gaps(workspace, NOW, *GAPS)
    first_log, second_log = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    killed = _night(workspace.root, first_log, crash_after=2)
    assert killed.returncode == 137, killed.stderr
    assert not workspace.research_log.exists()  # research_collect never ran
    finished = [e["tool"] for e in _entries(first_log) if "tool" in e]
    assert finished[:2] == ["alpha", "beta"] and set(finished) == {"alpha", "beta"}

    resumed = _night(workspace.root, second_log, crash_after=99)
    assert resumed.returncode == 0, resumed.stderr
    again = _entries(second_log)
    assert {e["tool"] for e in again if "tool" in e} == {"gamma", "delta"}
    assert not any(e.get("llm") in {"Question: alpha", "Question: beta"} for e in again)
    requests = Counter(json.dumps(e, sort_keys=True) for e in [*_entries(first_log), *again] if "llm" in e)
    assert requests and max(requests.values()) == 1  # the endpoint never saw the same request twice
    rows = log_rows(workspace)
    assert sorted(r["gap"] for r in rows) == sorted(GAPS)
    assert {r["decision"] for r in rows} <= {"keep", "discard"}
    assert len({r["run_id"] for r in rows}) == 1
    assert "resumed" in workspace.events.read_text()
