"""The README stays true: its dreaming.toml parses with no warning, and its commands exist."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.config import DreamingConfig

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_the_documented_configuration_is_the_real_one() -> None:
    block = README.split("## dreaming.toml", 1)[1].split("```toml", 1)[1].split("```", 1)[0]
    config = DreamingConfig.from_mapping(tomllib.loads(block))
    assert config.warnings == ()
    assert config.llm.prices["my-model"].output == 1.60


def test_every_documented_command_exists() -> None:
    commands = set(re.findall(r"\.venv/bin/dreaming (\w+)", README))
    assert {
        "init",
        "run",
        "now",
        "status",
        "insights",
        "schedule",
        "search",
        "gap",
        "promote",
        "doctor",
        "eval",
    } <= commands
    for command in sorted(commands):
        result = CliRunner().invoke(app, [command, "--help"])
        assert result.exit_code == 0, (command, result.output)


def test_the_architecture_picture_names_every_node_of_the_graph() -> None:
    from dreaming.graph import build_dream_graph
    from dreaming.graph.build import build_research_graph

    picture = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    nodes = set(build_dream_graph().nodes) | set(build_research_graph().nodes)
    assert nodes and all(name in picture for name in nodes), sorted(n for n in nodes if n not in picture)


def test_the_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    block = README.split("## From Python", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-04-01.md").write_text("## Ops\nKafka retention is seven days.\n")
    monkeypatch.setattr("os.environ", {})  # no key: nothing calls out
    namespace: dict[str, object] = {}
    exec(compile(block.replace("path/to/workspace", str(tmp_path)), "README.md", "exec"), namespace)
    assert "(run, " in str(namespace["report"].diary_entry)  # type: ignore[attr-defined]
    assert (tmp_path / "DREAMS.md").is_file()
