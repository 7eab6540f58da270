"""The nightly run end to end: idempotence, crash safety, concurrency, bad input (issue 2 acceptance)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreaming.cli import app
from tests._workspaces import NIGHT, build_verdict_workspace, snapshot

runner = CliRunner()

ROOT = Path(__file__).resolve().parents[2]
"""The repository: its ``src`` (the tree under test, not whatever copy is installed) and ``tests`` go on a child's path."""


def _run(ws: Path, *extra: str) -> tuple[int, str]:
    result = runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT, *extra])
    return result.exit_code, result.output


def _python(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_run_promotes_and_second_run_changes_no_byte(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    code, output = _run(ws, "--json")
    assert code == 0, output
    summary = json.loads(output)
    assert summary["done"][:3] == ["light", "rem", "deep"] or "deep" in summary["done"]
    insights = sorted(p.name for p in (ws / "memory" / "insights").glob("*.md"))
    assert "reliable-buy-test-uptrend-7d.md" in insights
    memory = (ws / "MEMORY.md").read_text()
    assert memory.startswith("# My memory\n\nKeep this line.\n")
    assert "reliable-buy-test-uptrend-7d" in memory
    first = snapshot(ws)
    code, output = _run(ws)
    assert code == 0, output
    assert snapshot(ws) == first
    assert (ws / "DREAMS.md").read_text().count("<!-- dreaming:run:") == 2


def test_user_text_around_the_managed_block_survives(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws", user_memory="# Mine\n\nbefore\n")
    assert _run(ws)[0] == 0
    text = (ws / "MEMORY.md").read_text()
    start = text.index("<!-- dreaming:insights:start -->")
    end = text.index("<!-- dreaming:insights:end -->") + len("<!-- dreaming:insights:end -->")
    edited = "# Mine\n\nbefore\n" + text[len("# Mine\n\nbefore\n") : start] + text[start:end] + "\n\nafter ✍️\n"
    (ws / "MEMORY.md").write_text(edited)
    assert _run(ws)[0] == 0
    assert (ws / "MEMORY.md").read_text() == edited


CRASH = """
import os, sys
point = sys.argv[1]
if point.startswith("before:"):
    import dreaming.graph.nodes as nodes
    name = point.split(":", 1)[1]
    def die(*a, **k):
        os._exit(137)
    setattr(nodes, name, die)
elif point.startswith("insight-write:"):
    limit = int(point.split(":", 1)[1])
    real_replace = os.replace
    seen = [0]
    def replace(src, dst, *a, **k):
        if "/memory/insights/" in str(dst):
            seen[0] += 1
            if seen[0] > limit:
                os._exit(137)
        return real_replace(src, dst, *a, **k)
    os.replace = replace
from dreaming.cli import app
app(["run", "--workspace", sys.argv[2], "--now", sys.argv[3]], standalone_mode=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "point", ["before:rem", "before:budget_verify", "before:deep", "before:diary", "insight-write:1", "insight-write:3"]
)
def test_killed_run_leaves_valid_files_and_next_run_matches_uninterrupted(tmp_path: Path, point: str) -> None:
    reference = build_verdict_workspace(tmp_path / "reference")
    assert _run(reference)[0] == 0
    ws = build_verdict_workspace(tmp_path / "ws")
    killed = _python(CRASH, point, str(ws), NIGHT)
    assert killed.returncode == 137, killed.stderr
    for path in (ws / "memory" / ".dreams").glob("*.json"):
        json.loads(path.read_text())  # every state file is still valid JSON
    for path in (ws / "memory" / ".dreams").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            json.loads(line)
    code, output = _run(ws)
    assert code == 0, output
    # The verdict tallies only speed up the next night: a chain resumed in a new process stores none (its next night
    # recomputes), and they name inodes and mtimes, which differ between two workspaces anyway.
    tallies = ("memory/.dreams/verdict-tallies.json",)
    assert snapshot(ws, exclude=tallies) == snapshot(reference, exclude=tallies)
    assert "resumed" in (ws / "memory" / ".dreams" / "events.jsonl").read_text()


SLOW_RUN = """
import sys, time
import dreaming.graph.nodes as nodes
real = nodes.rem
def slow(state, runtime):
    time.sleep(8)  # far longer than the second run needs to start and give up (lock_timeout_seconds = 1)
    return real(state, runtime)
nodes.rem = slow
from dreaming.cli import app
app(["run", "--workspace", sys.argv[1], "--now", sys.argv[2]], standalone_mode=True)
"""


@pytest.mark.slow
def test_two_runs_at_once_one_completes_the_other_exits_3_naming_the_holder(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    (ws / "dreaming.toml").write_text("lock_timeout_seconds = 1\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    first = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(SLOW_RUN), str(ws), NIGHT],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock = ws / "memory" / ".dreams" / "dreaming.lock"
    for _ in range(1000):  # a bounded wait for the first run to take the lock, not a measure of its speed
        if lock.exists() and lock.read_text().startswith(f"{first.pid}:"):
            break
        if first.poll() is not None:
            pytest.fail(f"the first run ended before it took the lock: {first.communicate()[1]}")
        time.sleep(0.02)
    else:
        pytest.fail("the first run never took the lock")
    second = subprocess.run(
        [sys.executable, "-m", "dreaming", "run", "--workspace", str(ws), "--now", NIGHT],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 3
    assert f"holder {first.pid}:" in second.stderr
    _out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert (ws / "memory" / "insights" / "reliable-buy-test-uptrend-7d.md").exists()
    assert not lock.exists()


def test_bad_input_is_skipped_with_file_and_line_and_run_exits_0(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    verdicts = ws / "memory" / ".dreams" / "verdicts.jsonl"
    good = verdicts.read_text()
    verdicts.write_text(
        good
        + "not json\n"
        + '{"decision_date": "2026-04-01", "asset": "TEST", "verdict": "PANIC"}\n'
        + '{"asset": "TEST", "verdict": "BUY"}\n'
        + '{"decision_date": "2030-01-01", "asset": "TEST", "verdict": "BUY"}\n'
    )
    (ws / "prices" / "NOCLOSE.csv").write_text("date,open\n2026-01-05,1\n")
    with verdicts.open("a") as handle:
        handle.write('{"decision_date": "2026-04-01", "asset": "NOCLOSE", "verdict": "BUY"}\n')
    code, output = _run(ws, "--json")
    assert code == 0, output
    summary = json.loads(output)
    assert summary["bad_input_count"] >= 4
    joined = "\n".join(summary["bad_input"])
    n = len(good.splitlines())
    assert f"verdicts.jsonl:{n + 1}:" in joined
    assert f"verdicts.jsonl:{n + 2}:" in joined and "PANIC" in joined
    assert f"verdicts.jsonl:{n + 3}:" in joined
    assert f"verdicts.jsonl:{n + 4}:" in joined
    assert "NOCLOSE.csv" in joined
    assert (ws / "memory" / "insights" / "reliable-buy-test-uptrend-7d.md").exists()
    diary = (ws / "DREAMS.md").read_text()
    assert "Input skipped" in diary


def test_lock_busy_exit_code_in_process(tmp_path: Path) -> None:
    from dreaming.memory import ConsolidationLock

    ws = build_verdict_workspace(tmp_path / "ws")
    (ws / "dreaming.toml").write_text("lock_timeout_seconds = 0.1\n")
    with ConsolidationLock(ws / "memory" / ".dreams" / "dreaming.lock"):
        result = runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT])
    assert result.exit_code == 3
    assert f"holder {os.getpid()}:" in result.output


def test_corrupt_checkpoints_and_run_marker_are_moved_aside_and_the_night_runs(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    state = ws / "memory" / ".dreams"
    (state / "checkpoints.sqlite").write_bytes(b"this is not a database" * 100)
    (state / "current-run.json").write_text("{torn")
    code, output = _run(ws, "--json")
    assert code == 0, output
    notes = json.loads(output)["notes"]
    assert any("checkpoints.sqlite moved aside" in n for n in notes)
    assert any("current-run.json moved aside" in n for n in notes)
    aside = sorted(p.name for p in state.iterdir() if ".corrupt-" in p.name)
    assert [n.split(".corrupt-")[0] for n in aside] == ["checkpoints.sqlite", "current-run.json"]
    assert (state / aside[0]).read_bytes().startswith(b"this is not a database")


@pytest.mark.parametrize(
    "name",
    ["candidates.json", "knowledge-gaps.json", "short-term-recall.json", "phase-signals.json", "daily-ingestion.json"],
)
def test_a_corrupt_state_file_is_moved_aside_never_silently_overwritten(tmp_path: Path, name: str) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    (ws / "memory" / "2026-08-30.md").write_text("A note.\n")
    assert _run(ws)[0] == 0
    state = ws / "memory" / ".dreams"
    (state / name).write_text('{"version": 1, "torn')
    code, output = _run(ws)
    assert code == 0, output
    aside = [p for p in state.iterdir() if p.name.startswith(f"{name}.corrupt-")]
    assert len(aside) == 1 and aside[0].read_text() == '{"version": 1, "torn'
