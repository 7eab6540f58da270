"""Replay recorded knowledge gaps through a real night and score the research decisions.

A dataset is a JSONL file of cases ``{"id", "query", "expect": "keep" | "not_keep", "locator"?}``. The harness
builds a scratch workspace, records each query as a knowledge gap, runs one night with ``trigger="eval"`` and
research on the dataset's corpus (offline unless keys are set), then compares each gap's decision in
``research.jsonl`` with what the case expects: a ``keep`` case is right when it is kept citing a source whose
locator contains ``locator``; a ``not_keep`` case is right when it is discarded, abstained or failed (anything
kept is a false keep, the costly error). One row per evaluation is appended to a ledger (``results.tsv``), like
autoresearch's, so runs can be compared over time.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from dreaming.agent import dream, night_context
from dreaming.config import AutoresearchConfig, DreamingConfig
from dreaming.memory import InputReport, Workspace, iter_jsonl
from dreaming.memory.gaps import record_gap

__all__ = ["LEDGER_COLUMNS", "EvalCase", "EvalReport", "load_cases", "run_research_eval"]

LEDGER_COLUMNS = ("at", "dataset", "cases", "correct", "accuracy", "kept", "false_keeps", "tokens", "cost_usd")


@dataclass(frozen=True, kw_only=True, slots=True)
class EvalCase:
    """One recorded gap and what a good research night does with it."""

    id: str
    """Case identifier."""
    query: str
    """The gap's query, as the agent searched it."""
    expect: str
    """``keep`` or ``not_keep``."""
    locator: str = ""
    """For ``keep``: a substring the kept finding's source locator must contain."""


@dataclass(frozen=True, kw_only=True, slots=True)
class EvalReport:
    """The outcome of one evaluation."""

    dataset: str
    """Dataset file name."""
    results: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    """Per case: id, expected, decision, confidence, correct, locators."""
    tokens: int = 0
    """Model tokens the night used."""
    cost_usd: float = 0.0
    """What the night cost."""

    @property
    def correct(self) -> int:
        """Cases decided as expected."""
        return sum(1 for r in self.results if r["correct"])

    @property
    def false_keeps(self) -> int:
        """``not_keep`` cases that were kept anyway."""
        return sum(1 for r in self.results if r["expected"] == "not_keep" and r["decision"] == "keep")

    @property
    def accuracy(self) -> float:
        """Share of cases decided as expected."""
        return self.correct / len(self.results) if self.results else 0.0

    def ledger_row(self, at: datetime) -> dict[str, Any]:
        """Return the row appended to the ledger."""
        kept = sum(1 for r in self.results if r["decision"] == "keep")
        values = (at.isoformat(), self.dataset, len(self.results), self.correct, f"{self.accuracy:.3f}", kept,
                  self.false_keeps, self.tokens, f"{self.cost_usd:.6f}")  # fmt: skip
        return dict(zip(LEDGER_COLUMNS, values, strict=True))


def _data(name: str) -> Path:
    return Path(str(resources.files("dreaming.evals").joinpath("data", name)))


def load_cases(path: Path) -> list[EvalCase]:
    """Read a dataset; malformed lines are skipped (and reported by :func:`iter_jsonl`'s report)."""
    report = InputReport()
    cases = []
    for _, row in iter_jsonl(path, report):
        if isinstance(row.get("query"), str) and row.get("expect") in ("keep", "not_keep"):
            cases.append(
                EvalCase(id=str(row.get("id") or row["query"]), query=row["query"], expect=row["expect"],
                         locator=str(row.get("locator") or ""))
            )  # fmt: skip
    return cases


def _score(case: EvalCase, row: Mapping[str, Any] | None) -> dict[str, Any]:
    decision = str(row.get("decision")) if row else "missing"
    locators = [str(loc) for loc in (row or {}).get("locators") or []]
    if case.expect == "keep":
        correct = decision == "keep" and any(case.locator in loc for loc in locators)
    else:
        correct = decision in ("discard", "abstain", "failed")
    confidence = (row or {}).get("confidence")
    return {"id": case.id, "query": case.query, "expected": case.expect, "decision": decision,
            "confidence": confidence, "correct": correct, "locators": locators[:3]}  # fmt: skip


async def run_research_eval(
    *,
    now: datetime,
    env: Mapping[str, str],
    dataset: Path | None = None,
    corpus: Path | None = None,
    ledger: Path | None = None,
) -> EvalReport:
    """Replay a dataset's gaps through one night and score the decisions.

    Args:
        now: the night's 'now' (also stamps the ledger row).
        env: the environment (pass ``{}`` to stay offline whatever is set).
        dataset: the cases; defaults to the bundled ``research_gaps.jsonl``.
        corpus: the codebase researched; defaults to the bundled corpus.
        ledger: a ``results.tsv`` to append a row to; none by default.
    """
    dataset = dataset or _data("research_gaps.jsonl")
    corpus = (corpus or _data("corpus")).resolve()
    cases = load_cases(dataset)
    with tempfile.TemporaryDirectory(prefix="dreaming-eval-") as tmp:
        ws = Workspace.at(Path(tmp) / "workspace")
        ws.state_dir.mkdir(parents=True)
        for case in cases:
            record_gap(ws, case.query, "no_results", best_score=0.0, now=now)
        research = AutoresearchConfig(
            enabled=True, sources=("codebase", "memory", "web"), codebase_roots=(str(corpus),),
            max_gaps_per_night=max(1, len(cases)),
        )  # fmt: skip
        config = replace(DreamingConfig(), autoresearch=research)
        outcome = await dream(ws, config, now=now, trigger="eval", make_context=night_context(env=env))
        rows: dict[str, Mapping[str, Any]] = {}
        for _, row in iter_jsonl(ws.research_log, InputReport()):
            rows[str(row.get("gap", "")).strip().lower()] = row
        budget = (outcome.state.get("summaries") or {}).get("budget") or {}
    by_model = (budget.get("by_model") or {}).values()
    tokens = sum(int(c.get("input_tokens", 0)) + int(c.get("output_tokens", 0)) for c in by_model)
    report = EvalReport(
        dataset=dataset.name,
        results=tuple(_score(case, rows.get(case.query.strip().lower())) for case in cases),
        tokens=tokens,
        cost_usd=float(budget.get("run_spend_usd") or 0.0),
    )
    if ledger is not None:
        _append_ledger(ledger, report.ledger_row(now))
    return report


def _append_ledger(path: Path, row: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with path.open("a", encoding="utf-8") as handle:
        if new:
            handle.write("\t".join(LEDGER_COLUMNS) + "\n")
        handle.write("\t".join(str(row[c]) for c in LEDGER_COLUMNS) + "\n")
