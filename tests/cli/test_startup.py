"""What a command imports: ``--help``, ``--version``, ``status``, ``insights``, ``search`` and ``gap`` load no LangGraph,
no LangChain, no model or web client, neither the viewer's nor the MCP server's stack (issue 14, start-up), and no
Postgres driver or job queue (issue 15: only the distributed fleet's commands import them).

Pinned by the modules loaded, not by a timing: what they cost is measured by ``python -m bench search``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.memory import Workspace, init_workspace

HEAVY = (
    "httpx",
    "jinja2",
    "langchain_core",
    "langchain_openai",
    "langgraph",
    "langsmith",
    "mcp",
    "openai",
    "procrastinate",
    "psycopg",
    "psycopg_pool",
    "starlette",
    "tavily",
    "tiktoken",
    "uvicorn",
)
"""Top-level packages that only a night, ``mcp``, ``view``, a model call or the distributed fleet needs."""

_RUN_COMMANDS = """
import json, sys
from dreaming.cli import main

commands, out = json.loads(sys.argv[1]), sys.argv[2]
codes = []
for argv in commands:
    sys.argv = ["dreaming", *argv]
    try:
        main()
    except SystemExit as exc:
        codes.append(exc.code or 0)
    else:
        codes.append(0)
with open(out, "w") as handle:
    json.dump({"codes": codes, "loaded": sorted({name.split(".")[0] for name in sys.modules})}, handle)
"""


def _run_in_one_process(commands: list[list[str]], out: Path) -> dict[str, list[Any]]:
    subprocess.run(
        [sys.executable, "-c", _RUN_COMMANDS, json.dumps(commands), str(out)],
        capture_output=True,
        check=True,
        text=True,
    )
    result: dict[str, list[Any]] = json.loads(out.read_text(encoding="utf-8"))
    return result


def test_the_everyday_commands_load_no_langgraph_langchain_client_or_server(tmp_path: Path) -> None:
    ws = Workspace.at(tmp_path / "ws")
    init_workspace(ws)
    (ws.memory_dir / "2026-04-01.md").write_text("# 2026-04-01\n\nThe deploy failed: the cache was cold.\n")
    where = ["--workspace", str(ws.root)]
    commands = [
        ["--help"],
        ["--version"],
        ["status", *where],
        ["status", *where, "--json"],
        ["insights", *where],
        ["search", "deploy cache", *where],  # a hit: recorded as a recall
        ["search", "kubernetes", *where],  # a miss: recorded as a knowledge gap
        ["gap", "list", *where],
        ["gap", "add", "who owns the cache", *where],
        ["fleet", "--help"],
        ["worker", "--help"],
    ]
    result = _run_in_one_process(commands, tmp_path / "result.json")
    assert result["codes"] == [0] * len(commands)
    assert sorted(set(result["loaded"]) & set(HEAVY)) == []


def test_the_check_above_sees_what_a_command_does_import(tmp_path: Path) -> None:
    # The viewer needs Starlette and Jinja: the same harness must see them, or the test above proves nothing.
    ws = Workspace.at(tmp_path / "ws")
    init_workspace(ws)
    command = ["view", "--workspace", str(ws.root), "--export", str(tmp_path / "site")]
    result = _run_in_one_process([command], tmp_path / "result.json")
    assert result["codes"] == [0]
    assert {"jinja2", "starlette"} <= set(result["loaded"])


def test_version_is_the_projects() -> None:
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output == f"dreaming {project['version']}\n"
