"""Recall path: recording throughput and ranking a 20,000-entry store, each against a baseline in the same run.

Recording is timed on the wall clock, against appending the same records to a JSONL file. Ranking is in CPU seconds
(the measure of issue 14: the machine is shared), the least and the median of three runs, each run on the same bytes:

- **floor**: a typed msgspec decode of the store file (read from disk, the collector paused): the least work that
  still reads the store. ``json.loads`` of the same file is printed too (the baseline before issue 14).
- **read + rank**: ``read_store`` and ``rank_entries`` (every entry normalized and screened, the 512 cap applied).
- **write**: ``write_store`` of the whole store as read (all 20,000 entries). No command writes such a store: every
  writer caps it at 512 first. So the target ratio, (rank + write) / floor, holds more writing than a promote does;
  the store work of a promote (normalize and cap in place, rank, write the capped store) is printed for comparison.
"""

from __future__ import annotations

import gc
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec

from dreaming.config import DeepConfig
from dreaming.memory import Workspace, append_jsonl
from dreaming.memory.recall import RecallQuery, RecallResult, record_recall_batch, record_short_term_recalls
from dreaming.memory.recall._normalize import normalize_store_in_place
from dreaming.memory.recall._phase_signals import read_phase_signals
from dreaming.memory.recall._ranking import rank_entries
from dreaming.memory.recall._store import read_store, write_store

NOW = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)
RUNS = 3


def _results(n: int, offset: int) -> list[RecallResult]:
    return [
        RecallResult(f"memory/2026-04-{1 + (offset + i) % 14:02d}.md", 1 + (offset + i) % 400, 1 + (offset + i) % 400,
                     0.5 + (i % 50) / 100, f"Fact {(offset + i) % 400} about router vlan backup glacier")
        for i in range(n)
    ]  # fmt: skip


def _bench_record(root: Path, total: int) -> None:
    ws = Workspace.at(root / "rec")
    batch = 1000
    started = time.perf_counter()
    for b in range(total // batch):
        queries = [RecallQuery(query=f"q{b}-{k}", results=_results(10, b * batch + k * 10)) for k in range(batch // 10)]
        record_recall_batch(ws, queries, now=NOW + timedelta(seconds=b))
    batched = time.perf_counter() - started
    rows = [
        {"query": f"q{i}", "path": r.path, "startLine": r.start_line, "score": r.score, "snippet": r.snippet}
        for i, r in enumerate(_results(total, 0))
    ]
    started = time.perf_counter()
    for b in range(total // batch):
        append_jsonl(root / "baseline.jsonl", rows[b * batch : (b + 1) * batch])
    baseline = time.perf_counter() - started
    singles = 200
    started = time.perf_counter()
    for i in range(singles):
        record_short_term_recalls(ws, query=f"single-{i}", results=_results(1, i), now=NOW)
    per_call = (time.perf_counter() - started) / singles
    print(f"record {total:,} recalls in batches of {batch}: {batched:.2f}s = {total / batched:,.0f} recalls/s")
    print(
        f"  baseline JSONL append of the same records (same batches): {baseline:.3f}s; ratio {batched / baseline:.1f}x"
    )
    print(f"  single-call cost (one recall per call, 512-entry store): {per_call * 1000:.2f} ms/call")


class _StoredEntry(msgspec.Struct, gc=False):
    # The store's own field names.
    key: str
    path: str
    startLine: int
    endLine: int
    source: str
    snippet: str
    recallCount: int
    dailyCount: int
    groundedCount: int
    totalScore: float
    maxScore: float
    firstRecalledAt: str
    lastRecalledAt: str
    queryHashes: list[str]
    recallDays: list[str]
    conceptTags: list[str]


class _StoredStore(msgspec.Struct, gc=False):
    version: int
    updatedAt: str
    entries: dict[str, _StoredEntry]


def _cpu_of(step: Callable[[], object]) -> float:
    started = time.process_time()
    step()
    return time.process_time() - started


def _floor(path: Path) -> float:
    # The least work that still reads the store: a typed decode, with the collector paused (nothing else runs).
    decode = msgspec.json.Decoder(_StoredStore).decode
    enabled = gc.isenabled()
    gc.disable()
    try:
        started = time.process_time()
        count = len(decode(path.read_bytes()).entries)
        elapsed = time.process_time() - started
    finally:
        if enabled:
            gc.enable()
    assert count > 0
    return elapsed


def _spread(values: list[float]) -> str:
    return f"min {min(values):6.3f} s  median {statistics.median(values):6.3f} s"


def _bench_rank(root: Path, entries: int) -> None:
    ws = Workspace.at(root / "rank")
    ws.state_dir.mkdir(parents=True)
    entries_: dict[str, object] = {}
    doc = {"version": 1, "updatedAt": "2026-04-15T00:00:00.000Z", "entries": entries_}
    for i in range(entries):
        key = f"memory:memory/2026-04-{1 + i % 14:02d}.md:{i + 1}:{i + 1}"
        entries_[key] = {
            "key": key, "path": key.split(":")[1], "startLine": i + 1, "endLine": i + 1, "source": "memory",
            "snippet": f"Entry {i} " + "router vlan glacier " * 32, "recallCount": i % 7, "dailyCount": i % 3,
            "groundedCount": 0, "totalScore": (i % 7) * 0.8, "maxScore": 0.9,
            "firstRecalledAt": "2026-04-01T00:00:00.000Z", "lastRecalledAt": "2026-04-14T00:00:00.000Z",
            "queryHashes": [f"{j:012x}" for j in range(i % 5)], "recallDays": ["2026-04-13", "2026-04-14"],
            "conceptTags": ["router", "vlan", "glacier"],
        }  # fmt: skip
    original = (json.dumps(doc, indent=2) + "\n").encode()
    del doc, entries_
    store_path = ws.recall_store
    times: dict[str, list[float]] = {"floor": [], "stdlib": [], "rank": [], "write": [], "promote": []}
    candidates = 0
    for _ in range(RUNS):
        store_path.write_bytes(original)  # every run reads the same bytes (a write below rewrites the file)
        times["floor"].append(_floor(store_path))
        times["stdlib"].append(_cpu_of(lambda: json.loads(store_path.read_bytes())))
        ranked, written, candidates = _rank_and_write(ws)
        times["rank"].append(ranked)
        times["write"].append(written)
        store_path.write_bytes(original)
        times["promote"].append(_cpu_of(lambda: _promote_store_work(ws)))
    total = [r + w for r, w in zip(times["rank"], times["write"], strict=True)]
    size_mb = len(original) / 1e6
    print(f"rank {entries:,} entries ({size_mb:.1f} MB store), CPU seconds, {RUNS} runs ({candidates} candidates):")
    for label, values in (
        ("floor: msgspec typed decode of the store", times["floor"]),
        ("stdlib json.loads of the store", times["stdlib"]),
        ("read + rank (read_store, rank_entries)", times["rank"]),
        ("write the whole store (write_store)", times["write"]),
        ("rank + write", total),
    ):
        print(f"  {label:<46} {_spread(values)}")
    for label, base, note in (
        ("msgspec floor", times["floor"], "target <= 1.5"),
        ("json.loads", times["stdlib"], "the baseline before the floor rule"),
    ):
        print(
            f"  (rank + write) / {label} = {min(total) / min(base):.2f} (min)  "
            f"{statistics.median(total) / statistics.median(base):.2f} (median)  ({note})"
        )
    promote = times["promote"]
    print(
        f"  for comparison, a promote's store work (read, normalize and cap in place, rank, write the capped store): "
        f"{_spread(promote)} = {statistics.median(promote) / statistics.median(times['floor']):.2f}x the floor (median)"
    )


def _rank_and_write(ws: Workspace) -> tuple[float, float, int]:
    # The measure of issue 14's target row: read and rank the whole store, then write it all back.
    started = time.process_time()
    store = read_store(ws, now=NOW)
    result = rank_entries(store.entries, read_phase_signals(ws), DeepConfig(), now=NOW)
    ranked = time.process_time() - started
    started = time.process_time()
    write_store(ws, store, now=NOW + timedelta(seconds=1))
    return ranked, time.process_time() - started, len(result.candidates)


def _promote_store_work(ws: Workspace) -> None:
    # What promote_short_term_recalls does to the store, less the lock and MEMORY.md: it writes the capped store.
    store = read_store(ws, now=NOW)
    normalize_store_in_place(store, now=NOW)
    rank_entries(store.entries, read_phase_signals(ws), DeepConfig(), now=NOW)
    write_store(ws, store, now=NOW + timedelta(seconds=1))


def run(scale: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _bench_record(root, max(1000, int(100_000 * scale) // 1000 * 1000))
        _bench_rank(root, max(100, int(20_000 * scale)))
