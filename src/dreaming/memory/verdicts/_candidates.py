"""A scored bucket of the verdict path, as REM writes it to ``candidates.json`` and deep sleep reads it back."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

from dreaming.config import VerdictsConfig

__all__ = ["VerdictCandidate", "candidate_slug", "passes_gate"]

_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_RATES = ("missed_up_rate", "avoided_down_rate", "wrong_way_rate")
"""The optional rates: each applies to some verdicts only, and is left out of ``candidates.json`` when it does not."""
_GATE = ("score", "passes_gate", "last_seen")
"""The fields ``candidates.json`` writes last, after the rates."""
_PARSE = {"str": str, "int": int, "float": float, "bool": bool, "float | None": float}
"""How :meth:`VerdictCandidate.from_json` reads a field, by its annotated type (a string under ``annotations``)."""


def candidate_slug(kind: str, verdict: str, asset: str, regime: str, window: str) -> str:
    """Return ``<kind>-<verdict>-<asset>-<regime>-<window>`` lowercased, each run outside ``[a-z0-9]`` made ``-``."""
    return _NOT_SLUG.sub("-", f"{kind}-{verdict}-{asset}-{regime}-{window}".lower())


def passes_gate(score: float, n: int, config: VerdictsConfig) -> bool:
    """Return whether a bucket passes the gate: ``score >= gate_min_score`` and ``n >= gate_min_count``."""
    return score >= config.gate_min_score and n >= config.gate_min_count


@dataclass(frozen=True, kw_only=True, slots=True)
class VerdictCandidate:
    """One bucket ``(asset, verdict, regime, window)`` with its statistics, promoted or not."""

    id: str
    """The slug, also the insight's file name."""
    asset: str
    """The asset."""
    verdict: str
    """BUY, ACCUMULATE, HOLD, TRIM or SELL."""
    regime: str
    """uptrend, downtrend or range_bound."""
    window: str
    """``7d`` or ``30d``."""
    kind: str
    """``caution`` when the adverse rate beats the hit rate, else ``reliable``."""
    n: int
    """Classified samples."""
    hits: int
    """Samples that were hits."""
    hit_rate: float
    """``hits / n``, 4 decimals."""
    avg_change_pct: float
    """Mean change over the ``n`` samples, 4 decimals."""
    score: float
    """``0.7 * rate + 0.3 * min(n / 10, 1)`` with the rate of the kind, 4 decimals (the gate reads this value)."""
    passes_gate: bool
    """The score and count gate alone (not aging, not a veto)."""
    last_seen: str
    """The newest decision date among the samples (ISO)."""
    missed_up_rate: float | None = None
    """HOLD only: share of samples where the market rose past the flat band."""
    avoided_down_rate: float | None = None
    """HOLD only: share of samples where the market fell past the flat band."""
    wrong_way_rate: float | None = None
    """BUY/ACCUMULATE/TRIM/SELL only: share of samples where the market went the other way."""

    @property
    def adverse_rate(self) -> float:
        """Return the rate that makes a caution: ``missed_up_rate`` for HOLD, ``wrong_way_rate`` otherwise."""
        value = self.missed_up_rate if self.verdict == "HOLD" else self.wrong_way_rate
        return value or 0.0

    def to_json(self) -> dict[str, Any]:
        """Return the ``candidates.json`` form: the statistics, the rates that apply, then the gate's fields."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _RATES and f.name not in _GATE}
        out.update((name, value) for name in _RATES if (value := getattr(self, name)) is not None)
        out.update((name, getattr(self, name)) for name in _GATE)
        return out

    @classmethod
    def from_json(cls, data: Any) -> VerdictCandidate | None:
        """Parse one entry of ``candidates.json``; return None when it is not usable."""
        if not isinstance(data, dict):
            return None
        try:
            wanted = [f for f in fields(cls) if f.name in data or f.name not in _RATES]  # every field but absent rates
            return cls(**{f.name: _PARSE[str(f.type)](data[f.name]) for f in wanted})
        except (KeyError, TypeError, ValueError):
            return None
