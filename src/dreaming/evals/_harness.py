"""Replay recorded knowledge gaps through a real night over real third-party code, and score what research kept.

The bundled set (``data/research``) is pinned third-party source (``corpus/VERSIONS``, each package with its licence),
a small project of the user's own with planted instructions (``corpus/shop``), the user's daily notes (``memory/``,
some with injected instructions) and the cases (``cases/*.jsonl``, see ``_score``). The harness builds a scratch
workspace holding the notes, records each case's query as a gap, runs one night with ``trigger="eval"`` and research
on every corpus folder, then scores each gap's row of ``research.jsonl`` by its content (:func:`score_case`).
One row per run is appended to a ledger (``results.tsv``), like autoresearch's, so runs can be compared over time.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from dreaming.config import AutoresearchConfig, BudgetConfig, DreamingConfig
from dreaming.evals._adversary import AdversarialModel
from dreaming.evals._score import EvalCase, Scores, load_cases, score_case
from dreaming.graph import DreamContext
from dreaming.llm import LLMGateway, build_gateway
from dreaming.memory import InputReport, Workspace, iter_jsonl
from dreaming.memory.gaps import record_gap
from dreaming.night import night_context, run_night

__all__ = ["LEDGER_COLUMNS", "append_ledger", "bundled_cases", "corpus_roots", "data_dir", "run_research_eval"]

LEDGER_COLUMNS = (
    "at", "label", "cases", "kept", "precision", "recall", "false_keeps", "citation_accuracy", "abstain_rate",
    "seconds_per_gap", "tokens", "cost_usd",
)  # fmt: skip


def data_dir() -> Path:
    """Return the bundled research eval folder (``corpus/``, ``memory/``, ``cases/``)."""
    return Path(str(resources.files("dreaming.evals").joinpath("data", "research")))


def bundled_cases() -> list[EvalCase]:
    """Return every bundled case, in file then line order."""
    return load_cases(sorted((data_dir() / "cases").glob("*.jsonl")))


def corpus_roots(corpus: Path) -> list[Path]:
    """Return the corpus's top folders (one codebase root each, so locators read ``tenacity/wait.py:214``)."""
    return sorted(p for p in corpus.iterdir() if p.is_dir())


async def run_research_eval(
    *,
    now: datetime,
    env: Mapping[str, str],
    cases: Sequence[EvalCase] | None = None,
    corpus: Path | None = None,
    memory: Path | None = None,
    ledger: Path | None = None,
    label: str = "offline",
    model: BaseChatModel | None = None,
) -> Scores:
    """Replay ``cases`` (the bundled set by default) through one night and score the research decisions.

    Args:
        now: the night's 'now' (also stamps the ledger row).
        env: the environment (pass ``{}`` to stay offline whatever is set).
        cases: the cases to replay.
        corpus: the codebase researched (each sub-folder a root); defaults to the bundled corpus.
        memory: a folder of notes copied into the workspace's ``memory/``; defaults to the bundled notes.
        ledger: a ``results.tsv`` to append a row to; none by default.
        label: what the run is called in the table and the ledger.
        model: a chat model to research with instead of the environment's (the adversarial run's), behind the
            real gateway and budget.
    """
    cases = list(bundled_cases() if cases is None else cases)
    corpus = (corpus or data_dir() / "corpus").resolve()
    memory = memory or data_dir() / "memory"
    with tempfile.TemporaryDirectory(prefix="dreaming-eval-") as tmp:
        ws = Workspace.at(Path(tmp) / "workspace")
        ws.state_dir.mkdir(parents=True)
        if memory.is_dir():
            shutil.copytree(memory, ws.root / "memory", dirs_exist_ok=True)
        for case in cases:
            record_gap(ws, case.query, "no_results", best_score=0.0, now=now)
        research = AutoresearchConfig(
            enabled=True, sources=("codebase", "memory", "web"),
            codebase_roots=tuple(str(p) for p in corpus_roots(corpus)),
            max_gaps_per_night=max(1, len(cases)), max_research_time_minutes=60.0,
        )  # fmt: skip
        config = replace(DreamingConfig(), autoresearch=research)
        factory = None
        if model is not None:
            config = replace(config, budget=BudgetConfig(max_cost_usd=1000.0, max_llm_calls_per_run=100_000))

            def factory(ctx: DreamContext) -> LLMGateway:
                return build_gateway(ctx.config, ctx.workspace, env={"OPENAI_API_KEY": "eval"},
                                     now=lambda: datetime.now(UTC), model_factory=lambda **_: model)  # fmt: skip

        await run_night(
            ws, config, now=now, trigger="eval", make_context=night_context(env=env, gateway_factory=factory)
        )
        rows: dict[str, Mapping[str, Any]] = {}
        for _, row in iter_jsonl(ws.research_log, InputReport()):
            rows[str(row.get("gap", "")).strip().lower()] = row
    scores = Scores(results=tuple(score_case(c, rows.get(c.query.strip().lower())) for c in cases), label=label)
    if isinstance(model, AdversarialModel):
        kept = {" ".join(r.claim.split()) for r in scores.results if r.kept}
        proposed = [" ".join(text.split()) for _, text in model.proposed]
        rejected = sum(text not in kept for text in proposed)
        rate = rejected / len(proposed) if proposed else None
        extra = {
            "adversarial_proposed": len(proposed),
            "adversarial_rejected": rejected,
            "adversarial_reject_rate": rate,
        }
        scores = replace(scores, extra=extra)
    if ledger is not None:
        append_ledger(ledger, scores, now)
    return scores


def append_ledger(path: Path, scores: Scores, at: datetime) -> None:
    """Append one row for ``scores`` to the TSV ledger at ``path`` (with a header when the file is new)."""
    summary = scores.summary()
    values = {
        "at": at.isoformat(),
        **{k: summary[k] for k in LEDGER_COLUMNS if k in summary},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with path.open("a", encoding="utf-8") as handle:
        if new:
            handle.write("\t".join(LEDGER_COLUMNS) + "\n")
        cells = []
        for column in LEDGER_COLUMNS:
            value = values.get(column)
            cells.append("-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value))
        handle.write("\t".join(cells) + "\n")
