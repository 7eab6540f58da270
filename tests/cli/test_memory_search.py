from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from dreaming.cli.memory import register
from dreaming.memory import Workspace
from dreaming.memory.gaps import list_gaps

NOW = "2026-04-15T03:00:00+00:00"


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


@pytest.fixture
def noted(workspace: Workspace) -> Workspace:
    (workspace.root / "memory").mkdir()
    (workspace.root / "memory" / "2026-04-14.md").write_text("# Ops\n\nKafka retention is seven days.\n")
    return workspace


def invoke(app: typer.Typer, ws: Workspace, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, [*args, "--workspace", str(ws.root), "--now", NOW])
    return result.exit_code, result.output


def test_search_prints_hits_with_line_ranges(app: typer.Typer, noted: Workspace) -> None:
    code, out = invoke(app, noted, "search", "kafka retention")
    assert code == 0, out
    assert "memory/2026-04-14.md:1-3  1.00  Ops: Kafka retention is seven days." in out  # the heading as context
    assert "knowledge gap" not in out
    assert list_gaps(noted) == []


def test_search_json_and_gap_on_empty_results(app: typer.Typer, noted: Workspace) -> None:
    code, out = invoke(app, noted, "search", "Postgres vacuum?", "--json")
    assert code == 0, out
    payload = json.loads(out)
    assert payload["hits"] == []
    assert payload["gap_type"] == "no_results"
    assert payload["gap"]["key"] == "postgres vacuum"
    assert payload["gap"]["count"] == 1
    assert [g.key for g in list_gaps(noted)] == ["postgres vacuum"]


@pytest.mark.parametrize(
    ("query", "gap_type"),
    [
        ("kafka partitions rebalancing", "low_confidence"),
        ("kafka retention partitions rebalancing lag", "partial_match"),
    ],
)
def test_search_records_weak_results(app: typer.Typer, noted: Workspace, query: str, gap_type: str) -> None:
    code, out = invoke(app, noted, "search", query, "--limit", "3")
    assert code == 0, out
    assert "memory/2026-04-14.md:1-3" in out
    assert f"recorded knowledge gap ({gap_type}, seen 1x)" in out


def test_search_finds_plurals_and_cjk_without_recording_a_gap(app: typer.Typer, noted: Workspace) -> None:
    (noted.root / "memory" / "2026-04-13.md").write_text("数据库迁移已经完成，明天检查备份任务。\n", encoding="utf-8")
    for query, path in [("备份", "memory/2026-04-13.md"), ("retentions", "memory/2026-04-14.md")]:
        code, out = invoke(app, noted, "search", query, "--json")
        assert code == 0, out
        payload = json.loads(out)
        assert payload["hits"][0]["path"] == path
        assert (payload["gap_type"], payload["gap"]) == (None, None)
    assert list_gaps(noted) == []


def test_gap_add_and_list(app: typer.Typer, noted: Workspace) -> None:
    assert invoke(app, noted, "gap", "add", "How do we rotate keys?")[0] == 0
    code, out = invoke(app, noted, "gap", "add", "how do we rotate KEYS", "--json")
    assert code == 0, out
    assert json.loads(out)["count"] == 2
    code, out = invoke(app, noted, "gap", "list")
    assert code == 0
    assert "2x  open       no_results     How do we rotate keys?" in out
    code, out = invoke(app, noted, "gap", "list", "--status", "kept", "--json")
    assert json.loads(out) == {"gaps": []}
    code, out = invoke(app, noted, "gap", "list", "--json")
    assert [g["key"] for g in json.loads(out)["gaps"]] == ["how do we rotate keys"]


@pytest.mark.parametrize(
    "args",
    [
        ("gap", "add", "  ?? "),
        ("gap", "add", "x", "--type", "bogus"),
        ("gap", "list", "--status", "bogus"),
        ("search", "x", "--now", "yesterday"),
    ],
)
def test_usage_errors_exit_2(app: typer.Typer, noted: Workspace, args: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*args, "--workspace", str(noted.root)])
    assert result.exit_code == 2, result.output
