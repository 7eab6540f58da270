"""The command line on a workspace whose recall store is OpenClaw 2026.9's SQLite database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.memory import Workspace
from dreaming.memory.recall import _openclaw_db as oc
from dreaming.memory.recall._openclaw_paths import workspace_key
from tests._workspaces import NIGHT, build_verdict_workspace
from tests.memory.recall.openclaw_state import (
    OpenClawInstall,
    all_rows,
    entries_in,
    file_digest,
    install_openclaw,
    put_entry,
)

NOW = "2026-04-15T03:00:00+00:00"


@pytest.fixture
def noted(workspace: Workspace) -> Workspace:
    (workspace.root / "memory").mkdir()
    (workspace.root / "memory" / "2026-04-14.md").write_text("# Ops\n\nKafka retention is seven days.\n")
    return workspace


def invoke(ws: Workspace, *args: str) -> tuple[int, str]:
    """Return the exit code and stdout (stderr too when the command failed)."""
    result = CliRunner().invoke(app, [*args, "--workspace", str(ws.root), "--now", NOW])
    return result.exit_code, result.output if result.exit_code else result.stdout


def default_workspace(noted: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> OpenClawInstall:
    made = install_openclaw(tmp_path, monkeypatch)
    monkeypatch.setenv("OPENCLAW_WORKSPACE_DIR", str(noted.root))  # the agent's workspace, as OpenClaw is told
    return made


def test_search_records_into_openclaws_database_not_the_json_file(
    noted: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = default_workspace(noted, tmp_path, monkeypatch)
    code, out = invoke(noted, "search", "kafka retention", "--json")
    assert code == 0, out
    assert json.loads(out)["recording_errors"] == 0
    ((key, value),) = entries_in(made.db, str(noted.root), oc.RECALL_NAMESPACE)
    assert key == "memory:memory/2026-04-14.md:1:3" and value["recallCount"] == 1
    assert [k for k, _ in entries_in(made.db, str(noted.root), oc.META_NAMESPACE)] == ["recall"]
    assert not noted.recall_store.exists()


def test_search_on_a_newer_schema_records_nothing_and_says_so(
    noted: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = install_openclaw(tmp_path, monkeypatch, user_version=19)
    monkeypatch.setenv("OPENCLAW_WORKSPACE_DIR", str(noted.root))
    digest = file_digest(made.db)
    code, out = invoke(noted, "search", "kafka retention", "--json")
    assert code == 0, out  # the search itself works; recording it failed and is counted
    assert json.loads(out)["recording_errors"] == 1
    assert file_digest(made.db) == digest and not noted.recall_store.exists()


def test_doctor_says_which_store_and_what_it_holds(
    noted: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = default_workspace(noted, tmp_path, monkeypatch)
    assert invoke(noted, "search", "kafka retention")[0] == 0
    code, out = invoke(noted, "doctor")
    assert code == 0, out
    key = workspace_key(str(noted.root))
    assert f"recall store: OpenClaw SQLite {made.db} (user_version 18), workspace key {key}" in out
    assert "(OpenClaw's database holds rows of this workspace)" in out  # since the search wrote them
    assert "rows: short-term-recall 1, short-term-phase-signals 0, short-term-meta 1, short-term-locks 0" in out
    assert "recall-store-choice" not in out

    code, out = invoke(noted, "doctor", "--json")
    store = json.loads(out)["store"]
    assert (store["kind"], store["db"], store["workspace_key"], store["user_version"]) == (
        "sqlite",
        str(made.db),
        key,
        18,
    )
    assert store["rows"][oc.RECALL_NAMESPACE] == 1 and store["json_exists"] is False


def test_doctor_warns_when_json_and_sqlite_rows_both_exist(
    noted: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = install_openclaw(tmp_path, monkeypatch)
    put_entry(made.db, str(noted.root), oc.RECALL_NAMESPACE, "k", {"key": "k"})
    noted.state_dir.mkdir(parents=True)
    noted.recall_store.write_text('{"version": 1, "entries": {}}\n')
    code, out = invoke(noted, "doctor")
    assert code == 0, out
    (warning,) = [line for line in out.splitlines() if "recall-store-choice" in line]
    assert "OpenClaw 2026.9 reads only SQLite" in warning and "nothing is merged" in warning
    assert "dreaming uses the SQLite store" in warning


def test_doctor_on_a_json_workspace_names_the_file(noted: Workspace) -> None:
    code, out = invoke(noted, "doctor")
    assert code == 0, out
    assert "recall store: JSON memory/.dreams/short-term-recall.json (no OpenClaw database at" in out
    assert json.loads(invoke(noted, "doctor", "--json")[1])["store"]["kind"] == "json"


def test_doctor_repair_on_a_refused_schema_reports_and_exits_1(
    noted: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = install_openclaw(tmp_path, monkeypatch, user_version=19)
    monkeypatch.setenv("OPENCLAW_WORKSPACE_DIR", str(noted.root))
    before = all_rows(made.db)
    code, out = invoke(noted, "doctor", "--repair")
    assert code == 1
    assert "error: recall-store-unusable" in out and "user_version 19; this dreaming reads only 18" in out
    assert "Traceback" not in out and all_rows(made.db) == before


def test_a_night_on_a_refused_schema_skips_the_recall_phases_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = build_verdict_workspace(tmp_path / "ws")
    (root / "memory" / "2026-08-31.md").write_text("# Ops\n\nKafka retention is seven days.\n")
    made = install_openclaw(tmp_path, monkeypatch, user_version=19)
    monkeypatch.setenv("OPENCLAW_WORKSPACE_DIR", str(root))
    digest = file_digest(made.db)
    result = CliRunner().invoke(app, ["run", "--workspace", str(root), "--now", NIGHT])
    assert result.exit_code == 0, result.output
    diary = (root / "DREAMS.md").read_text()
    assert "Recall skipped: OpenClaw's recall store" in diary and "user_version 19" in diary
    assert "Verdicts" in diary  # the rest of the night ran
    assert file_digest(made.db) == digest and not (root / "memory" / ".dreams" / "short-term-recall.json").exists()


def test_doctor_on_a_configured_state_dir_without_a_database(noted: Workspace, tmp_path: Path) -> None:
    noted.config_file.write_text(f'[recall]\nopenclaw_state_dir = "{tmp_path / "missing"}"\n')
    code, out = invoke(noted, "doctor")
    assert code == 0, out
    db = tmp_path / "missing" / "state" / "openclaw.sqlite"
    assert f"recall store: OpenClaw SQLite {db} (unreadable) ([recall] openclaw_state_dir names" in out
    assert "error: recall-store-unusable:" in out and "it does not exist" in out
