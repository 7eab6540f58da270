"""Calibrate the semantic pass's threshold (``SEMANTIC_MIN_SIMILARITY``) on text nobody here wrote.

The research eval's answerable questions over pinned third-party source (``src/dreaming/evals/data/research/``:
langgraph, tenacity, typer, tiktoken; each case names the file and lines that answer it) are the positives: the
question against the chunk of its file (cut as the index cuts notes, ``chunk_markdown``) that overlaps those lines
and is most similar. The negatives are the question against every chunk of the three other projects. Prints both
distributions, the negatives' 99th percentile, and, for a few thresholds, the share of each that passes.
``--scale`` is ignored: the corpus is fixed. Needs the ``semantic`` extra.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from dreaming.memory.search._chunks import chunk_markdown
from dreaming.memory.search._semantic import SEMANTIC_MIN_SIMILARITY, load_embedder

DATA = Path(__file__).resolve().parents[1] / "src" / "dreaming" / "evals" / "data" / "research"
PROJECTS = ("langgraph", "tenacity", "typer", "tiktoken")


def _project(path: str) -> str:
    return path.split("/", 1)[0].removesuffix("_ext")  # tiktoken_ext is tiktoken's


def run(scale: float) -> None:
    embedder = load_embedder()
    if embedder is None:
        print("the semantic extra is not installed: pip install 'dreaming[semantic]'")
        return
    chunks: list[tuple[str, int, int, str]] = []  # (path, start, end, text) of every chunk of every project
    for project in PROJECTS:
        for root in sorted((DATA / "corpus").glob(f"{project}*")):
            for file in sorted(root.rglob("*.py")):
                relative = file.relative_to(DATA / "corpus").as_posix()
                text = file.read_text(encoding="utf-8")
                chunks += [(relative, c.start_line, c.end_line, c.text) for c in chunk_markdown(text)]
    vectors = embedder.embed([text for *_, text in chunks])
    projects = np.array([_project(path) for path, *_ in chunks])
    cases = [
        (project, json.loads(line))
        for project in PROJECTS
        for line in (DATA / "cases" / f"{project}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    questions = embedder.embed([case["query"] for _, case in cases])
    asked = np.array([project for project, _ in cases])
    positives: list[float] = []
    negatives: list[np.ndarray] = []  # a question against every chunk of the other projects
    prose: list[np.ndarray] = []  # a question against the questions about the other projects
    for (project, case), query in zip(cases, questions, strict=True):
        prose.append(questions[asked != project] @ query)
        if case["expect"] != "keep" or not case.get("path"):
            continue
        similarity = vectors @ query
        first, last = case["lines"]
        answering = [
            n
            for n, (path, start, end, _) in enumerate(chunks)
            if path == case["path"] and start <= last and end >= first
        ]
        positives.append(float(max(similarity[answering])))
        negatives.append(similarity[projects != project])
    pos = np.array(positives)
    neg = np.concatenate(negatives)
    asked_neg = np.concatenate(prose)
    print(f"{len(chunks)} chunks; {len(pos)} positive pairs; {len(neg)} negative pairs ({embedder.id})")
    print(f"positives: median {np.median(pos):.3f}, p10 {np.percentile(pos, 10):.3f}, p90 {np.percentile(pos, 90):.3f}")
    print(
        f"question pairs: {len(asked_neg)}, median {np.median(asked_neg):.3f}, p99 {np.percentile(asked_neg, 99):.3f}"
    )
    p99, p999 = np.percentile(neg, [99, 99.9])
    print(f"negatives: median {np.median(neg):.3f}, p99 {p99:.3f}, p99.9 {p999:.3f}")
    for threshold in sorted({0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, SEMANTIC_MIN_SIMILARITY}):
        mark = "  <- SEMANTIC_MIN_SIMILARITY" if threshold == SEMANTIC_MIN_SIMILARITY else ""
        some = np.mean([np.any(n >= threshold) for n in negatives])
        print(
            f"threshold {threshold:.2f}: negatives passing {np.mean(neg >= threshold):.2%}, question pairs passing "
            f"{np.mean(asked_neg >= threshold):.2%}, positives passing {np.mean(pos >= threshold):.1%}, "
            f"questions with an unrelated chunk passing {some:.0%}{mark}"
        )
