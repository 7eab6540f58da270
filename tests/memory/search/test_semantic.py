"""The optional semantic pass (``[search] semantic``, the ``semantic`` extra): what it adds, what it leaves alone.

Most tests load the real model (wordllama's, from its wheel). Without the extra they skip here and fail in CI
(``CI`` set), as the viewer's browser tests do; the extra-missing, doctor-off and config tests run everywhere.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typer
from numpy.typing import NDArray
from typer.testing import CliRunner

from dreaming.cli.memory import register
from dreaming.config import DreamingConfig
from dreaming.memory import Workspace
from dreaming.memory.search import open_index, query_coverage, refresh_index, search_memory
from dreaming.memory.search._search import RELEVANCE_FLOOR
from dreaming.memory.search._semantic import EMBED_MAX_CHARS, SEMANTIC_DIMS, Embedder, load_embedder, update_vectors
from dreaming.tools.memory_search import search_and_record
from tests.conftest import NOW

LOW_CONFIDENCE = 0.35  # dreaming.memory.gaps.LOW_CONFIDENCE: a semantic hit must not be a weak answer

CAR = "My automobile stopped working on the highway yesterday; the mechanic says the alternator failed."
PARAPHRASE = "vehicle engine trouble"  # shares no word and no stem with CAR (cosine similarity 0.64 with its chunk)

app = typer.Typer()
register(app)


@pytest.fixture
def fresh_loader() -> Iterator[None]:
    """Forget the loaded model before and after the test (a test that breaks the import must not leave it broken)."""
    load_embedder.cache_clear()
    yield
    load_embedder.cache_clear()


def _require_the_extra() -> None:
    if importlib.util.find_spec("wordllama") is None:
        message = "the semantic extra is not installed (pip install 'dreaming[semantic]'; dev includes it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def embedder() -> Embedder:
    """The real model; skipped without the extra, except in CI."""
    _require_the_extra()
    loaded = load_embedder()
    assert loaded is not None
    return loaded


def _notes(ws: Workspace, notes: dict[str, str]) -> None:
    for name, text in notes.items():
        path = ws.root / "memory" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _workspace(ws: Workspace) -> None:
    _notes(
        ws,
        {
            "2026-04-01.md": f"# Car\n\n{CAR}\n",
            "2026-04-02.md": "# Deploy\n\nThe staging api listens on port 8443 behind the load balancer.\n\n"
            "Kafka retention is seven days on the prod cluster.\n",
            "2026-04-03.md": "# Ops\n\nThe staging deploy runs every Tuesday.\n\nPort 8080 serves the metrics.\n",
        },
    )


def test_a_paraphrase_is_found_only_with_semantic_on(workspace: Workspace, embedder: Embedder) -> None:
    _workspace(workspace)
    assert query_coverage(PARAPHRASE, CAR) == 0.0  # no word or stem in common: only the semantic pass can find it
    assert search_memory(workspace, PARAPHRASE) == []
    hits = search_memory(workspace, PARAPHRASE, semantic=True)
    assert [(hit.path, hit.start_line, hit.end_line) for hit in hits] == [("memory/2026-04-01.md", 1, 3)]
    assert LOW_CONFIDENCE <= hits[0].score <= RELEVANCE_FLOOR


def test_cli_search_follows_the_config_and_an_unrelated_query_still_leaves_a_gap(
    workspace: Workspace, embedder: Embedder
) -> None:
    _workspace(workspace)
    (workspace.root / "dreaming.toml").write_text("[search]\nsemantic = true\n")
    args = ["--json", "--now", "2026-04-05T12:00:00Z", "-w", str(workspace.root)]
    found = json.loads(CliRunner().invoke(app, ["search", PARAPHRASE, *args]).stdout)
    assert [hit["path"] for hit in found["hits"]] == ["memory/2026-04-01.md"]
    # The best hit holds none of the query's words: the gap check cannot confirm it, so research still looks.
    assert found["gap_type"] == "partial_match"
    missed = json.loads(CliRunner().invoke(app, ["search", "volcanic eruption forecast", *args]).stdout)
    assert (missed["hits"], missed["gap_type"]) == ([], "no_results")
    outcome = search_and_record(workspace, "medieval poetry anthology", now=NOW, semantic=True)
    assert (outcome.hits, outcome.gap_type) == ([], "no_results")
    assert outcome.gap is not None


@pytest.mark.parametrize("query", ["staging port", "staging api port", "kafka retention", "port"])
def test_exact_hits_keep_their_scores_and_order(workspace: Workspace, embedder: Embedder, query: str) -> None:
    _workspace(workspace)
    _notes(workspace, {"2026-04-04.md": "# Servers\n\nThe pre-production gateway answers on socket 8443.\n"})
    off = search_memory(workspace, query)
    on = search_memory(workspace, query, semantic=True)
    assert off
    assert [hit for hit in on if hit in off] == off  # the same hits, scores and order
    assert all(hit.score <= RELEVANCE_FLOOR for hit in on if hit not in off)


def _vectors(ws: Workspace) -> dict[int, bytes]:
    with sqlite3.connect(ws.search_index) as conn:
        return dict(conn.execute("SELECT id, vector FROM chunk_vectors").fetchall())


def _chunk_ids(ws: Workspace, path: str) -> set[int]:
    with sqlite3.connect(ws.search_index) as conn:
        return {row[0] for row in conn.execute("SELECT id FROM chunks WHERE path = ?", (path,))}


def test_a_huge_line_is_embedded_from_its_start(embedder: Embedder) -> None:
    """wordllama pads a batch to its longest text: a hostile 5 MB line must not cost gigabytes (EMBED_MAX_CHARS)."""
    head = (CAR + " ") * (EMBED_MAX_CHARS // (len(CAR) + 1) + 1)
    longer = head + "alpha beta gamma delta " * 2_000  # past the cut: words that would move the mean
    vectors = embedder.embed([longer, head[:EMBED_MAX_CHARS]])
    assert np.array_equal(vectors[0], vectors[1])


def test_vectors_follow_edits(workspace: Workspace, embedder: Embedder) -> None:
    _workspace(workspace)
    search_memory(workspace, PARAPHRASE, semantic=True)
    before = _vectors(workspace)
    old = _chunk_ids(workspace, "memory/2026-04-01.md")
    assert old and old <= set(before)
    _notes(workspace, {"2026-04-01.md": "# Garden\n\nPlanted tomatoes and basil along the south fence.\n"})
    conn = open_index(workspace)
    try:
        refresh_index(workspace, conn)  # a refresh alone drops the edited note's vectors with its chunks
    finally:
        conn.close()
    after = _vectors(workspace)
    assert not old & set(after)
    assert set(after) == set(before) - old
    assert search_memory(workspace, PARAPHRASE, semantic=True) == []
    hits = search_memory(workspace, "vegetable gardening", semantic=True)
    assert [hit.path for hit in hits] == ["memory/2026-04-01.md"]
    assert set(_vectors(workspace)) == set(after) | _chunk_ids(workspace, "memory/2026-04-01.md")


def test_a_damaged_vector_is_computed_again_not_fatal(workspace: Workspace, embedder: Embedder) -> None:
    _workspace(workspace)
    found = search_memory(workspace, PARAPHRASE, semantic=True)
    good = _vectors(workspace)
    conn = open_index(workspace)
    try:
        conn.execute("UPDATE chunk_vectors SET vector = x'616263'")  # three bytes: no float32 vector at all
    finally:
        conn.close()
    assert search_memory(workspace, PARAPHRASE, semantic=True) == found
    assert _vectors(workspace) == good


class _ConstantModel:
    """A stand-in for wordllama's model: the same vector for every text."""

    def embed(self, texts: Sequence[str], norm: bool = False) -> NDArray[np.float32]:
        return np.ones((len(texts), SEMANTIC_DIMS), dtype=np.float32)


def test_another_embedder_clears_the_vectors(workspace: Workspace, embedder: Embedder) -> None:
    _workspace(workspace)
    search_memory(workspace, PARAPHRASE, semantic=True)
    real = _vectors(workspace)
    conn = open_index(workspace)
    try:
        other = Embedder(id="constant", model=_ConstantModel())
        assert update_vectors(conn, other) == len(real)  # every vector computed again
        assert conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone() == ("constant",)
        unit = np.full(SEMANTIC_DIMS, 1 / 16, dtype=np.float32).tobytes()  # 256 dimensions: 1 / sqrt(256)
        assert set(_vectors(workspace).values()) == {unit}
        assert update_vectors(conn, other) == 0  # nothing left to compute
        assert update_vectors(conn, replace(embedder)) == len(real)  # and back
    finally:
        conn.close()
    assert _vectors(workspace) == real


@pytest.mark.usefixtures("fresh_loader")
def test_loading_never_downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _require_the_extra()
    home = tmp_path / "home"
    home.mkdir()
    for name in ("HOME", "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE"):
        monkeypatch.setenv(name, str(home / name.lower()) if name != "HOME" else str(home))
    import requests

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the semantic model tried to download")

    monkeypatch.setattr(requests.Session, "request", refuse)  # requests.get goes through it; sockets are blocked too
    # A fresh import (wordllama configures the root logger when imported): it must leave the root logger as it was.
    for name in [name for name in sys.modules if name == "wordllama" or name.startswith("wordllama.")]:
        monkeypatch.delitem(sys.modules, name)
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    level = root.level
    loaded = load_embedder()
    assert loaded is not None
    assert (root.handlers, root.level) == ([], level)
    assert loaded.id == f"wordllama {sys.modules['wordllama'].__version__} l2_supercat 256"
    vectors = loaded.embed([CAR, PARAPHRASE, ""])
    assert vectors.shape == (3, SEMANTIC_DIMS)
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0) and not vectors[2].any()
    assert list(home.rglob("*")) == []  # nothing cached under the home folder either


@pytest.mark.usefixtures("fresh_loader")
def test_without_the_extra_the_search_is_keywords_and_warns_once(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _workspace(workspace)
    monkeypatch.setitem(sys.modules, "wordllama", None)  # ``import wordllama`` now raises ImportError
    with caplog.at_level(logging.WARNING, logger="dreaming.memory.search._semantic"):
        assert search_memory(workspace, PARAPHRASE, semantic=True) == []
        exact = search_memory(workspace, "mechanic alternator", semantic=True)
    assert [hit.path for hit in exact] == ["memory/2026-04-01.md"]
    assert exact == search_memory(workspace, "mechanic alternator")
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1
    assert "semantic extra is not installed" in warnings[0]


def _doctor_line(ws: Workspace) -> str:
    out = CliRunner().invoke(app, ["doctor", "--now", "2026-04-05T12:00:00Z", "-w", str(ws.root)])
    assert out.exit_code == 0, out.output
    return next(line for line in out.stdout.splitlines() if line.startswith("semantic search:"))


def test_doctor_says_whether_semantic_search_is_on(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    _workspace(workspace)
    assert _doctor_line(workspace) == "semantic search: off"
    (workspace.root / "dreaming.toml").write_text("[search]\nsemantic = true\n")
    monkeypatch.setitem(sys.modules, "wordllama", None)
    assert _doctor_line(workspace).startswith("semantic search: configured but the semantic extra is not installed")
    out = CliRunner().invoke(app, ["doctor", "--json", "--now", "2026-04-05T12:00:00Z", "-w", str(workspace.root)])
    assert json.loads(out.stdout)["semantic_search"] == "not_installed"


def test_doctor_says_on_with_the_extra(workspace: Workspace, embedder: Embedder) -> None:
    (workspace.root / "dreaming.toml").write_text("[search]\nsemantic = true\n")
    assert _doctor_line(workspace) == "semantic search: on"


@pytest.mark.parametrize(
    ("table", "semantic", "warning"),
    [
        ({}, False, None),
        ({"search": {"semantic": True}}, True, None),
        ({"search": {"semantic": "yes"}}, True, None),
        ({"search": {"semantic": False}}, False, None),
        ({"search": {"semantic": "maybe"}}, False, "[search] semantic = 'maybe' is not true or false"),
        ({"search": {"semantic": 1.5}}, False, "[search] semantic = 1.5 is not true or false"),
        ({"search": {"semantics": True}}, False, "[search] unknown key 'semantics' ignored"),
        ({"search": True}, False, "[search] must be a table; using defaults"),
    ],
)
def test_config_search_semantic(table: dict[str, Any], semantic: bool, warning: str | None) -> None:
    config = DreamingConfig.from_mapping(table)
    assert config.search.semantic is semantic
    if warning is None:
        assert config.warnings == ()
    else:
        assert len(config.warnings) == 1 and config.warnings[0].startswith(warning)
