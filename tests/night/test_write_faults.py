"""Every write of a night fails once (a full disk, a read-only folder): exit 1 and one line, then a clean rerun
ends with the same files as a night that was never interrupted (issue 9, "Disk full and read-only")."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from dreaming.cli import main
from dreaming.memory import Workspace, WriteFaults
from dreaming.memory.gaps import record_gap
from tests._workspaces import NIGHT, build_verdict_workspace

ROOT = Path(__file__).resolve().parents[2]
"""The repository: its ``src`` (the tree under test, not whatever copy is installed) and ``tests`` go on a child's path."""

RUN_ID = re.compile(r"\d{8}T\d{6}Z-run-[0-9a-f]{6}")
# What differs between two uninterrupted nights too: wall time spent, the notes' modification times (the workspaces
# are built at different moments), the search index (a cache rebuilt from the notes), and the verdict tallies (a
# cache of the verdict chain that names its outputs' inodes and mtimes; tests/memory/verdicts/test_tallies.py checks
# that a night continuing them writes what a full recomputation writes).
MEASURED = re.compile(r'"(duration_s|mtimeMs)": [0-9.]+')
VOLATILE = (
    "memory/.dreams/events.jsonl",
    "memory/.dreams/checkpoints.sqlite",
    "memory/.dreams/dreaming-budget.json",
    "memory/.dreams/search-index.sqlite",
    "memory/.dreams/verdict-tallies.json",
)


def _workspace(root: Path) -> Path:
    """The verdict workspace, plus notes, gaps and a small codebase, so that research and recall write too."""
    build_verdict_workspace(root)
    (root / "code").mkdir()
    (root / "code" / "settings.py").write_text('RETRY_LIMIT = 5\n"""How many times a failed upload is retried."""\n')
    (root / "memory" / "2026-08-31.md").write_text("# Notes\n\n- The upload retry limit lives in settings.\n")
    (root / "dreaming.toml").write_text(
        '[autoresearch]\nenabled = true\nsources = ["codebase", "memory"]\ncodebase_roots = ["code"]\n'
    )
    ws = Workspace.at(root)
    then = datetime.fromisoformat(NIGHT)
    for query in ("what is RETRY_LIMIT", "who owns the billing service"):
        record_gap(ws, query, "no_results", best_score=0.0, now=then)
    return root


FAILING_NIGHT = """
import sys
from dreaming.cli import main
from dreaming.memory import WriteFaults
with WriteFaults(fail_at=int(sys.argv[1]), error=int(sys.argv[2])):
    sys.argv = ["dreaming", "run", "--workspace", sys.argv[3], "--now", sys.argv[4], "--json"]
    main()
"""


def _failing_night(root: Path, nth: int, error: int) -> tuple[int, str]:
    # In its own process, as a real night is: a process that ends releases its files and SQLite connections.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", FAILING_NIGHT, str(nth), str(error), str(root), NIGHT],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    return done.returncode, done.stderr


def _night(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    argv = sys.argv
    sys.argv = ["dreaming", "run", "--workspace", str(root), "--now", NIGHT, "--json"]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = argv
    return code, capsys.readouterr().err


def _files(root: Path) -> dict[str, str]:
    """Every file of the workspace (run ids normalized), minus the logs of what happened and temp files."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or rel.startswith(VOLATILE) or ".corrupt-" in rel or path.name.endswith(".tmp"):
            continue
        text = RUN_ID.sub("<run>", path.read_text(encoding="utf-8", errors="replace"))
        out[rel] = MEASURED.sub(r'"\1": 0', text)
    return out


def _valid_state(root: Path) -> None:
    for path in (root / "memory" / ".dreams").glob("*.json"):
        json.loads(path.read_text())
    for path in (root / "memory" / ".dreams").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            json.loads(line)


@pytest.mark.slow
@pytest.mark.parametrize(("error", "every"), [(errno.ENOSPC, 1), (errno.EACCES, 9)])
def test_every_write_of_a_night_fails_once_and_the_rerun_ends_as_if_nothing_happened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], error: int, every: int
) -> None:
    """A full disk at each write of the night in turn; a read-only file at every ``every``-th write (and the last)."""
    reference = _workspace(tmp_path / "reference")
    with WriteFaults() as counted:
        code, err = _night(reference, capsys)
    assert code == 0, err
    expected = _files(reference)
    writes = len(counted.writes)
    assert writes >= 20  # the loop below is only as good as the writes it reaches
    for nth in sorted({*range(1, writes + 1, every), writes}):
        root = _workspace(tmp_path / f"ws-{nth}")
        failed = Path(str(counted.writes[nth - 1]).replace(str(reference), str(root)))
        code, err = _failing_night(root, nth, error)
        assert code == 1, (nth, failed, err)
        lines = [line for line in err.splitlines() if line.startswith("dreaming:")]
        assert len(lines) == 1, (nth, err)
        assert str(failed) in lines[0] or failed.name == "checkpoints.sqlite", (nth, err)
        assert "Traceback" not in err
        _valid_state(root)
        code, err = _night(root, capsys)  # space freed: the night resumes
        assert code == 0, (nth, failed, err)
        assert _files(root) == expected, (nth, failed)
