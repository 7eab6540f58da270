"""``langgraph.json`` exposes the nightly graph; a LangGraph server's JSON context is enough to run a night with it."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path

from tests._workspaces import NIGHT, build_verdict_workspace

ROOT = Path(__file__).resolve().parents[1]


def test_langgraph_json_points_at_the_compiled_night_and_json_context_runs_it(tmp_path: Path) -> None:
    spec = json.loads((ROOT / "langgraph.json").read_text())
    path, attr = spec["graphs"]["night"].split(":")
    module = importlib.import_module(Path(path).with_suffix("").relative_to("src").as_posix().replace("/", "."))
    graph = getattr(module, attr)
    assert {"light", "rem", "research_select", "deep", "diary"} <= set(graph.get_graph().nodes)
    ws = build_verdict_workspace(tmp_path / "ws")
    # What `langgraph dev` sends: no input, a JSON context (the platform brings its own checkpointer).
    state = asyncio.run(graph.ainvoke({}, context={"workspace": str(ws), "now": NIGHT}))
    assert state["done"][-1] == "diary"
    assert "(studio, 03:00 UTC)" in (ws / "DREAMS.md").read_text()
