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
    _what_it_adds()


def _what_it_adds() -> None:
    """Search the same third-party source as notes, keyword only and hybrid: what the semantic pass finds in addition.

    Every corpus file becomes a note (``memory/corpus/<path>.md``, same lines) of a scratch workspace, beside the
    eval's own user notes (its ``local`` cases: code, memory, injected and near-match questions). For each
    answerable question: is a chunk overlapping its answer among the 8 hits, without and with the semantic pass? For
    every question: did the search find nothing without it and something with it (a gap it would no longer record)?
    """
    import tempfile

    from dreaming.memory import Workspace
    from dreaming.memory.search import search_memory

    with tempfile.TemporaryDirectory() as scratch:
        ws = Workspace(Path(scratch))
        for file in sorted((DATA / "corpus").rglob("*.py")):
            note = ws.root / "memory" / "corpus" / f"{file.relative_to(DATA / 'corpus').as_posix()}.md"
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_bytes(file.read_bytes())
        for file in sorted((DATA / "memory").rglob("*.md")):  # the user's notes of the eval's memory cases
            note = ws.root / "memory" / file.relative_to(DATA / "memory")
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_bytes(file.read_bytes())
        cases = [
            json.loads(line)
            for project in (*PROJECTS, "local")
            for line in (DATA / "cases" / f"{project}.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        found = {False: 0, True: 0}
        answerable = 0
        emptied = {"keep": 0, "not_keep": 0}
        for case in cases:
            hits = {semantic: search_memory(ws, case["query"], semantic=semantic) for semantic in (False, True)}
            if hits[True] and not hits[False]:
                emptied[case["expect"]] += 1
            if case["expect"] != "keep" or not case.get("path"):
                continue
            answerable += 1
            first, last = case["lines"]
            where = case["path"] if case["path"].startswith("memory/") else f"memory/corpus/{case['path']}.md"
            for semantic, listed in hits.items():
                found[semantic] += any(h.path == where and h.start_line <= last and h.end_line >= first for h in listed)
        print(
            f"as notes, {len(cases)} questions: the answer among the 8 hits for {found[False]} of {answerable} "
            f"answerable ones keyword only, {found[True]} hybrid; a miss turned into hits for {emptied['keep']} "
            f"answerable and {emptied['not_keep']} unanswerable ones"
        )
