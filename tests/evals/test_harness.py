"""The research eval: real third-party code, content-checked scoring, floors a regression cannot pass."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.evals import CATEGORIES, EvalCase, bundled_cases, data_dir, run_research_eval, score_case
from dreaming.evals._adversary import AdversarialModel

NOW = datetime(2026, 11, 30, 3, tzinfo=UTC)
# A fast subset: every trap category whole, and the answerable cases of two packages and the user's notes.
SUBSET_PREFIXES = ("ten-", "mem-", "inj-")


def _subset() -> list[EvalCase]:
    traps = {"near_match", "unanswerable", "injected"}
    return [c for c in bundled_cases() if c.category in traps or c.id.startswith(SUBSET_PREFIXES)]


def test_the_bundled_set_is_real_pinned_and_covers_every_category() -> None:
    cases = bundled_cases()
    assert len(cases) >= 100
    for category in CATEGORIES:
        assert sum(c.category == category for c in cases) >= 8, category
    versions = dict(line.split() for line in (data_dir() / "corpus" / "VERSIONS").read_text().splitlines())
    assert set(versions) >= {"langgraph", "tenacity", "typer", "tiktoken"}
    for package in versions:
        assert (data_dir() / "corpus" / package / "LICENSE").is_file()
    # Every keep case names answer tokens that really stand in its expected lines of the pinned corpus or notes.
    for case in cases:
        if case.expect != "keep":
            continue
        path, first, last = case.places[0]
        base = data_dir() / ("memory" if path.startswith("memory/") else "corpus")
        lines = (base / path.removeprefix("memory/")).read_text().splitlines()[first - 1 : last]
        for token in case.answer:
            assert token.lower() in "\n".join(lines).lower(), (case.id, token)


def test_scoring_checks_what_a_finding_says_not_only_where_it_points() -> None:
    case = EvalCase(
        id="c", query="q", expect="keep", answer=("multiplier", "1"), places=(("tenacity/wait.py", 214, 219),)
    )
    row = {
        "decision": "keep",
        "claim": "wait_exponential.__init__: multiplier: float = 1",
        "locators": ["tenacity/wait.py:216"],
    }
    assert score_case(case, row).correct
    wrong_value = {**row, "claim": "wait_exponential.__init__: multiplier: float = 10"}
    assert not score_case(case, wrong_value).correct and score_case(case, wrong_value).false_keep
    wrong_place = {**row, "locators": ["tenacity/wait.py:298"]}
    assert not score_case(case, wrong_place).correct
    trap = EvalCase(id="t", query="q", expect="not_keep")
    assert score_case(trap, row).false_keep and not score_case(trap, {"decision": "discard"}).false_keep


def test_offline_research_on_the_fast_subset_meets_its_floors(tmp_path: Path) -> None:
    ledger = tmp_path / "results.tsv"
    scores = asyncio.run(run_research_eval(now=NOW, env={}, cases=_subset(), ledger=ledger))
    by_category = scores.by_category()
    for trap in ("near_match", "unanswerable", "injected"):
        assert by_category[trap].get("false_keeps", 0) == 0, trap
    assert scores.precision is not None and scores.precision >= 0.95
    assert scores.recall is not None and scores.recall >= 0.3
    assert scores.tokens == 0 and scores.cost_usd == 0.0
    header, row = ledger.read_text().splitlines()
    assert header.split("\t")[:3] == ["at", "label", "cases"]
    assert row.split("\t")[1:3] == ["offline", str(len(scores.results))]


def test_the_adversarial_model_is_rejected_at_least_95_percent() -> None:
    model = AdversarialModel()
    cases = [c for c in bundled_cases() if c.id.startswith(("ten-", "inj-"))]
    scores = asyncio.run(run_research_eval(now=NOW, env={}, cases=cases, model=model, label="adversarial"))
    assert scores.extra["adversarial_proposed"] >= 50
    assert scores.extra["adversarial_reject_rate"] >= 0.95
    assert scores.tokens > 0  # the model really ran, behind the gateway


def test_eval_command_prints_one_table() -> None:
    result = CliRunner().invoke(app, ["eval", "--category", "near_match", "--json", "--now", NOW.isoformat()])
    assert result.exit_code == 0, result.output
    run = json.loads(result.output)["runs"][0]
    assert run["label"] == "offline" and run["false_keeps"] == 0 and run["cases"] >= 8
