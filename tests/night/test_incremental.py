"""Whole nights that continue the verdict tallies write what nights recomputing everything write (issue 14).

The step-level property test (tests/memory/verdicts/test_tallies.py) covers random histories; this one runs the
real night (graph, diary, MEMORY.md index, insights and their archive) over a few appends, a price change, and an
idle night.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from dreaming import dream
from dreaming.memory import Workspace
from dreaming.memory.verdicts._tallies import tallies_path
from tests._workspaces import NIGHT, build_verdict_workspace

RUN_ID = re.compile(r"\d{8}T\d{6}Z-run-[0-9a-f]{6}")
MEASURED = re.compile(r'"(duration_s|mtimeMs)": [0-9.]+')
VOLATILE = ("memory/.dreams/events.jsonl", "memory/.dreams/checkpoints.sqlite", "memory/.dreams/verdict-tallies.json")


def _files(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(VOLATILE):
            out[rel] = MEASURED.sub(r'"\1": 0', RUN_ID.sub("<run>", path.read_text(encoding="utf-8")))
    return out


def _append(ws: Path, rows: list[dict[str, object]]) -> None:
    with (ws / "memory" / ".dreams" / "verdicts.jsonl").open("a") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.slow
def test_nights_continuing_the_tallies_end_like_nights_recomputing_everything(tmp_path: Path) -> None:
    kept = build_verdict_workspace(tmp_path / "kept", assets=("TEST", "OTHER"))
    full = tmp_path / "full"
    shutil.copytree(kept, full)
    night = datetime.fromisoformat(NIGHT)
    schedule: list[tuple[int, list[dict[str, object]]]] = [
        (0, []),
        (1, [{"decision_date": "2026-06-01", "asset": "TEST", "verdict": "HOLD", "role": "cio"}] * 3),
        (2, []),  # idle
        (3, [{"decision_date": "2026-06-02", "asset": "OTHER", "verdict": "sell", "macro_shock": True}, {"x": 1}]),
        (120, [{"decision_date": "2026-06-03", "asset": "TEST", "verdict": "BUY"}]),  # patterns go stale
    ]
    recomputed = []
    for days, rows in schedule:
        for ws in (kept, full):
            _append(ws, rows)
        tallies_path(Workspace.at(full)).unlink(missing_ok=True)
        report = dream(kept, now=night + timedelta(days=days))
        dream(full, now=night + timedelta(days=days))
        recomputed.append(report.summaries["verdicts.review"]["recomputed"])
        assert _files(kept) == _files(full), days
    assert recomputed == ["no tallies yet", None, None, None, None]
    # Aging ran on the last night although no tally changed it: every pattern went stale and was archived.
    assert not list((kept / "memory" / "insights").glob("*.md"))
    assert len(list((kept / "memory" / "insights" / "archive").glob("*.md"))) == 8
