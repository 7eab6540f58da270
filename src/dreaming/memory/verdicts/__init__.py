"""The verdict path (spec/verdicts.md): committee verdicts scored against what the market did next.

review -> light -> REM -> deep, each a standalone step reading its input file and writing its output atomically:
``verdicts.jsonl`` -> ``verdict_review.jsonl`` -> ``verdict-signals.jsonl`` -> ``candidates.json`` ->
``memory/insights/<slug>.md`` (+ ``archive/``) and the MEMORY.md index. Deterministic: no model changes a number.
Insight files themselves (reading, writing, the MEMORY.md index, prior insights) live in ``dreaming.memory``
(``memory/insights.py``), shared with research insights.
"""

from __future__ import annotations

from dreaming.memory.verdicts._candidates import VerdictCandidate, candidate_slug, passes_gate
from dreaming.memory.verdicts._deep import (
    VERDICT_KINDS,
    DeepSummary,
    deep_sleep_verdicts,
    gate_passing,
    load_candidates,
)
from dreaming.memory.verdicts._light import LightSummary, light_sleep_verdicts
from dreaming.memory.verdicts._prices import (
    ATR_DAYS,
    MIN_REGIME_ROWS,
    REGIMES,
    SLOPE_LOOKBACK,
    SMA_DAYS,
    PriceBook,
    PriceSeries,
    load_prices,
    parse_date,
)
from dreaming.memory.verdicts._records import VERDICTS, WINDOWS
from dreaming.memory.verdicts._rem import (
    FLAT_CAP_PCT,
    K_FLAT,
    SIZE_SATURATION,
    RemSummary,
    classify,
    flat_threshold,
    rem_sleep_verdicts,
    score_bucket,
)
from dreaming.memory.verdicts._review import ReviewSummary, review_verdicts

__all__ = [
    "ATR_DAYS",
    "FLAT_CAP_PCT",
    "K_FLAT",
    "MIN_REGIME_ROWS",
    "REGIMES",
    "SIZE_SATURATION",
    "SLOPE_LOOKBACK",
    "SMA_DAYS",
    "VERDICTS",
    "VERDICT_KINDS",
    "WINDOWS",
    "DeepSummary",
    "LightSummary",
    "PriceBook",
    "PriceSeries",
    "RemSummary",
    "ReviewSummary",
    "VerdictCandidate",
    "candidate_slug",
    "classify",
    "deep_sleep_verdicts",
    "flat_threshold",
    "gate_passing",
    "light_sleep_verdicts",
    "load_candidates",
    "load_prices",
    "parse_date",
    "passes_gate",
    "rem_sleep_verdicts",
    "review_verdicts",
    "score_bucket",
]
