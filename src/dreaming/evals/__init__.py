"""Evaluation: datasets as data files, a replay harness, tiny evaluators, and a ledger of results."""

from __future__ import annotations

from dreaming.evals._harness import LEDGER_COLUMNS, append_ledger, bundled_cases, data_dir, run_research_eval
from dreaming.evals._score import CATEGORIES, CaseResult, EvalCase, Scores, load_cases, render_table, score_case

__all__ = [
    "CATEGORIES",
    "LEDGER_COLUMNS",
    "CaseResult",
    "EvalCase",
    "Scores",
    "append_ledger",
    "bundled_cases",
    "data_dir",
    "load_cases",
    "render_table",
    "run_research_eval",
    "score_case",
]
