"""Small generated workspaces for end-to-end tests of the run."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

NIGHT = "2026-09-01T03:00:00+00:00"


def trading_days(start: date, count: int) -> list[date]:
    days: list[date] = []
    day = start
    while len(days) < count:
        if day.weekday() < 5:
            days.append(day)
        day += timedelta(days=1)
    return days


def build_verdict_workspace(
    root: Path, *, user_memory: str | None = "# My memory\n\nKeep this line.\n", assets: tuple[str, ...] = ("TEST",)
) -> Path:
    """A workspace with one asset in a steady uptrend and a committee that BUYs and HOLDs it.

    Prices rise 0.5% a day for 160 trading days from 2026-01-05, so every BUY is right at 7 and 30 days (a reliable
    pattern) and every HOLD misses the rally once the move exceeds the flat threshold (a caution pattern).
    """
    root.mkdir(parents=True, exist_ok=True)
    days = trading_days(date(2026, 1, 5), 160)
    prices = root / "prices"
    prices.mkdir(exist_ok=True)
    rows = ["date,open,high,low,close"]
    close = 100.0
    for day in days:
        rows.append(f"{day.isoformat()},{close:.4f},{close * 1.004:.4f},{close * 0.998:.4f},{close * 1.005:.4f}")
        close *= 1.005
    state = root / "memory" / ".dreams"
    state.mkdir(parents=True, exist_ok=True)
    lines = []
    for asset in assets:
        (prices / f"{asset}.csv").write_text("\n".join(rows) + "\n")
        for i, day in enumerate(days[70:120]):
            verdict = "BUY" if i % 2 == 0 else "HOLD"
            lines.append(json.dumps({"decision_date": day.isoformat(), "asset": asset, "verdict": verdict}))
    (state / "verdicts.jsonl").write_text("\n".join(lines) + "\n")
    if user_memory is not None:
        (root / "MEMORY.md").write_text(user_memory)
    return root


def snapshot(root: Path, *, exclude: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Return every file under ``root`` (relative path -> bytes), minus volatile run bookkeeping."""
    volatile = ("DREAMS.md", "memory/.dreams/events.jsonl", "memory/.dreams/checkpoints.sqlite")
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or rel.startswith(volatile + exclude) or ".corrupt-" in rel:
            continue
        if rel.startswith("memory/.dreams/checkpoints.sqlite"):
            continue
        out[rel] = path.read_bytes()
    return out
