"""Terminal output (``options.print_markdown``, ``print_plain``): rendered on a terminal, plain text when piped, and
never an HTML comment, for every command that prints memory (issue 12, "Terminal output that renders")."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from dreaming.cli import app

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo" / "workspace"
NIGHT = "2019-01-02T03:00:00+00:00"
LATER = "2019-01-02T09:00:00+00:00"
COMMANDS = [
    ["run", "--now", NIGHT],
    ["now", "--now", LATER],
    ["insights"],
    ["status"],
    ["search", "position limit", "--now", LATER],
    ["promote", "--dry-run", "--now", LATER],
    ["promote", "--now", LATER],
    ["gap", "list", "--now", LATER],
    ["doctor", "--now", LATER],
]
"""Every command that prints the memory or the night, as a person runs it (``--json`` is for machines)."""
ANSI = re.compile(r"\x1b\[")


@pytest.fixture(autouse=True)
def _no_forced_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TTY_COMPATIBLE", "FORCE_COLOR", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo workspace after its night: insights, a diary, MEMORY.md with promotions and markers, open gaps."""
    ws = tmp_path_factory.mktemp("demo") / "workspace"
    shutil.copytree(DEMO, ws)
    toml = ws / "dreaming.toml"
    roots = f'codebase_roots = ["{(ROOT / "src").as_posix()}", "{(ROOT / "docs").as_posix()}"]'
    toml.write_text(re.sub(r"^codebase_roots = .*$", roots, toml.read_text(), flags=re.MULTILINE))
    result = CliRunner().invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT])
    assert result.exit_code == 0, result.output
    assert "<!--" in (ws / "DREAMS.md").read_text() and "<!--" in (ws / "MEMORY.md").read_text()
    return ws


def _invoke(ws: Path, command: list[str]) -> Result:
    result = CliRunner().invoke(app, [*command, "--workspace", str(ws)])
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_no_command_prints_an_html_comment_piped(demo: Path, command: list[str]) -> None:
    result = _invoke(demo, command)
    assert "<!--" not in result.output
    assert not ANSI.search(result.output)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_no_command_prints_an_html_comment_on_a_terminal(
    demo: Path, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # what rich reads to treat stdout as a terminal
    assert "<!--" not in _invoke(demo, command).output


def test_piped_the_entry_and_the_insights_are_their_markdown_less_its_comments(demo: Path) -> None:
    entry = _invoke(demo, ["now", "--now", LATER]).stdout
    assert entry.startswith("## 2019-01-02 (now, 09:00 UTC)\n\n### Verdicts\n- ")
    assert "\n### REM Research\n" in entry and "\n#### Investigated " in entry
    insights = _invoke(demo, ["insights"]).stdout
    assert "\n### ✅ Reliable: HOLD on NASDAQ" in insights and "\n#### Statistics\n" in insights
    status = _invoke(demo, ["status"]).stdout
    assert "\nlock:      free\n" in status and "╭" not in status


def test_on_a_terminal_markdown_is_rendered_and_status_is_a_table(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    entry = _invoke(demo, ["now", "--now", LATER]).stdout
    assert "REM Research" in entry and "### " not in entry and "• " in entry  # headings and bullets rendered
    insights = _invoke(demo, ["insights"]).stdout
    assert "Statistics" in insights and "#### " not in insights
    status = _invoke(demo, ["status"]).stdout
    assert "dreaming status" in status and "╭" in status and "│ lock" in status
