"""Evaluation: datasets as data files, a replay harness, tiny evaluators, and a ledger of results."""

from __future__ import annotations

from dreaming.evals._harness import EvalCase, EvalReport, load_cases, run_research_eval

__all__ = ["EvalCase", "EvalReport", "load_cases", "run_research_eval"]
