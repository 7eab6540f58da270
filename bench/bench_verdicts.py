"""Benchmark the verdict path: review, light, REM and deep on a generated workspace.

Compares the whole deterministic cycle with (a) parsing the same verdicts JSONL with ``json.loads`` per line (the
physical floor) and (b) a plain pandas implementation of the REM statistics, run in a subprocess so that its memory
is measured apart. At scale 1: 1,000,000 verdicts over 20 assets, ~5,000 trading days each.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta

from dreaming.config import VerdictsConfig
from dreaming.memory import InputReport, Workspace
from dreaming.memory.verdicts import (
    deep_sleep_verdicts,
    light_sleep_verdicts,
    rem_sleep_verdicts,
    review_verdicts,
)

ASSETS = 20
DAYS = 5000
VERDICTS = 1_000_000
NOW = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)
CHOICES = ("BUY", "ACCUMULATE", "HOLD", "HOLD", "HOLD", "TRIM", "SELL")
ROLES = ("quant", "risk", "macro", "cio")

PANDAS_REM = r"""
import json, sys, time, resource
import numpy as np
import pandas as pd
t = time.perf_counter()
df = pd.read_json(sys.argv[1], lines=True, dtype=False, convert_dates=False)
df = df[(~df["macro_shock"].astype(bool)) & (df["regime"] != "unknown")].reset_index(drop=True)
flat = pd.json_normalize(df["outcomes"].tolist())
rows = []
for w, days in (("7d", 7), ("30d", 30)):
    col = f"{w}.change_pct"
    if col not in flat:
        continue
    ch = flat[col].to_numpy(dtype=float)
    atr = pd.to_numeric(df["atr_pct"], errors="coerce").to_numpy(dtype=float)
    verdict = df["verdict"].to_numpy()
    hold = verdict == "HOLD"
    band = np.minimum(atr * np.sqrt(days), 8.0)
    up = np.isin(verdict, ["BUY", "ACCUMULATE"])
    hit = np.where(hold, np.abs(ch) < band, np.where(up, ch > 0, ch < 0))
    missed = hold & (ch >= band)
    avoided = hold & (ch <= -band)
    wrong = ~hold & ~hit
    ok = ~np.isnan(ch) & ~(hold & np.isnan(atr))
    part = pd.DataFrame({"asset": df["asset"], "verdict": verdict, "regime": df["regime"], "change": ch,
                         "hit": hit, "missed": missed, "avoided": avoided, "wrong": wrong,
                         "date": df["decision_date"]})[ok]
    g = part.groupby(["asset", "verdict", "regime"]).agg(n=("hit", "size"), hits=("hit", "sum"),
        missed=("missed", "sum"), avoided=("avoided", "sum"), wrong=("wrong", "sum"),
        avg=("change", "mean"), last_seen=("date", "max")).reset_index()
    g["window"] = w
    rows.append(g)
out = pd.concat(rows)
adverse = np.where(out["verdict"] == "HOLD", out["missed"], out["wrong"])
rate = np.where(adverse > out["hits"], adverse, out["hits"]) / out["n"]
out["score"] = (0.7 * rate + 0.3 * np.minimum(out["n"] / 10, 1)).round(4)
elapsed = time.perf_counter() - t
print(json.dumps({"seconds": elapsed, "buckets": len(out),
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _generate(ws: Workspace, scale: float) -> int:
    rnd = random.Random(42)
    days_n = max(200, int(DAYS * min(1.0, scale * 4)))
    n_verdicts = max(1000, int(VERDICTS * scale))
    ws.prices_dir.mkdir(parents=True)
    ws.state_dir.mkdir(parents=True)
    calendar: list[date] = []
    day = date(2026, 4, 14) - timedelta(days=int(days_n * 7 / 5) + 10)
    while len(calendar) < days_n:
        if day.weekday() < 5:
            calendar.append(day)
        day += timedelta(days=1)
    for a in range(ASSETS):
        close = 100.0
        lines = ["Date,Open,High,Low,Close,Volume"]
        for d in calendar:
            prev = close
            close = max(1.0, close * (1 + rnd.gauss(0.0003, 0.012)))
            high = max(prev, close) * (1 + abs(rnd.gauss(0, 0.004)))
            low = min(prev, close) * (1 - abs(rnd.gauss(0, 0.004)))
            lines.append(f"{d.isoformat()},{prev:.4f},{high:.4f},{low:.4f},{close:.4f},1000")
        (ws.prices_dir / f"AS{a:02d}.csv").write_text("\n".join(lines) + "\n")
    iso = [d.isoformat() for d in calendar]
    with ws.verdicts.open("w") as out:
        buf = []
        for i in range(n_verdicts):
            buf.append(
                f'{{"decision_date": "{iso[rnd.randrange(days_n)]}", "asset": "AS{rnd.randrange(ASSETS):02d}", '
                f'"verdict": "{rnd.choice(CHOICES)}", "macro_shock": {"true" if i % 97 == 0 else "false"}, '
                f'"role": "{ROLES[i % 4]}"}}\n'
            )
            if len(buf) >= 50_000:
                out.write("".join(buf))
                buf.clear()
        out.write("".join(buf))
    return n_verdicts


def _timed(label: str, fn: object) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn()  # type: ignore[operator]
    elapsed = time.perf_counter() - started
    print(f"  {label:<28} {elapsed:8.2f} s", flush=True)
    return elapsed, result


def run(scale: float) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-verdicts-") as tmp:
        ws = Workspace.at(tmp)
        started = time.perf_counter()
        n = _generate(ws, scale)
        print(f"  generated {n:,} verdicts over {ASSETS} assets in {time.perf_counter() - started:.1f}s", flush=True)

        def parse_only() -> int:
            count = 0
            with ws.verdicts.open("rb") as handle:
                for raw in handle:
                    json.loads(raw)
                    count += 1
            return count

        floor, _ = _timed("parse-only floor (json.loads)", parse_only)
        report = InputReport()
        config = VerdictsConfig()
        t_review, review = _timed("review", lambda: review_verdicts(ws, now=NOW, report=report))
        t_light, light = _timed("light", lambda: light_sleep_verdicts(ws, now=NOW, report=report))
        t_rem, rem = _timed("REM", lambda: rem_sleep_verdicts(ws, config, now=NOW, report=report))
        t_deep, deep = _timed("deep", lambda: deep_sleep_verdicts(ws, config, now=NOW))
        cycle = t_review + t_light + t_rem + t_deep
        ours_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        proc = subprocess.run(
            [sys.executable, "-c", PANDAS_REM, str(ws.verdict_signals)], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            print("  pandas baseline failed:\n" + proc.stderr[-2000:])
            pandas = {"seconds": float("nan"), "rss_mib": float("nan"), "buckets": 0}
        else:
            pandas = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"  pandas REM (subprocess)      {pandas['seconds']:8.2f} s   ({pandas['buckets']} buckets)")
        print(
            f"  review {review.reviewed:,} lines, light {light.ingested:,} samples, "  # type: ignore[attr-defined]
            f"REM {len(rem.candidates)} buckets, deep promoted {len(deep.promoted)} "  # type: ignore[attr-defined]
            f"retired {len(deep.retired)}, bad lines {report.count}"  # type: ignore[attr-defined]
        )
        print(f"  rows/s: floor {n / floor:,.0f}  cycle {n / cycle:,.0f}  REM {n / t_rem:,.0f}")
        print(f"  cycle / floor = {cycle / floor:.2f}x (target <= 5x)")
        print(
            f"  REM / pandas REM = {t_rem / pandas['seconds']:.2f}x; "
            f"cycle / pandas REM = {cycle / pandas['seconds']:.2f}x"
        )
        print(f"  peak RSS: ours {ours_rss:,.0f} MiB (target < 1024), pandas subprocess {pandas['rss_mib']:,.0f} MiB")
