from __future__ import annotations

import json
import multiprocessing
import os
import time
from datetime import datetime
from pathlib import Path

import pytest

from dreaming.config import DreamingConfig, load_config
from dreaming.errors import ConfigError, LockBusyError
from dreaming.memory import (
    ConsolidationLock,
    InputReport,
    Workspace,
    append_jsonl,
    atomic_write_json,
    atomic_write_text,
    iter_jsonl,
    read_state,
)


def test_atomic_write_skips_identical_bytes(tmp_path: Path) -> None:
    target = tmp_path / "a" / "f.txt"
    assert atomic_write_text(target, "hello") is True
    mtime = target.stat().st_mtime_ns
    time.sleep(0.01)
    assert atomic_write_text(target, "hello") is False
    assert target.stat().st_mtime_ns == mtime
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".tmp")]


def test_read_state_moves_corrupt_and_wrong_version_aside(tmp_path: Path, now: datetime) -> None:
    bad = tmp_path / "s.json"
    bad.write_text("{not json")
    loaded = read_state(bad, versions=[1], now=now)
    assert loaded.data is None and loaded.moved_aside is not None
    assert loaded.moved_aside.read_text() == "{not json"
    assert not bad.exists()
    atomic_write_json(bad, {"version": 7})
    loaded = read_state(bad, versions=[1], now=now)
    assert loaded.problem == "unknown version 7"
    assert loaded.moved_aside is not None and loaded.moved_aside.exists()
    atomic_write_json(bad, {"version": 1, "x": 2})
    assert read_state(bad, versions=[1], now=now).data == {"version": 1, "x": 2}


def test_iter_jsonl_reports_bad_lines_and_append_heals_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\nnope\n[1]\n\n{"a": 2')
    append_jsonl(path, [{"a": 3}])
    report = InputReport()
    rows = list(iter_jsonl(path, report))
    assert [n for n, _ in rows] == [1, 6]
    assert [b.line for b in report.bad] == [2, 3, 5]
    assert report.count == 3


def _hold(lock_path: str, ready: "multiprocessing.synchronize.Event", seconds: float) -> None:  # noqa: UP037
    with ConsolidationLock(Path(lock_path)):
        ready.set()
        time.sleep(seconds)


def test_lock_busy_names_holder_then_free(tmp_path: Path) -> None:
    lock_path = tmp_path / "dreaming.lock"
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Event()
    proc = ctx.Process(target=_hold, args=(str(lock_path), ready, 3.0))
    proc.start()
    assert ready.wait(5)
    with pytest.raises(LockBusyError) as info:
        ConsolidationLock(lock_path, timeout_s=0.2).acquire()
    assert info.value.holder.startswith(f"{proc.pid}:")
    proc.join()
    with ConsolidationLock(lock_path, timeout_s=0.2) as lock:
        assert lock.took_over is None
    assert not lock_path.exists()


def test_stale_lock_is_taken_over_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    lock_path = tmp_path / "dreaming.lock"
    lock_path.write_text("999999:0\n")
    with ConsolidationLock(lock_path, timeout_s=0.2) as lock:
        assert lock.took_over == "999999:0"
        assert lock_path.read_text().startswith(f"{os.getpid()}:")
    assert "stale" in caplog.text


def test_config_defaults_and_fallbacks(tmp_path: Path) -> None:
    assert load_config(tmp_path / "missing.toml") == DreamingConfig()
    cfg = DreamingConfig.from_mapping(
        {
            "timezone": "Mars/Olympus",
            "verdicts": {"gate_min_score": -1, "gate_min_count": "4", "bogus": 1},
            "deep": {"limit": 0, "min_score": " ", "max_age_days": -5},
            "llm": {"api_key": "sk-secret", "prices": {"m": {"input": 1, "output": 2}}},
        }
    )
    assert cfg.timezone == "UTC"
    assert cfg.verdicts.gate_min_score == 0.8
    assert cfg.verdicts.gate_min_count == 4
    assert cfg.deep.limit == 0 and cfg.deep.min_score == 0.75 and cfg.deep.max_age_days == 30
    assert cfg.llm.prices["m"].output == 2
    text = "\n".join(cfg.warnings)
    assert "gate_min_score" in text and "bogus" in text and "Mars/Olympus" in text and "api_key" in text
    assert "sk-secret" not in text
    bad = tmp_path / "dreaming.toml"
    bad.write_text("[deep\n")
    with pytest.raises(ConfigError):
        load_config(bad)


def test_workspace_paths(tmp_path: Path) -> None:
    ws = Workspace.at(tmp_path)
    assert ws.lock_file == tmp_path.resolve() / "memory/.dreams/dreaming.lock"
    assert ws.relative(ws.candidates) == "memory/.dreams/candidates.json"
    assert json.loads(json.dumps({"ok": True}))


def test_append_only_logs_rotate_keeping_one_generation(tmp_path: Path) -> None:
    from dreaming.memory.files import rotate_if_larger

    log = tmp_path / "events.jsonl"
    assert rotate_if_larger(log, 10) is False  # missing: nothing to do
    append_jsonl(log, [{"n": 1}])
    assert rotate_if_larger(log, 1000) is False
    assert rotate_if_larger(log, 5) is True
    assert not log.exists() and (tmp_path / "events.jsonl.1").read_text() == '{"n": 1}\n'
