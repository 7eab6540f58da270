"""Recall path: recording throughput and ranking a 20,000-entry store, each against a baseline in the same run."""

from __future__ import annotations

import json
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dreaming.config import DeepConfig
from dreaming.memory import Workspace, append_jsonl
from dreaming.memory.recall import RecallQuery, RecallResult, record_recall_batch, record_short_term_recalls
from dreaming.memory.recall._phase_signals import read_phase_signals
from dreaming.memory.recall._ranking import rank_entries
from dreaming.memory.recall._store import read_store, write_store

NOW = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)


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
    ws.recall_store.write_text(json.dumps(doc, indent=2) + "\n")
    size_mb = ws.recall_store.stat().st_size / 1e6
    started = time.perf_counter()
    json.loads(ws.recall_store.read_bytes())
    load = time.perf_counter() - started
    started = time.perf_counter()
    store = read_store(ws, now=NOW)
    result = rank_entries(store.entries, read_phase_signals(ws), DeepConfig(), now=NOW)
    ranked = time.perf_counter() - started
    started = time.perf_counter()
    write_store(ws, store, now=NOW + timedelta(seconds=1))
    written = time.perf_counter() - started
    total = ranked + written
    print(f"rank {entries:,} entries ({size_mb:.1f} MB): load only {load:.3f}s; read+rank {ranked:.3f}s; "
          f"write {written:.3f}s; (rank+write)/load = {total / load:.2f}x (target <= 3x); "
          f"{len(result.candidates)} candidates")  # fmt: skip


def run(scale: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _bench_record(root, max(1000, int(100_000 * scale) // 1000 * 1000))
        _bench_rank(root, max(100, int(20_000 * scale)))
