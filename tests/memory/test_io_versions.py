"""A state file's version is an integer of a known value: ``true`` and ``1.0`` are not version 1."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dreaming.memory import read_state


@pytest.mark.parametrize("version", [True, 1.0, "1", None])
def test_a_version_that_only_equals_one_is_not_version_one(tmp_path: Path, version: object) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"version": version, "entries": {}}))
    loaded = read_state(path, versions=(1,), now=datetime(2026, 9, 1, tzinfo=UTC))
    assert loaded.data is None and loaded.moved_aside is not None
    assert "unknown version" in (loaded.problem or "")


def test_an_integer_version_one_is_read(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"version": 1}))
    assert read_state(path, versions=(1,), now=datetime(2026, 9, 1, tzinfo=UTC)).data == {"version": 1}
