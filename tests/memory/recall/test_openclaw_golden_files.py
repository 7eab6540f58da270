"""The OpenClaw 2026.9.6 goldens are complete and parse; the loader rebuilds each case's inputs.

This checks the golden files only. Comparing the Python engine against them is the parity tests' job.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from .openclaw_golden import (
    GOLDEN_ROOT,
    SCHEMA_SQL,
    build_workspace,
    case_names,
    expected,
    expected_memory,
    load_case,
    required_files,
)

ALL = case_names()
PROMOTION = case_names("promotion")
RECORD = case_names("record")


def test_there_are_cases_of_both_kinds() -> None:
    assert len(PROMOTION) >= 20
    assert len(RECORD) >= 5
    assert sorted(PROMOTION + RECORD) == ALL


@pytest.mark.parametrize("name", ALL)
def test_case_has_all_its_files_and_nothing_else(name: str) -> None:
    directory = GOLDEN_ROOT / name
    present = sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())
    assert present == sorted(required_files(name))


@pytest.mark.parametrize("name", ALL)
def test_goldens_parse(name: str) -> None:
    for rel in required_files(name):
        path = GOLDEN_ROOT / name / rel
        if rel.endswith(".json"):
            json.loads(path.read_text(encoding="utf-8"))
        else:
            path.read_bytes().decode("utf-8")


@pytest.mark.parametrize("name", PROMOTION)
def test_promotion_outputs_have_their_shape(name: str) -> None:
    read = expected(name, "store-read.json")
    assert set(read) == {"recall", "phase"}
    for store in (read["recall"], read["phase"]):
        assert store["version"] == 1
        assert isinstance(store["updatedAt"], str)
        assert isinstance(store["entries"], list)
    assert len(read["recall"]["entries"]) <= 512
    for rel in ("rank-promote.json", "promote/apply.json"):
        for candidate in expected(name, rel)["candidates"]:
            assert set(candidate["components"]) == {
                "frequency",
                "relevance",
                "diversity",
                "recency",
                "consolidation",
                "conceptual",
            }
    assert set(expected(name, "rank-sweep.json")) == {"repair", "candidates"}
    for command in ("promote", "sweep"):
        applied = expected(name, f"{command}/apply.json")
        memory = expected_memory(name, command)
        assert applied["memoryExists"] == (memory is not None)
        assert applied["apply"]["applied"] == len(applied["apply"]["appliedCandidates"])
        store = expected(name, f"{command}/store.json")
        assert set(store) == {"recall", "phase"}
        if memory is not None:
            for candidate in applied["apply"]["appliedCandidates"]:
                assert f"<!-- openclaw-memory-promotion:{candidate['key']} -->" in memory.decode()


@pytest.mark.parametrize("name", RECORD)
def test_record_outputs_have_their_shape(name: str) -> None:
    case = load_case(name)
    assert case.steps
    steps = expected(case, "record/steps.json")
    assert len(steps) == len(case.steps)
    assert steps[-1] == expected(case, "record/store.json")
    assert set(expected(case, "record/read.json")) == {"recall", "phase"}


@pytest.mark.parametrize("name", PROMOTION)
def test_build_workspace_writes_the_inputs(name: str, tmp_path: Path) -> None:
    case = load_case(name)
    root = build_workspace(case, tmp_path / "ws")
    assert case.store is not None
    for rel, text in case.notes.items():
        assert (root / rel).read_bytes() == text.encode()
    assert (root / "MEMORY.md").exists() == (case.memory is not None)
    assert case.now.tzinfo is not None
    assert case.now_iso.endswith("Z")


def test_the_generated_case_is_rebuilt_as_recorded() -> None:
    case = load_case("many-entries-5000")
    assert case.store is not None
    assert len(case.store["entries"]) == 5000
    assert len(expected(case, "store-read.json")["recall"]["entries"]) == 512


def test_readme_describes_every_case() -> None:
    readme = (GOLDEN_ROOT / "README.md").read_text(encoding="utf-8")
    cases_section = readme.split("\n## Cases\n", 1)[1]
    described = set(re.findall(r"^\| `([a-z0-9-]+)` \|", cases_section, flags=re.MULTILINE))
    assert described == set(ALL)


def test_schema_is_the_state_db_openclaw_creates() -> None:
    text = SCHEMA_SQL.read_text(encoding="utf-8")
    assert "-- PRAGMA user_version = 18" in text
    conn = sqlite3.connect(":memory:")
    conn.executescript(text)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(plugin_state_entries)")]
    assert columns == ["plugin_id", "namespace", "entry_key", "value_json", "created_at", "expires_at"]
    indexes = {row[1] for row in conn.execute("PRAGMA index_list(plugin_state_entries)")}
    assert {"idx_plugin_state_listing", "idx_plugin_state_expiry"} <= indexes
