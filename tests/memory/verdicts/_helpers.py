"""Test helpers for the verdict path: write price files, verdict lines and candidates."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from dreaming.config import VerdictsConfig
from dreaming.memory import Workspace
from dreaming.memory.files import atomic_write_json
from dreaming.memory.verdicts import VerdictCandidate, candidate_slug, passes_gate


def weekdays(start: date, count: int) -> list[date]:
    out: list[date] = []
    day = start
    while len(out) < count:
        if day.weekday() < 5:
            out.append(day)
        day += timedelta(days=1)
    return out


def write_prices(
    ws: Workspace,
    asset: str,
    days: Sequence[date],
    closes: Sequence[float],
    *,
    high_low: Sequence[tuple[float, float]] | None = None,
    header: str | None = None,
) -> Path:
    ws.prices_dir.mkdir(parents=True, exist_ok=True)
    path = ws.prices_dir / f"{asset}.csv"
    if high_low is None:
        lines = [header or "date,close"] + [f"{d.isoformat()},{c!r}" for d, c in zip(days, closes, strict=True)]
    else:
        lines = [header or "date,high,low,close"] + [
            f"{d.isoformat()},{h!r},{lo!r},{c!r}" for d, c, (h, lo) in zip(days, closes, high_low, strict=True)
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_jsonl(path: Path, rows: Iterable[dict[str, Any] | str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def candidate(
    *,
    asset: str = "NDQ",
    verdict: str = "HOLD",
    regime: str = "downtrend",
    window: str = "30d",
    kind: str = "caution",
    n: int = 11,
    hits: int = 0,
    score: float = 1.0,
    last_seen: str = "2026-04-01",
    config: VerdictsConfig | None = None,
) -> VerdictCandidate:
    hold = verdict == "HOLD"
    return VerdictCandidate(
        id=candidate_slug(kind, verdict, asset, regime, window),
        asset=asset,
        verdict=verdict,
        regime=regime,
        window=window,
        kind=kind,
        n=n,
        hits=hits,
        hit_rate=round(hits / n, 4),
        avg_change_pct=12.02,
        score=score,
        passes_gate=passes_gate(score, n, config or VerdictsConfig()),
        last_seen=last_seen,
        missed_up_rate=round(1 - hits / n, 4) if hold else None,
        avoided_down_rate=0.0 if hold else None,
        wrong_way_rate=None if hold else round(1 - hits / n, 4),
    )


def write_candidates(ws: Workspace, candidates: Sequence[VerdictCandidate], generated_at: str = "x") -> None:
    atomic_write_json(
        ws.candidates, {"version": 1, "generated_at": generated_at, "candidates": [c.to_json() for c in candidates]}
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
