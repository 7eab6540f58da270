"""Regenerate the demo committee's verdicts from the bundled prices (deterministic; no dependencies).

A small scripted investment committee decides on the NASDAQ Composite every trading day. It reads the trend the way
many committees do (close against its 50-day average, and the average's slope) and it is conservative in
downtrends: there it mostly HOLDs or TRIMs. Days of known market shocks are flagged ``macro_shock`` so that the
black-swan exemption has something to exempt.

Run: ``python examples/demo/make_committee.py`` (rewrites workspace/memory/.dreams/verdicts.jsonl).
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

HERE = Path(__file__).parent / "workspace"
SHOCKS = [
    ("2001-09-17", "2001-09-28"),
    ("2008-09-15", "2008-10-31"),
    ("2010-05-06", "2010-05-07"),
    ("2018-02-05", "2018-02-09"),
]
CHOICES = {
    "downtrend": (("HOLD", 0.7), ("TRIM", 0.2), ("SELL", 0.1)),
    "uptrend": (("BUY", 0.45), ("ACCUMULATE", 0.3), ("HOLD", 0.25)),
    "range_bound": (("HOLD", 0.6), ("ACCUMULATE", 0.2), ("TRIM", 0.2)),
}


def main() -> None:
    rows = list(csv.DictReader((HERE / "prices" / "NASDAQ.csv").open()))
    closes = [float(r["close"]) for r in rows]
    rng = random.Random(20260526)
    lines = []
    for i, row in enumerate(rows):
        if i < 60 or rng.random() < 0.1:  # the committee needs history, and skips some days
            continue
        sma = sum(closes[i - 49 : i + 1]) / 50
        sma_before = sum(closes[i - 59 : i - 9]) / 50
        if closes[i] > sma and sma > sma_before:
            view = "uptrend"
        elif closes[i] < sma and sma < sma_before:
            view = "downtrend"
        else:
            view = "range_bound"
        pick, acc = rng.random(), 0.0
        verdict = CHOICES[view][-1][0]
        for name, weight in CHOICES[view]:
            acc += weight
            if pick < acc:
                verdict = name
                break
        day = row["date"]
        shock = any(start <= day <= end for start, end in SHOCKS)
        record = {"id": f"v{i:05d}", "decision_date": day, "asset": "NASDAQ", "verdict": verdict, "macro_shock": shock}
        lines.append(json.dumps(record))
    out = HERE / "memory" / ".dreams" / "verdicts.jsonl"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} verdicts to {out}")


if __name__ == "__main__":
    main()
