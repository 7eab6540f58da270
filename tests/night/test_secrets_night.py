"""A whole night over a planted tree of secrets leaves none of them in the workspace, the output or the logs.

Offline (no key, no network): research runs its fixed plan over a codebase holding 29 planted secret shapes and a
memory holding some of them, with gaps asking about them.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.memory import Workspace
from dreaming.memory.gaps import record_gap
from tests._workspaces import NIGHT
from tests.memory._secret_shapes import SECRET_NAMED, SHAPES, plant_tree

GAPS = (
    "what is the DATABASE_URL of the app",
    "what is DB_PASS in the deploy config",
    "what is the staging password",
    "what is the SLACK_WEBHOOK url",
    "what is the ALERT_URL token",
    "what is the MONGO_URI",
    "what is the REDIS_URL",
    "what is the GITHUB_TOKEN used by ci",
    "what api_key does the stripe billing use",
    "what Authorization header does the deploy script send",
    "what is the aws_secret_access_key",
    "what is the ENCRYPTION_KEY",
    "what is the private_key of the gcp service account",
    "what is the ANTHROPIC_KEY",
)

NOTE = """# 2026-08-31

## Staging

- The staging app reads DATABASE_URL=postgres://app:PgS3cretPass@db.internal:5432/app from its env.
- DB_PASS=hunt3r2 for the migration user (rotate monthly).
- Alerts go to https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/SlAcKhOoKtOkEn1234567890 .
- Deploys call the API with Authorization: Bearer BearerTok_9f8e7d6c5b4a .
"""
NOTE_VALUES = ("PgS3cretPass", "hunt3r2", "SlAcKhOoKtOkEn1234567890", "BearerTok_9f8e7d6c5b4a")
MEMORY_SECRET_FILE = "MemSecretsFileVal9"


def _workspace(tmp_path: Path) -> tuple[Path, set[str]]:
    repo = plant_tree(tmp_path / "repo")
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# My memory\n\nKeep this line.\n")
    (ws / "memory" / "2026-08-31.md").write_text(NOTE)
    (ws / "memory" / "secrets.md").write_text(f"# Staging\n\nstaging database password {MEMORY_SECRET_FILE}\n")
    (ws / "dreaming.toml").write_text(
        '[autoresearch]\nenabled = true\nsources = ["codebase", "memory"]\n'
        f'codebase_roots = ["{repo.as_posix()}"]\nmax_gaps_per_night = {len(GAPS)}\n'
    )
    workspace = Workspace.at(ws)
    now = datetime.fromisoformat(NIGHT)
    for query in GAPS:
        record_gap(workspace, query, "no_results", best_score=0.0, now=now)
    # The user's own notes are input: they keep their text; nothing else may hold a value.
    return ws, {"memory/2026-08-31.md", "memory/secrets.md"}


def test_a_night_over_a_planted_tree_leaks_no_secret(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TAVILY_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    ws, inputs = _workspace(tmp_path)
    caplog.set_level(logging.DEBUG)
    result = CliRunner().invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT])
    assert result.exit_code == 0, result.output
    values = {shape.value for shape in SHAPES} | set(NOTE_VALUES) | {MEMORY_SECRET_FILE}

    # The night did research the gaps over the tree (so that the absence below means something).
    rows = [json.loads(line) for line in (ws / "memory" / ".dreams" / "research.jsonl").read_text().splitlines()]
    located = {loc.split(":")[0] for row in rows for loc in row["locators"]}
    assert len(rows) == len(GAPS) and len({p for p in located if p.startswith("repo/")}) >= 6
    assert "memory/2026-08-31.md" in located
    assert not located & {f"repo/{name}" for name in SECRET_NAMED} and "memory/secrets.md" not in located

    leaks = []
    for path in sorted(ws.rglob("*")):
        rel = path.relative_to(ws).as_posix()
        if not path.is_file() or rel in inputs:
            continue
        data = path.read_bytes()
        leaks += [(rel, v) for v in values if v.encode() in data]
    streams = {"stdout": result.stdout, "stderr": result.stderr if result.stderr_bytes is not None else "",
               "logs": "\n".join(r.getMessage() for r in caplog.records)}  # fmt: skip
    leaks += [(name, v) for name, text in streams.items() for v in values if v in text]
    assert leaks == []
