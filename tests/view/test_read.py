"""What the pages read: the night's digest in the event log, the budget's window and breaker, gates, the charts."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.config import load_config
from dreaming.memory import Workspace, night_digest
from dreaming.view import Site
from dreaming.view._charts import Bar, SpendPoint, hit_rate_chart, spend_chart
from dreaming.view._read import budget_page, memory_page, nights
from tests._workspaces import NIGHT, build_verdict_workspace
from tests.view.conftest import DEMO

T0 = datetime(2026, 9, 1, 3, 0, tzinfo=UTC)


def test_the_run_finished_event_carries_the_nights_numbers(tmp_path: Path) -> None:
    ws = Workspace.at(build_verdict_workspace(tmp_path / "ws"))
    result = CliRunner().invoke(app, ["run", "--workspace", str(ws.root), "--now", NIGHT, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    [night] = nights(ws)
    digest = night["digest"]
    assert night["run_id"] == report["run_id"] and night["finished"] and night["trigger"] == "run"
    rem = report["summaries"]["verdicts.rem"]["candidates"]
    assert digest["verdicts"]["scored"] == len(rem) > 0
    assert digest["verdicts"]["passing"] == sum(1 for c in rem if c["passes_gate"])
    assert digest["verdicts"]["promoted"] == len(report["summaries"]["verdicts.deep"]["promoted"]) > 0
    assert digest["budget"] == {
        "available": False, "unavailable_reason": "no OPENAI_API_KEY in the environment", "spent_usd": 0.0,
        "calls": 0, "cache_hits": 0, "refusals": {}, "breaker_tripped": False,
    }  # fmt: skip
    assert night_digest({}, {})["research"] == {"researched": 0, "kept": 0, "discarded": 0, "other": 0, "backlog": 0}


def test_a_night_that_never_finished_shows_as_such(workspace: Workspace) -> None:
    workspace.state_dir.mkdir(parents=True)
    workspace.events.write_text(
        json.dumps({"type": "run.started", "run_id": "r1", "trigger": "now", "at": T0.isoformat()}) + "\n"
    )
    [night] = nights(workspace)
    assert night["finished"] is False and night["trigger"] == "now"
    assert "did not finish" in Site(workspace=workspace, config=load_config(workspace.config_file)).render("index.html")


def _ledger(ws: Workspace, entries: list[tuple[timedelta, float, str, str]]) -> None:
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    rows = [
        {"id": f"e{i}", "reserved": i == len(entries) - 1, "at": (T0 + offset).isoformat(), "model": model,
         "node": node, "gap": "", "input_tokens": 10, "output_tokens": 5, "cached_tokens": 0, "cost_usd": cost,
         "estimated": False, "cache_hit": False}
        for i, (offset, cost, node, model) in enumerate(entries)
    ]  # fmt: skip
    ws.budget_ledger.write_text(json.dumps({"version": 3, "entries": rows}))


def test_the_budget_page_counts_the_sliding_window_and_the_breaker(workspace: Workspace) -> None:
    workspace.config_file.write_text("[budget]\nmax_cost_usd = 0.5\nwindow_minutes = 60\n")
    config = load_config(workspace.config_file)
    _ledger(
        workspace,
        [
            (timedelta(minutes=10), 0.30, "research", "gpt-4.1-mini"),  # out of the window at +70 min
            (timedelta(minutes=30), 0.10, "verify", "gpt-4.1-mini"),
            (timedelta(minutes=65), 0.25, "research", "gpt-4.1"),  # an unsettled reservation still counts
        ],
    )
    page = budget_page(workspace, config, T0 + timedelta(minutes=70))
    assert round(page["window_spend_usd"], 6) == 0.35 and page["breaker_open"] is False
    assert page["by_node"][0] == ("research", 0.55) and dict(page["by_model"])["gpt-4.1"] == 0.25
    page = budget_page(workspace, config, T0 + timedelta(minutes=65))
    assert round(page["window_spend_usd"], 6) == 0.65 and page["breaker_open"] is True
    html = Site(workspace=workspace, config=config, now=T0 + timedelta(minutes=65)).render("budget.html")
    assert "breaker: tripped" in html and "reserved (unsettled)" in html and html.count('class="spend"') == 1


def test_the_spend_chart_draws_the_window_sum_at_each_call() -> None:
    points = [SpendPoint(at=T0 + timedelta(minutes=m), cost_usd=c) for m, c in ((0, 0.3), (30, 0.1), (65, 0.25))]
    svg = spend_chart(points, cap_usd=0.5, window=timedelta(minutes=60), now=T0 + timedelta(minutes=70))
    tips = re.findall(r"\$([0-9.]+) in the window", svg)
    assert tips == ["0.3000", "0.4000", "0.3500"]  # the first call had aged out by the third
    assert svg.count('class="cap"') == 1 and svg.count('class="window"') == 1


def test_chart_labels_are_escaped() -> None:
    svg = hit_rate_chart(
        "<script>x</script>", [Bar(regime="<b>up</b>", verdict='"><svg onload=1>', hit_rate=2.0, n=3, passes_gate=True)]
    )
    assert "<script>" not in svg and "<b>" not in svg and "<svg onload" not in svg
    assert 'height="160.0"' in svg  # a hit rate past 1 is drawn at the top, not off the chart


def test_each_recall_entry_shows_the_gate_that_stops_it(tmp_path: Path) -> None:

    shutil.copytree(DEMO, tmp_path / "ws")
    ws = Workspace.at(tmp_path / "ws")
    config = load_config(ws.config_file)
    page = memory_page(ws, config, datetime(2019, 1, 2, 3, 0, tzinfo=UTC))
    gates = {row["candidate"].key: row["gate"] for row in page["recalls"]}
    assert set(gates.values()) >= {"passes", "min_recall_count"}
    assert page["passing"] == sum(1 for g in gates.values() if g == "passes") > 0
    for row in page["recalls"]:
        assert set(row["components"]) == {
            "relevance", "frequency", "diversity", "recency", "consolidation", "conceptual", "phase_boost",
        }  # fmt: skip
    later = memory_page(ws, config, datetime(2019, 3, 1, tzinfo=UTC))  # every recall is now too old
    assert "passes" not in {row["gate"] for row in later["recalls"]}
    assert "max_age_days" in {row["gate"] for row in later["recalls"]}
    assert "last signal more than 30 days ago" in Site(
        workspace=ws, config=config, now=datetime(2019, 3, 1, tzinfo=UTC)
    ).render("memory.html")
