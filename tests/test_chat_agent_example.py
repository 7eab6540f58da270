"""The chat agent of ``examples/chat_agent``, offline end to end: a miss by day becomes a finding by the next morning."""

from __future__ import annotations

import importlib.util
from datetime import datetime
from pathlib import Path
from types import ModuleType

from dreaming.memory import Workspace
from dreaming.memory.gaps import list_gaps

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "chat_agent" / "agent.py"
DAY = datetime.fromisoformat("2026-09-01T15:00:00+00:00")
NIGHT = datetime.fromisoformat("2026-09-02T03:00:00+00:00")


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chat_agent_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _workspace(root: Path) -> Workspace:
    repo = root / "repo" / "src"
    repo.mkdir(parents=True)
    (repo / "bands.py").write_text('"""Band constants."""\n\nK_FLAT = 0.15  # half-width of the flat band\n')
    ws_root = root / "ws"
    (ws_root / "memory").mkdir(parents=True)
    (ws_root / "MEMORY.md").write_text("# My memory\n")
    (ws_root / "memory" / "2026-08-31.md").write_text("## Ops\nThe staging database is backed up at 02:00.\n")
    (ws_root / "dreaming.toml").write_text(
        f'[autoresearch]\nenabled = true\nsources = ["codebase", "memory"]\ncodebase_roots = ["{repo.as_posix()}"]\n'
    )
    return Workspace.at(ws_root)


def test_a_miss_by_day_is_researched_at_night_and_known_the_next_morning(tmp_path: Path) -> None:
    example = _example()
    ws = _workspace(tmp_path)
    clock = [DAY]
    agent = example.ChatAgent(ws, example.offline_model(), clock=lambda: clock[0])
    assert "K_FLAT" not in example.system_prompt(ws)

    answer = agent.chat("what is K_FLAT")
    assert "do not know yet" in answer
    assert [gap.query for gap in list_gaps(ws)] == ["what is K_FLAT"]  # the agent's miss became a gap

    clock[0] = NIGHT
    diary = agent.chat("/dream")
    assert "what is K_FLAT" in diary and "(now, 03:00 UTC)" in diary

    morning = example.ChatAgent(ws, example.offline_model(), clock=lambda: NIGHT)
    assert "K_FLAT = 0.15" in example.system_prompt(ws)  # the next morning's prompt holds the finding
    assert "learned from research." in example.system_prompt(ws)  # no committee where there are no verdicts
    assert "K_FLAT = 0.15" in morning.chat("what is K_FLAT")
    assert "half-width of the flat band" in agent.chat("what is K_FLAT")


def test_the_agent_answers_from_its_notes_and_records_the_recall(tmp_path: Path) -> None:
    example = _example()
    ws = _workspace(tmp_path)
    agent = example.ChatAgent(ws, example.offline_model(), clock=lambda: DAY)
    assert "02:00" in agent.chat("when is the staging database backed up")
    assert (ws.state_dir / "short-term-recall.json").is_file() and list_gaps(ws) == []
