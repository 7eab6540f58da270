"""Run every benchmark module ``bench/bench_*.py`` (each defines ``run(scale: float) -> None``).

Usage: ``python -m bench [NAME ...] [--scale 0.1]``. ``--scale`` shrinks the generated inputs for a quick look;
the targets in the issues are stated at scale 1.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("names", nargs="*", help="benchmark names (default: all), e.g. verdicts recall")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full input sizes")
    args = parser.parse_args()
    here = Path(__file__).parent
    found = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    chosen = [f"bench_{n}" for n in args.names] if args.names else found
    for name in chosen:
        if name not in found:
            print(f"unknown benchmark {name!r}; known: {[f.removeprefix('bench_') for f in found]}")
            return 2
    for name in chosen:
        module = importlib.import_module(f"bench.{name}")
        print(f"\n=== {name.removeprefix('bench_')} (scale {args.scale:g}) ===", flush=True)
        started = time.perf_counter()
        module.run(args.scale)
        print(f"--- {name.removeprefix('bench_')} done in {time.perf_counter() - started:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
