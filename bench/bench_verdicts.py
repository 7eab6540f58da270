"""Benchmark the verdict path against the strongest baselines a user would pick, and incremental nights.

At scale 1: 1,000,000 verdicts over 20 assets, ~5,000 trading days each. Every figure is CPU seconds (user + system,
the measure of issue 14: the machine is shared), the least and the median of three runs; each ratio is printed with
the baseline's own figure.

- **floor**: a typed msgspec decode of the same verdicts.jsonl (read from disk, ``Decoder(type).decode_lines``): the
  least work that still parses it.
- **peer**: a competent polars review + REM from disk (lazy scans, ``join_asof`` for t0 and each window's target,
  window functions for ATR and the regime, one group-by), in a subprocess; its CPU counts every thread.
- **cycle**: our review, light, REM and deep sleep in this process, on a workspace with no tallies (cold).
- **bounds**: what no implementation of the night in CPython goes below, for scale: ``import langgraph.graph`` in a
  fresh process (the night is a LangGraph graph; the fixed cost includes it), and writing the bytes of
  ``verdict_review.jsonl`` and ``verdict-signals.jsonl`` (the spec's outputs, ~430 MB at scale 1) from their lines
  already built as strings (one join, one encode, one atomic write each), added to the floor's decode.
- **nights**: whole ``dreaming run`` processes (``os.wait4`` gives each one's CPU and peak RSS): a night on an empty
  workspace (the fixed cost: imports, graph, diary), a cold night, an idle night (nothing new) and a night with 1%
  new verdicts. A night's *verdict work* is its CPU minus the empty night's (median).
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from dreaming.config import VerdictsConfig
from dreaming.memory import InputReport, Workspace
from dreaming.memory.files import atomic_write_bytes
from dreaming.memory.verdicts import (
    deep_sleep_verdicts,
    light_sleep_verdicts,
    rem_sleep_verdicts,
    review_verdicts,
)
from dreaming.memory.verdicts._handoff import drop
from dreaming.memory.verdicts._tallies import tallies_path

ASSETS = 20
DAYS = 5000
VERDICTS = 1_000_000
NOW = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)
CHOICES = ("BUY", "ACCUMULATE", "HOLD", "HOLD", "HOLD", "TRIM", "SELL")
ROLES = ("quant", "risk", "macro", "cio")
RUNS = 3

POLARS_PEER = r"""
import json, resource, sys, time
from pathlib import Path
import polars as pl

verdicts_path, prices_dir, today = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
started = time.perf_counter()
prices = pl.concat(
    [
        pl.scan_csv(path, schema_overrides={"Date": pl.Date}).select(
            pl.lit(path.stem).alias("asset"), pl.col("Date").alias("date"), "High", "Low", "Close"
        )
        for path in sorted(prices_dir.glob("*.csv"))
    ]
).sort("asset", "date")
prev = pl.col("Close").shift(1).over("asset")
true_range = pl.max_horizontal(
    pl.col("High") - pl.col("Low"), (pl.col("High") - prev).abs(), (pl.col("Low") - prev).abs()
)
row = pl.int_range(pl.len()).over("asset")
sma = pl.col("Close").rolling_mean(50).over("asset")
prices = prices.with_columns(
    row.alias("row"),
    (true_range.rolling_mean(14).over("asset") / pl.col("Close") * 100).round(4).alias("atr_pct"),
    sma.alias("sma"),
    sma.shift(10).over("asset").alias("sma_before"),
).with_columns(
    pl.when(pl.col("row") < 59).then(pl.lit("unknown"))
    .when((pl.col("Close") > pl.col("sma")) & (pl.col("sma") > pl.col("sma_before"))).then(pl.lit("uptrend"))
    .when((pl.col("Close") < pl.col("sma")) & (pl.col("sma") < pl.col("sma_before"))).then(pl.lit("downtrend"))
    .otherwise(pl.lit("range_bound")).alias("regime"),
    pl.when(pl.col("row") >= 14).then(pl.col("atr_pct")).alias("atr_pct"),
)
verdicts = (
    pl.scan_ndjson(
        verdicts_path,
        schema={"decision_date": pl.String, "asset": pl.String, "verdict": pl.String, "macro_shock": pl.Boolean,
                "role": pl.String},
    )
    .with_columns(
        pl.col("decision_date").str.to_date("%Y-%m-%d", strict=False),
        pl.col("verdict").str.strip_chars().str.to_uppercase(),
        pl.col("macro_shock").fill_null(False),
    )
    .filter(
        pl.col("decision_date").is_not_null() & (pl.col("decision_date") <= pl.lit(today).str.to_date())
        & pl.col("verdict").is_in(["BUY", "ACCUMULATE", "HOLD", "TRIM", "SELL"])
    )
    .sort("decision_date")
)
base = prices.select("asset", "date", pl.col("Close").alias("base"), "atr_pct", "regime")
reviewed = verdicts.join_asof(base, left_on="decision_date", right_on="date", by="asset", strategy="backward")
reviewed = reviewed.filter(pl.col("base").is_not_null()).drop("date")
targets = prices.select("asset", "date", "Close")
for w in (7, 30):
    reviewed = (
        reviewed.with_columns((pl.col("decision_date") + pl.duration(days=w)).alias("target_date"))
        .sort("target_date")
        .join_asof(targets, left_on="target_date", right_on="date", by="asset", strategy="forward")
        .with_columns(((pl.col("Close") / pl.col("base") - 1) * 100).round(4).alias(f"{w}d"))
        .drop("target_date", "date", "Close")
    )
samples = (
    reviewed.filter(~pl.col("macro_shock") & (pl.col("regime") != "unknown"))
    .unpivot(index=["asset", "verdict", "regime", "atr_pct", "decision_date"], on=["7d", "30d"],
             variable_name="window", value_name="change")
    .filter(pl.col("change").is_not_null())
    .with_columns(
        pl.min_horizontal(pl.col("atr_pct") * pl.col("window").str.strip_suffix("d").cast(pl.Float64).sqrt(),
                          pl.lit(8.0)).alias("flat")
    )
    .filter((pl.col("verdict") != "HOLD") | pl.col("atr_pct").is_not_null())
    .with_columns(
        pl.when(pl.col("verdict") == "HOLD").then(pl.col("change").abs() < pl.col("flat"))
        .when(pl.col("verdict").is_in(["BUY", "ACCUMULATE"])).then(pl.col("change") > 0)
        .otherwise(pl.col("change") < 0).alias("hit"),
        ((pl.col("verdict") == "HOLD") & (pl.col("change") >= pl.col("flat"))).alias("missed_up"),
        ((pl.col("verdict") == "HOLD") & (pl.col("change") <= -pl.col("flat"))).alias("avoided_down"),
    )
)
buckets = (
    samples.group_by("asset", "verdict", "regime", "window")
    .agg(
        pl.len().alias("n"),
        pl.col("hit").sum().alias("hits"),
        pl.col("missed_up").sum().alias("missed_up"),
        pl.col("avoided_down").sum().alias("avoided_down"),
        pl.col("change").mean().round(4).alias("avg_change_pct"),
        pl.col("decision_date").max().alias("last_seen"),
    )
    .with_columns(
        pl.when(pl.col("verdict") == "HOLD").then(pl.col("missed_up")).otherwise(pl.col("n") - pl.col("hits"))
        .alias("adverse")
    )
    .with_columns(
        (0.7 * pl.when(pl.col("adverse") > pl.col("hits")).then(pl.col("adverse")).otherwise(pl.col("hits"))
         / pl.col("n") + 0.3 * pl.min_horizontal(pl.col("n") / 10, pl.lit(1.0))).round(4).alias("score")
    )
    .collect()
)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({
    "cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rss_mib": usage.ru_maxrss / 1024,
    "buckets": buckets.select("asset", "verdict", "regime", "window", "n", "hits").rows(),
}))
"""


def _calendar(days_n: int) -> list[date]:
    calendar: list[date] = []
    day = date(2026, 4, 14) - timedelta(days=int(days_n * 7 / 5) + 10)
    while len(calendar) < days_n:
        if day.weekday() < 5:
            calendar.append(day)
        day += timedelta(days=1)
    return calendar


def _verdict_lines(rnd: random.Random, iso: list[str], count: int, first: int = 0) -> str:
    return "".join(
        f'{{"decision_date": "{iso[rnd.randrange(len(iso))]}", "asset": "AS{rnd.randrange(ASSETS):02d}", '
        f'"verdict": "{rnd.choice(CHOICES)}", "macro_shock": {"true" if i % 97 == 0 else "false"}, '
        f'"role": "{ROLES[i % 4]}"}}\n'
        for i in range(first, first + count)
    )


def _generate(ws: Workspace, scale: float) -> tuple[int, list[str]]:
    rnd = random.Random(42)
    days_n = max(200, int(DAYS * min(1.0, scale * 4)))
    n_verdicts = max(1000, int(VERDICTS * scale))
    ws.prices_dir.mkdir(parents=True)
    ws.state_dir.mkdir(parents=True)
    calendar = _calendar(days_n)
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
        for start in range(0, n_verdicts, 50_000):
            out.write(_verdict_lines(rnd, iso, min(50_000, n_verdicts - start), start))
    return n_verdicts, iso


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _spread(values: list[float]) -> str:
    return f"min {min(values):7.2f} s  median {statistics.median(values):7.2f} s"


# --- floor and peer ------------------------------------------------------------------------------------------------


class _Line(msgspec.Struct, gc=False):
    decision_date: str
    asset: str
    verdict: str
    macro_shock: bool = False
    role: str | None = None


def _floor(path: Path) -> float:
    started = _cpu()
    lines = msgspec.json.Decoder(_Line).decode_lines
    count = len(lines(path.read_bytes()))
    elapsed = _cpu() - started
    assert count > 0
    return elapsed


def _peer(ws: Workspace) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", POLARS_PEER, str(ws.verdicts), str(ws.prices_dir), NOW.date().isoformat()],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError("the polars peer failed:\n" + proc.stderr[-3000:])
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _cycle(ws: Workspace) -> tuple[float, Any]:
    for path in (ws.verdict_review, ws.verdict_signals, ws.candidates, tallies_path(ws)):
        path.unlink(missing_ok=True)
    shutil.rmtree(ws.insights_dir, ignore_errors=True)
    drop()
    report, config = InputReport(), VerdictsConfig()
    started = _cpu()
    review_verdicts(ws, now=NOW, report=report)
    light_sleep_verdicts(ws, now=NOW, report=report)
    rem = rem_sleep_verdicts(ws, config, now=NOW, report=report)
    deep_sleep_verdicts(ws, config, now=NOW)
    return _cpu() - started, rem


# --- whole nights ----------------------------------------------------------------------------------------------------


def _night(root: Path, now: datetime) -> tuple[float, float, dict[str, Any]]:
    """Run ``dreaming run --json`` on ``root``; return its CPU seconds, peak RSS (MiB) and report."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(
            [sys.executable, "-m", "dreaming", "run", "--workspace", str(root), "--now", now.isoformat(), "--json"],
            stdout=out,
            stderr=err,
        )
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise RuntimeError(f"dreaming run failed ({child.returncode}):\n{err.read().decode()[-3000:]}")
        report = json.loads(out.read())
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, report


def _init(root: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "dreaming", "init", "--workspace", str(root)], check=True, capture_output=True
    )


def _nights(pristine: Workspace, tmp: Path, iso: list[str], n: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"empty": [], "cold": [], "idle": [], "new": [], "cold_rss": [], "read": []}
    empty = tmp / "empty"
    empty.mkdir()
    _init(empty)
    for i in range(RUNS):
        out["empty"].append(_night(empty, NOW + timedelta(days=i))[0])
    rnd = random.Random(4242)
    for i in range(RUNS):
        root = tmp / f"night-{i}"
        shutil.copytree(pristine.root, root)
        _init(root)
        cpu, rss, report = _night(root, NOW)
        out["cold"].append(cpu)
        out["cold_rss"].append(rss)
        assert report["summaries"]["verdicts.review"]["recomputed"] == "no tallies yet"
        cpu, _, report = _night(root, NOW + timedelta(hours=1))
        out["idle"].append(cpu)
        assert report["summaries"]["verdicts.review"]["recomputed"] is None, report["summaries"]["verdicts.review"]
        more = max(1, n // 100)
        with Workspace.at(root).verdicts.open("a") as handle:
            handle.write(_verdict_lines(rnd, iso, more, n))
        cpu, _, report = _night(root, NOW + timedelta(hours=2))
        out["new"].append(cpu)
        out["read"].append(report["summaries"]["verdicts.review"]["read_lines"])
        assert report["summaries"]["verdicts.review"]["recomputed"] is None, report["summaries"]["verdicts.review"]
        shutil.rmtree(root)
    return out


def _import_langgraph() -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "import langgraph.graph"], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _write_bound(ws: Workspace, out: Path) -> float:
    """Return the CPU of writing the two output files' bytes from their lines (read untimed, as strings)."""
    files = [ws.verdict_review.read_text().splitlines(keepends=True), ws.verdict_signals.read_text().splitlines(True)]
    started = _cpu()
    for i, lines in enumerate(files):
        atomic_write_bytes(out / f"output-{i}.jsonl", "".join(lines).encode())
    elapsed = _cpu() - started
    for i in range(len(files)):
        (out / f"output-{i}.jsonl").unlink()
    return elapsed


def _timed(label: str, fn: Callable[[], float]) -> list[float]:
    values = [fn() for _ in range(RUNS)]
    print(f"  {label:<44} {_spread(values)}", flush=True)
    return values


def run(scale: float) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-verdicts-") as name:
        tmp = Path(name)
        ws = Workspace.at(tmp / "ws")
        started = time.perf_counter()
        n, iso = _generate(ws, scale)
        print(f"  generated {n:,} verdicts over {ASSETS} assets in {time.perf_counter() - started:.1f}s", flush=True)

        nights = _nights(ws, tmp, iso, n)
        for label, key in (
            ("night on an empty workspace (fixed cost)", "empty"),
            ("cold night (dreaming run)", "cold"),
            ("idle night (nothing new)", "idle"),
            (f"night with 1% new ({nights['read'][0]:,.0f} lines)", "new"),
        ):
            print(f"  {label:<44} {_spread(nights[key])}", flush=True)
        fixed = statistics.median(nights["empty"])
        work = {k: [v - fixed for v in nights[k]] for k in ("cold", "idle", "new")}
        cold_work = statistics.median(work["cold"])
        for label, key, target in (("idle", "idle", 0.05), ("1%-new", "new", 0.10)):
            ratios = [v / cold_work for v in work[key]]
            print(
                f"  verdict work {label} / cold = min {min(ratios):.3f}  median {statistics.median(ratios):.3f}"
                f"  (target <= {target}; cold verdict work {cold_work:.2f} s, {label} "
                f"{statistics.median(work[key]):.2f} s)"
            )
        print(f"  fixed cost (empty-workspace night) = {fixed:.2f} s CPU (target <= 1.0 s)")
        _import_langgraph()  # untimed: warms the file cache
        langgraph = _timed("bound: import langgraph.graph (a process)", _import_langgraph)
        print(f"  of the fixed cost, LangGraph's import alone is {statistics.median(langgraph) / fixed:.0%}")
        print(
            f"  peak RSS of a cold night = min {min(nights['cold_rss']):.0f}  median "
            f"{statistics.median(nights['cold_rss']):.0f} MiB (target < 300)"
        )

        floor = _timed("floor: msgspec typed decode_lines", lambda: _floor(ws.verdicts))
        peers = [_peer(ws) for _ in range(RUNS)]
        peer_cpu = [p["cpu"] for p in peers]
        peer_wall = [p["wall"] for p in peers]
        print(f"  {'peer: polars review + REM from disk (CPU)':<44} {_spread(peer_cpu)}")
        print(f"  {'peer: polars review + REM from disk (wall)':<44} {_spread(peer_wall)}")
        cycles = [_cycle(ws) for _ in range(RUNS)]
        cycle = [c for c, _ in cycles]
        print(f"  {'cold cycle: review + light + REM + deep':<44} {_spread(cycle)}", flush=True)
        ours = {(c.asset, c.verdict, c.regime, c.window): (c.n, c.hits) for c in cycles[-1][1].candidates}
        theirs = {tuple(b[:4]): (b[4], b[5]) for b in peers[-1]["buckets"]}
        agree = sum(1 for k, v in ours.items() if theirs.get(k) == v)
        written = _timed("bound: write the two outputs' bytes", lambda: _write_bound(ws, tmp))
        bound = min(floor) + min(written)
        print(
            f"  cold cycle lower bound (floor decode + output write) = {bound:.2f} s = {bound / min(peer_cpu):.2f} x"
            f" polars (min): a cycle that must write the spec's outputs cannot reach the polars target"
            if bound > min(peer_cpu)
            else f"  cold cycle lower bound (floor decode + output write) = {bound:.2f} s"
        )
        print(f"  peer agrees on n and hits for {agree} of our {len(ours)} buckets ({len(theirs)} of its own)")
        c, f, p = statistics.median(cycle), statistics.median(floor), statistics.median(peer_cpu)
        print(
            f"  cold cycle / polars = {min(cycle) / min(peer_cpu):.2f} (min)  {c / p:.2f} (median)  (target <= 1.0;"
            f" polars {p:.2f} s CPU, {statistics.median(peer_wall):.2f} s wall on {os.cpu_count()} cores)"
        )
        print(
            f"  cold cycle / msgspec floor = {min(cycle) / min(floor):.1f} (min)  {c / f:.1f} (median)"
            f"  (target <= 6; floor {f:.2f} s)"
        )
        print(f"  polars peer peak RSS {statistics.median(p['rss_mib'] for p in peers):.0f} MiB")
