"""Replay every shipped dataset week by week and print one table of what dreaming changed (``make backtest``).

For each dataset, the workspace is copied to ``.backtest/<name>/`` at the repository root (the tracked files are never
modified) and ``dreaming backtest --json`` runs over the whole period of its prices, one night a week. The NASDAQ
demo workspace brings its recorded committee verdicts; the S&P 500 and WTI workspaces have none, so the backtest
decides with its scripted committee (the demo's rule, from prices up to each decision day only). The table quotes
each report as it is, whatever it says; each report stays in the scratch copy's ``memory/.dreams/`` (``dreaming view``
plots it).

Run: ``python examples/backtest/run.py [NAME ...]`` (default: every dataset; names as in ``DATASETS``).
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SCRATCH = ROOT / ".backtest"
STEP = "7d"


class Dataset(NamedTuple):
    name: str
    """Short name: the scratch folder and the command line's choice."""
    label: str
    """As the table shows it."""
    workspace: Path
    """The tracked workspace (copied, never written)."""
    committee: str
    """Whose verdicts the baseline is."""


DATASETS = (
    Dataset("nasdaq", "NASDAQ", ROOT / "examples" / "demo" / "workspace", "recorded (the demo's committee)"),
    Dataset("sp500", "S&P 500", HERE / "sp500", "scripted"),
    Dataset("wti", "WTI crude", HERE / "wti", "scripted"),
)
WINDOWS = ("7d", "30d")
HEADER = (
    "dataset", "window", "n", "hit rate base", "hit rate dream", "missed rally base", "missed rally dream",
    "opp. cost base", "opp. cost dream", "opp. cost difference [95% CI]", "changed",
)  # fmt: skip


def price_period(workspace: Path) -> tuple[str, str]:
    """Return the first and last date of the workspace's price files (ISO dates, as written by the datasets)."""
    days: list[str] = []
    for path in sorted((workspace / "prices").glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            days += [row["date"] for row in csv.DictReader(handle) if row.get("date")]
    if not days:
        raise SystemExit(f"no prices in {workspace / 'prices'}")
    return min(days), max(days)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _rate(value: object) -> str:
    number = _number(value)
    return "-" if number is None else f"{number:.1%}"


def _pct(value: object, *, signed: bool = False) -> str:
    number = _number(value)
    return "-" if number is None else (f"{number:+.2f}" if signed else f"{number:.2f}%")


def _overall(rows: object, **match: str) -> dict[str, Any]:
    """Return the first row of a report's list whose keys equal ``match`` (asset and regime "*": everything)."""
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and all(row.get(k) == v for k, v in {"asset": "*", "regime": "*", **match}.items()):
            return row
    return {}


def table_rows(label: str, report: Mapping[str, Any]) -> list[list[str]]:
    """Return the table's rows for one dataset's report: one per scoring window, over every asset and regime.

    ``changed`` is the number of the window's scored decisions an insight changed (the report's total without it).
    """
    out = []
    for window in WINDOWS:
        base = _overall(report.get("metrics"), policy="baseline", window=window)
        dream = _overall(report.get("metrics"), policy="dreaming", window=window)
        diff = _overall(report.get("differences"), window=window, metric="opportunity_cost_pct")
        interval = diff.get("ci95")
        ci = "-"
        if isinstance(interval, list) and len(interval) == 2 and None not in (_number(v) for v in interval):
            ci = f"[{_pct(interval[0], signed=True)}, {_pct(interval[1], signed=True)}]"
        difference = f"{_pct(diff.get('difference'), signed=True)} {ci}" + (" *" if diff.get("significant") else "")
        n = base.get("n")
        out.append(
            [
                label, window, str(n) if isinstance(n, int) else "-",
                _rate(base.get("hit_rate")), _rate(dream.get("hit_rate")),
                _rate(base.get("missed_rally_rate")), _rate(dream.get("missed_rally_rate")),
                _pct(base.get("opportunity_cost_pct")), _pct(dream.get("opportunity_cost_pct")),
                difference if diff else "-", str(dream.get("changed", report.get("changed", "-"))),
            ]
        )  # fmt: skip
    return out


def render_table(rows: Sequence[Sequence[str]]) -> str:
    """Return ``rows`` under the header as an aligned Markdown table (numbers right-aligned)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADER)]
    left = {0, 1}

    def line(cells: Sequence[str]) -> str:
        padded = (c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(("-" * (w + 2)) if i in left else ("-" * (w + 1) + ":") for i, w in enumerate(widths)) + "|"
    return "\n".join([line(HEADER), rule, *(line(r) for r in rows)])


def run_dataset(dataset: Dataset) -> tuple[dict[str, Any] | None, float, str]:
    """Copy the dataset's workspace to the scratch folder and backtest it; return the report, seconds, the period."""
    scratch = SCRATCH / dataset.name
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(dataset.workspace, scratch)
    start, end = price_period(scratch)
    command = [
        sys.executable, "-m", "dreaming", "backtest", "--workspace", str(scratch), "--from", start, "--to", end,
        "--step", STEP, "--json",
    ]  # fmt: skip
    print(f"\n$ dreaming {' '.join(command[3:])}", flush=True)
    began = time.monotonic()
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    seconds = time.monotonic() - began
    if done.returncode != 0:
        print(f"{dataset.label}: the backtest failed (exit {done.returncode})", file=sys.stderr)
        return None, seconds, f"{start} to {end}"
    try:
        report = json.loads(done.stdout)
    except ValueError:
        print(f"{dataset.label}: the backtest printed no JSON report", file=sys.stderr)
        return None, seconds, f"{start} to {end}"
    return report, seconds, f"{start} to {end}"


def main(argv: list[str]) -> int:
    chosen = [d for d in DATASETS if not argv or d.name in argv]
    if not chosen:
        print(f"no such dataset: {' '.join(argv)} (known: {' '.join(d.name for d in DATASETS)})", file=sys.stderr)
        return 2
    rows: list[list[str]] = []
    notes: list[str] = []
    failed = 0
    for dataset in chosen:
        report, seconds, period = run_dataset(dataset)
        if report is None:
            failed += 1
            notes.append(f"- {dataset.label}: {period}, FAILED after {seconds:.0f} s")
            continue
        rows += table_rows(dataset.label, report)
        notes.append(
            f"- {dataset.label}: {report.get('from')} to {report.get('to')} every {report.get('step_days')} days,"
            f" {report.get('nights')} nights, {report.get('decisions')} decisions"
            f" ({report.get('committee') or dataset.committee} committee), {report.get('changed')} changed by an insight,"
            f" {report.get('bad_input_count', 0)} input lines skipped; {seconds:.0f} s;"
            f" report in {(SCRATCH / dataset.name / 'memory' / '.dreams').relative_to(ROOT)}/"
        )
    print(
        "\nDoes dreaming improve decisions? Baseline committee against the dreaming committee, every asset and regime."
    )
    print(
        "Rates and costs per decision; opportunity cost in percent (lower is better); difference = dreaming - baseline"
    )
    print("in percentage points with its paired bootstrap 95% interval, * when the interval excludes zero.\n")
    if rows:
        print(render_table(rows))
    print("\n" + "\n".join(notes))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
