"""The eval harness replays recorded gaps through a real night, offline, and scores the decisions."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from dreaming.agent.cli import app
from dreaming.evals import load_cases, run_research_eval

NOW = datetime(2026, 11, 30, 3, tzinfo=UTC)


def test_bundled_dataset_is_answered_offline_with_no_false_keep(tmp_path: Path) -> None:
    ledger = tmp_path / "results.tsv"
    report = asyncio.run(run_research_eval(now=NOW, env={}, ledger=ledger))
    assert len(report.results) == len(
        load_cases(Path(__file__).parents[2] / "src/dreaming/evals/data/research_gaps.jsonl")
    )
    assert report.false_keeps == 0
    assert report.accuracy == 1.0, report.results
    assert report.tokens == 0 and report.cost_usd == 0.0
    header, row = ledger.read_text().splitlines()
    assert header.split("\t")[:4] == ["at", "dataset", "cases", "correct"]
    assert row.split("\t")[1:5] == ["research_gaps.jsonl", "6", "6", "1.000"]


def test_a_wrong_expectation_is_scored_as_a_miss(tmp_path: Path) -> None:
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text(
        json.dumps({"id": "wrong-file", "query": "what is MAX_RETRIES", "expect": "keep", "locator": "deploy.md"}) + "\n"
        + json.dumps({"id": "should-not-keep", "query": "what is MAX_RETRIES", "expect": "not_keep"}) + "\n"
        + "not json\n"
    )  # fmt: skip
    report = asyncio.run(run_research_eval(now=NOW, env={}, dataset=dataset))
    assert [r["correct"] for r in report.results] == [False, False]
    assert report.false_keeps == 1


def test_eval_command_prints_the_score() -> None:
    result = CliRunner().invoke(app, ["eval", "--json", "--now", NOW.isoformat()])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["accuracy"] == 1.0 and payload["false_keeps"] == 0
