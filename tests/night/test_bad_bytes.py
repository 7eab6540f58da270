"""Bytes that are not UTF-8 in any input: the line or file is skipped and reported, the night goes on (issue 9.4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreaming.cli import app
from tests._workspaces import NIGHT, build_verdict_workspace

runner = CliRunner()


def _run(ws: Path) -> tuple[int, dict[str, object], str]:
    result = runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    try:
        summary = json.loads(result.output)
    except ValueError:
        summary = {}
    return result.exit_code, summary, result.output


def _reported(summary: dict[str, object]) -> str:
    bad = summary.get("bad_input") or []
    notes = summary.get("notes") or []
    assert isinstance(bad, list) and isinstance(notes, list)
    return "\n".join([*map(str, bad), *map(str, notes)])


def _price_row(ws: Path) -> str:
    path = ws / "prices" / "TEST.csv"
    lines = path.read_bytes().split(b"\n")
    lines[5] += b"\xff"  # line 6: a data row
    path.write_bytes(b"\n".join(lines))
    return "prices/TEST.csv:6: not UTF-8"


def _verdict_line(ws: Path) -> str:
    path = ws / "memory" / ".dreams" / "verdicts.jsonl"
    n = len(path.read_bytes().splitlines())
    with path.open("ab") as handle:
        handle.write(b'{"decision_date": "2026-04-01", "asset": "TE\xffST", "verdict": "BUY"}\n')
    return f"verdicts.jsonl:{n + 1}: not UTF-8"


def _verdict_encoded_surrogate(ws: Path) -> str:
    path = ws / "memory" / ".dreams" / "verdicts.jsonl"
    n = len(path.read_bytes().splitlines())
    with path.open("ab") as handle:  # UTF-8 of U+D800, which json.loads(bytes) lets through
        handle.write(b'{"decision_date": "2026-04-01", "asset": "TE\xed\xa0\x80ST", "verdict": "BUY"}\n')
    return f"verdicts.jsonl:{n + 1}: not UTF-8"


def _verdict_escaped_surrogate(ws: Path) -> str:
    path = ws / "memory" / ".dreams" / "verdicts.jsonl"
    n = len(path.read_bytes().splitlines())
    with path.open("ab") as handle:
        handle.write(b'{"decision_date": "2026-04-01", "asset": "TE\\ud800ST", "verdict": "BUY"}\n')
    return f"verdicts.jsonl:{n + 1}: not UTF-8"


def _daily_note(ws: Path) -> str:
    (ws / "memory" / "2026-08-31.md").write_bytes(b"# Notes\nThe caf\xe9 opens at nine.\n\nSecond paragraph.\n")
    return "memory/2026-08-31.md:2: not UTF-8"


def _memory_md(ws: Path) -> str:
    (ws / "MEMORY.md").write_bytes(b"# My memory\n\nKeep \xfe this line.\n")
    return "MEMORY.md:3: not UTF-8"


def _recall_store(ws: Path) -> str:
    store = ws / "memory" / ".dreams" / "short-term-recall.json"
    store.write_bytes(b'{"version": 1, "updatedAt": "2026-08-30T00:00:00Z", "entries": {"k\xed\xa0\x80": {}}}\n')
    return "short-term-recall.json moved aside"


def _gaps(ws: Path) -> str:
    gaps = ws / "memory" / ".dreams" / "knowledge-gaps.json"
    gaps.write_bytes(b'{"version": 1, "gaps": {"q\xff": {}}}\n')
    return "knowledge-gaps.json moved aside"


def _file_names(ws: Path) -> str:
    # Python hands such names over with lone surrogates, which no JSON state file or index row can hold.
    (ws / "memory" / os.fsdecode(b"2026-08-31-caf\xe9.md")).write_bytes(b"# Notes\nA fine note.\n")
    (ws / "prices" / os.fsdecode(b"B\xe9D.csv")).write_bytes(b"date,close\n2026-01-05,1\n")
    return "memory/2026-08-31-caf\ufffd.md:0: file name is not UTF-8"


CASES: dict[str, Callable[[Path], str]] = {
    "price-row": _price_row,
    "verdict-line": _verdict_line,
    "verdict-encoded-surrogate": _verdict_encoded_surrogate,
    "verdict-escaped-surrogate": _verdict_escaped_surrogate,
    "daily-note": _daily_note,
    "memory-md": _memory_md,
    "recall-store": _recall_store,
    "gaps": _gaps,
    "file-names": _file_names,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_bytes_are_reported_with_file_and_line_and_the_night_completes(tmp_path: Path, case: str) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    expected = CASES[case](ws)
    code, summary, output = _run(ws)
    assert code == 0, output
    reported = _reported(summary)
    assert expected in reported, reported
    assert "not UTF-8" in reported
    # Valid input next to the bad one still counts: the verdict path still promotes its insight.
    assert (ws / "memory" / "insights" / "reliable-buy-test-uptrend-7d.md").exists()
    code, _, output = _run(ws)  # the next night too
    assert code == 0, output


def test_a_stray_byte_in_memory_md_and_dreams_md_is_kept_byte_for_byte(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws", user_memory=None)
    (ws / "MEMORY.md").write_bytes(b"# My memory\n\nKeep \xfe this line.\n")
    (ws / "DREAMS.md").write_bytes(b"# Dream Diary\n\nA line of mine \xff.\n")
    code, _, output = _run(ws)
    assert code == 0, output
    memory = (ws / "MEMORY.md").read_bytes()
    assert memory.startswith(b"# My memory\n\nKeep \xfe this line.\n")
    assert b"reliable-buy-test-uptrend-7d" in memory
    diary = (ws / "DREAMS.md").read_bytes()
    assert diary.startswith(b"# Dream Diary\n\nA line of mine \xff.\n")
    assert diary.count(b"<!-- dreaming:run:") == 1


def test_a_note_with_a_bad_byte_is_read_with_a_replacement_character_and_never_rewritten(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    note = ws / "memory" / "2026-08-31.md"
    raw = b"# Notes\nThe caf\xe9 opens at nine.\n"
    note.write_bytes(raw)
    code, _, output = _run(ws)
    assert code == 0, output
    assert note.read_bytes() == raw
    store = json.loads((ws / "memory" / ".dreams" / "short-term-recall.json").read_text(encoding="utf-8"))
    snippets = [entry["snippet"] for entry in store["entries"].values()]
    assert any("caf\ufffd opens at nine" in s for s in snippets), snippets


KILL_BEFORE_DEEP = """
import os, sys
import dreaming.graph.nodes as nodes
def die(*a, **k):
    os._exit(137)
nodes.deep = die
from dreaming.cli import app
app(["run", "--workspace", sys.argv[1], "--now", sys.argv[2]], standalone_mode=True)
"""


@pytest.mark.slow
def test_a_resumed_night_with_a_bad_price_row_completes(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    _price_row(ws)
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    killed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILL_BEFORE_DEEP), str(ws), NIGHT],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert killed.returncode == 137, killed.stderr  # light read the bad row and went on; the kill came later
    code, _, output = _run(ws)
    assert code == 0, output
    assert "resumed" in (ws / "memory" / ".dreams" / "events.jsonl").read_text()
    assert (ws / "memory" / "insights" / "reliable-buy-test-uptrend-7d.md").exists()
    code, _, output = _run(ws)
    assert code == 0, output
