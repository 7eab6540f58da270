"""The demo workspace after its night, with hostile text planted where a user or a web page could put it."""

from __future__ import annotations

import re
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.memory import Workspace
from dreaming.memory.gaps import record_gap

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo" / "workspace"
NIGHT = "2019-01-02T03:00:00+00:00"
SCRIPT = "<script>window.__pwned = (window.__pwned || 0) + 1; document.title = 'pwned';</script>"
"""Planted in a note, MEMORY.md and a gap: it must show as text and never run."""
IMG = '<img src="x" onerror="window.__pwned = 99">'


def demo_after_a_night(root: Path) -> Workspace:
    """Copy the demo workspace to ``root``, plant hostile text, and dream its night as ``make demo`` does."""
    shutil.copytree(DEMO, root)
    toml = root / "dreaming.toml"
    roots = f'codebase_roots = ["{(ROOT / "src").as_posix()}", "{(ROOT / "docs").as_posix()}"]'
    toml.write_text(re.sub(r"^codebase_roots = .*$", roots, toml.read_text(), flags=re.MULTILINE))
    note = root / "memory" / "2018-12-27.md"
    note.write_text(note.read_text() + f"\n## Planted\n- A pasted page said {SCRIPT} and {IMG} twice.\n")
    memory = root / "MEMORY.md"
    memory.write_text(f"# My memory\n\nUser line with {SCRIPT} and [a link](javascript:alert(1)).\n")
    ws = Workspace.at(root)
    record_gap(ws, f"what does {SCRIPT} do", "no_results", best_score=0.0, now=datetime.fromisoformat(NIGHT))
    result = CliRunner().invoke(app, ["run", "--workspace", str(root), "--now", NIGHT])
    assert result.exit_code == 0, result.output
    return ws


@pytest.fixture(scope="session")
def demo_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The planted demo workspace after its night (shared: every test here only reads it)."""
    return demo_after_a_night(tmp_path_factory.mktemp("view") / "workspace")
