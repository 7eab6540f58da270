"""Regenerate the backtest's price files from the data bundled with the `arch` package (no pandas needed).

Reads ``sp500/sp500.csv.gz`` and ``wti/wti.csv.gz`` of an `arch` install (``arch.data``; arch 8.0.0 was used) and
writes ``sp500/prices/SP500.csv`` and ``wti/prices/WTI.csv`` here, in the format the verdict path reads (see
README.md for what is changed). The NASDAQ series is the demo's own (``examples/demo/workspace/prices/NASDAQ.csv``).

Run: ``python examples/backtest/make_datasets.py [ARCH_DATA_DIR]`` (default: the installed ``arch.data`` folder).
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import io
import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent


def iso(us_date: str) -> str:
    """Return ``1/4/1999`` as ``1999-01-04``."""
    month, day, year = (int(part) for part in us_date.split("/"))
    return date(year, month, day).isoformat()


def cents(text: str) -> str:
    """Return a price rounded to cents, as the demo's NASDAQ file holds it."""
    return f"{float(text):.2f}"


def read_rows(path: Path) -> list[dict[str, str]]:
    """Return the rows of a gzipped CSV file with a header."""
    with gzip.open(path, "rt", encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def sp500_csv(rows: list[dict[str, str]]) -> str:
    """Return the S&P 500 rows as ``date,open,high,low,close,volume`` (adjusted close dropped, cents)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["date", "open", "high", "low", "close", "volume"])
    for row in rows:
        prices = [cents(row[name]) for name in ("Open", "High", "Low", "Close")]
        writer.writerow([iso(row["Date"]), *prices, row["Volume"]])
    return out.getvalue()


def wti_csv(rows: list[dict[str, str]]) -> str:
    """Return the WTI rows as ``date,high,low,close`` with high = low = close; FRED's ``.`` (no price) as empty cells.

    The empty rows are kept on purpose: the price loader skips and reports them, as it does for any bad row.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["date", "high", "low", "close"])
    for row in rows:
        value = row["DCOILWTICO"].strip()
        close = "" if value == "." else cents(value)
        writer.writerow([iso(row["Date"]), close, close, close])
    return out.getvalue()


def arch_data_dir() -> Path:
    """Return the folder of the installed ``arch.data`` package (found without importing arch or pandas)."""
    spec = importlib.util.find_spec("arch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("arch is not installed: pip install arch==8.0.0, or pass its data folder")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def main(argv: list[str]) -> int:
    data = Path(argv[0]) if argv else arch_data_dir()
    targets = {
        HERE / "sp500" / "prices" / "SP500.csv": sp500_csv(read_rows(data / "sp500" / "sp500.csv.gz")),
        HERE / "wti" / "prices" / "WTI.csv": wti_csv(read_rows(data / "wti" / "wti.csv.gz")),
    }
    for path, text in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {text.count(chr(10)) - 1} rows to {path.relative_to(HERE.parents[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
