"""Memory search over a generated workspace of daily notes, against ripgrep scanning the same files (issue 3).

Generates ``10,000 * scale`` notes ``memory/YYYY-MM-DD-n.md`` of a few paragraphs each, with a Zipf-distributed
vocabulary of invented words, builds the index (timed), then runs 200 queries of one to three words three ways:
our search on an open, fresh index (``search_index``); our full ``search_memory``, which opens the index and
checks every file's size and mtime before searching; and ``rg -i -F -l -e WORD ...`` over the same folder, the
same query's words as fixed strings. Target: our search p50 at most a tenth of rg's.
"""

from __future__ import annotations

import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from dreaming.memory import Workspace
from dreaming.memory.search import MemoryIndex, open_index, refresh_index, search_memory

NOTES = 10_000
QUERIES = 200
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "ta",
    "shi",
    "ven",
    "dor",
    "al",
    "eth",
    "qua",
    "zim",
    "pol",
    "ser",
    "tri",
    "bex",
    "nor",
    "ult",
    "fa",
]
COMMON = [
    "the",
    "a",
    "and",
    "of",
    "to",
    "in",
    "we",
    "is",
    "it",
    "for",
    "on",
    "with",
    "that",
    "this",
    "was",
    "team",
    "deploy",
    "server",
    "meeting",
    "notes",
    "user",
    "bug",
    "fix",
    "test",
    "release",
    "customer",
    "plan",
    "review",
    "data",
    "query",
    "cache",
    "latency",
    "error",
    "retry",
    "budget",
    "schedule",
    "design",
]


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _generate(ws: Workspace, count: int, rng: random.Random) -> list[str]:
    vocab = _vocabulary(rng, 20_000)
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    cumulative = list(_accumulate(weights))
    start = date(2020, 1, 1)
    folder = ws.memory_dir
    folder.mkdir(parents=True)
    for n in range(count):
        day = start + timedelta(days=n // 4)
        paragraphs = []
        for p in range(rng.randint(2, 5)):
            lines = [_pick_sentence(rng, vocab, cumulative) for _ in range(rng.randint(1, 4))]
            paragraphs.append((f"## Topic {p}\n" if rng.random() < 0.3 else "") + "\n".join(lines))
        (folder / f"{day.isoformat()}-{n % 4}.md").write_text(
            f"# {day.isoformat()}\n\n" + "\n\n".join(paragraphs) + "\n"
        )
    return vocab


def _accumulate(weights: list[float]) -> list[float]:
    total = 0.0
    out = []
    for weight in weights:
        total += weight
        out.append(total)
    return out


def _pick_sentence(rng: random.Random, vocab: list[str], cumulative: list[float]) -> str:
    words = [
        rng.choice(COMMON) if rng.random() < 0.45 else rng.choices(vocab, cum_weights=cumulative)[0] for _ in range(12)
    ]
    return " ".join(words).capitalize() + "."


def _rg() -> str:
    found = shutil.which("rg") or str(Path(sys.prefix) / "bin" / "rg")
    if not Path(found).exists():
        raise SystemExit("ripgrep (rg) not found; install the ripgrep wheel")
    return found


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def run(scale: float) -> None:
    rng = random.Random(20260415)
    count = max(50, int(NOTES * scale))
    rg = _rg()
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        ws = Workspace.at(tmp)
        started = time.perf_counter()
        vocab = _generate(ws, count, rng)
        size_mb = sum(p.stat().st_size for p in ws.memory_dir.iterdir()) / 1e6
        print(f"generated {count} notes ({size_mb:.1f} MB) in {time.perf_counter() - started:.1f}s")

        conn = open_index(ws)
        started = time.perf_counter()
        built = refresh_index(ws, conn)
        print(f"index build: {built.chunks} chunks from {built.scanned} files in {time.perf_counter() - started:.2f}s")
        started = time.perf_counter()
        refresh_index(ws, conn)
        print(f"incremental refresh, nothing changed: {(time.perf_counter() - started) * 1000:.1f} ms")

        # Queries of one to three words, drawn from the frequent half of the vocabulary so most find something.
        queries = [" ".join(rng.sample(vocab[:2000], rng.randint(1, 3))) for _ in range(QUERIES)]
        index = MemoryIndex(ws)  # what a long-lived caller uses: files re-checked at most every 2 s
        index.refresh()
        ours: list[float] = []
        full: list[float] = []
        theirs: list[float] = []
        found = 0
        for query in queries:
            t0 = time.perf_counter()
            hits = index.search(query, limit=8)
            ours.append(time.perf_counter() - t0)
            found += bool(hits)
            t0 = time.perf_counter()
            search_memory(ws, query, limit=8)
            full.append(time.perf_counter() - t0)
            args = [rg, "-i", "-F", "-l", *(arg for word in query.split() for arg in ("-e", word)), str(ws.memory_dir)]
            t0 = time.perf_counter()
            subprocess.run(args, capture_output=True, check=False)
            theirs.append(time.perf_counter() - t0)
        conn.close()
        index.close()

    o50, o95 = _percentiles(ours)
    f50, f95 = _percentiles(full)
    r50, r95 = _percentiles(theirs)
    print(f"{QUERIES} queries, {found} with hits")
    print(f"MemoryIndex.search (live)    p50 {o50 * 1000:7.2f} ms   p95 {o95 * 1000:7.2f} ms")
    print(f"search_memory (with refresh) p50 {f50 * 1000:7.2f} ms   p95 {f95 * 1000:7.2f} ms")
    print(f"rg -i -F -l                  p50 {r50 * 1000:7.2f} ms   p95 {r95 * 1000:7.2f} ms")
    verdict = "meets" if o50 <= r50 / 10 else "MISSES"
    print(f"ratio p50 search / rg = {o50 / r50:.3f} (target <= 0.1: {verdict}); with refresh {f50 / r50:.3f}")
