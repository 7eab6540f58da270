"""OpenClaw's workspace lock row (``short-term-locks``): waited for, taken over only when stale, released if ours."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dreaming.errors import LockBusyError
from dreaming.memory import Workspace
from dreaming.memory.recall import RecallResult, read_store, record_short_term_recalls
from dreaming.memory.recall import _openclaw_db as oc
from dreaming.memory.recall import _openclaw_lock as lock
from dreaming.memory.recall._openclaw_paths import workspace_key
from dreaming.memory.recall._store import short_term_lock
from tests.conftest import NOW
from tests.memory.recall.helpers import note
from tests.memory.recall.openclaw_state import OpenClawInstall, all_rows, entries_in, install_openclaw, put_row


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workspace: Workspace) -> OpenClawInstall:
    made = install_openclaw(tmp_path, monkeypatch)
    workspace.config_file.write_text(f'[recall]\nopenclaw_state_dir = "{made.state_dir}"\n')
    return made


def lock_rows(db: Path) -> list[tuple[str, dict[str, Any]]]:
    return [(r[2], json.loads(r[3])) for r in all_rows(db) if r[1] == oc.LOCK_NAMESPACE]


def hold(db: Path, ws: Workspace, **holder: Any) -> None:
    put_row(db, oc.LOCK_NAMESPACE, workspace_key(str(ws.root)), json.dumps(holder), created_at=holder["acquiredAt"])


def now_ms() -> int:
    return int(time.time() * 1000)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # reaped: not even a zombie
    return child.pid


def test_the_lock_row_is_written_while_held_and_deleted_after(workspace: Workspace, install: OpenClawInstall) -> None:
    with short_term_lock(workspace):
        ((row_key, holder),) = lock_rows(install.db)
    assert row_key == workspace_key(str(workspace.root))  # unwrapped: the bare workspace key
    pid, _, token = holder["owner"].partition(":")
    assert int(pid) == os.getpid() and len(token) == 36  # "<pid>:<uuid>"
    assert isinstance(holder["acquiredAt"], int) and holder["ownerStartTime"] == lock.process_start_time(os.getpid())
    assert list(holder) == ["owner", "acquiredAt", "ownerStartTime"]
    assert lock_rows(install.db) == []


def test_a_live_holder_is_waited_for_then_reported(
    workspace: Workspace, install: OpenClawInstall, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = os.getppid()
    hold(
        install.db, workspace, owner=f"{other}:abc", acquiredAt=now_ms(), ownerStartTime=lock.process_start_time(other)
    )
    before = lock_rows(install.db)
    sleeps: list[float] = []
    real_sleep = time.sleep

    def counted_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", counted_sleep)
    with (
        pytest.raises(LockBusyError, match=f"holder {other}:abc"),
        short_term_lock(workspace, wait_s=0.1, retry_s=0.01),
    ):
        pass
    assert len(sleeps) >= 2 and set(sleeps) == {0.01}  # it retried, at the interval it was given
    assert lock_rows(install.db) == before


@pytest.mark.parametrize("age_ms", [61_000, 5_000])
def test_a_dead_holder_is_taken_over_only_once_stale(
    workspace: Workspace, install: OpenClawInstall, age_ms: int
) -> None:
    hold(install.db, workspace, owner=f"{dead_pid()}:gone", acquiredAt=now_ms() - age_ms)
    if age_ms < 60_000:
        with pytest.raises(LockBusyError), short_term_lock(workspace, wait_s=0.05, retry_s=0.01):
            pass
        return
    with short_term_lock(workspace, wait_s=0.05, retry_s=0.01):
        ((_, holder),) = lock_rows(install.db)
        assert holder["owner"].startswith(f"{os.getpid()}:")
    assert lock_rows(install.db) == []


@pytest.mark.parametrize(
    ("start_offset", "taken"),
    [(1, True), (0, False), (None, False)],  # another start time: a reused pid; the same, or none recorded: alive
)
def test_a_stale_live_pid_is_taken_over_only_with_another_start_time(
    workspace: Workspace, install: OpenClawInstall, start_offset: int | None, taken: bool
) -> None:
    other = os.getppid()
    start = lock.process_start_time(other)
    assert start is not None
    holder: dict[str, Any] = {"owner": f"{other}:x", "acquiredAt": now_ms() - 120_000}
    if start_offset is not None:
        holder["ownerStartTime"] = start + start_offset
    hold(install.db, workspace, **holder)
    if taken:
        with short_term_lock(workspace, wait_s=0.05, retry_s=0.01):
            assert lock_rows(install.db)[0][1]["owner"].startswith(f"{os.getpid()}:")
    else:
        with pytest.raises(LockBusyError), short_term_lock(workspace, wait_s=0.05, retry_s=0.01):
            pass
        assert lock_rows(install.db)[0][1] == holder


def test_a_stale_holder_with_an_unparsable_owner_is_taken_over(workspace: Workspace, install: OpenClawInstall) -> None:
    hold(install.db, workspace, owner="not-a-pid", acquiredAt=now_ms() - 120_000)
    with short_term_lock(workspace, wait_s=0.05, retry_s=0.01):
        pass
    assert lock_rows(install.db) == []


def test_release_deletes_the_row_only_while_it_is_ours(workspace: Workspace, install: OpenClawInstall) -> None:
    with short_term_lock(workspace):
        # Someone took the lock over meanwhile (we stalled past 60 s): their row must survive our release.
        hold(install.db, workspace, owner="4242:theirs", acquiredAt=now_ms())
    assert [h["owner"] for _, h in lock_rows(install.db)] == ["4242:theirs"]


def test_the_store_chosen_when_the_lock_is_taken_is_used_under_it(
    workspace: Workspace, install: OpenClawInstall, monkeypatch: pytest.MonkeyPatch
) -> None:
    note(workspace, "memory/2026-04-14.md", ["Kafka retention is seven days."])
    hit = RecallResult("memory/2026-04-14.md", 1, 1, 0.9, "Kafka retention is seven days.")
    record_short_term_recalls(workspace, query="kafka", results=[hit], now=NOW)
    with short_term_lock(workspace):
        workspace.config_file.write_text("")  # the choice would now be JSON; under the lock it stays SQLite
        monkeypatch.delenv("OPENCLAW_STATE_DIR")
        assert list(read_store(workspace, now=NOW).entries) == ["memory:memory/2026-04-14.md:1:1"]
    assert read_store(workspace, now=NOW).entries == {}  # outside the lock: chosen afresh (no JSON store)


def _record_many(root: str, worker: int, count: int, start: Any) -> None:
    ws = Workspace.at(root)
    hit = RecallResult("memory/2026-04-14.md", 1, 1, 0.9, "Kafka retention is seven days.")
    start.wait(30)  # both interpreters are up: from here on they contend
    for i in range(count):
        record_short_term_recalls(ws, query=f"worker {worker} query {i}", results=[hit], now=NOW)


@pytest.mark.slow
def test_concurrent_writers_in_two_processes_never_lose_an_update(
    workspace: Workspace, install: OpenClawInstall
) -> None:
    note(workspace, "memory/2026-04-14.md", ["Kafka retention is seven days."])
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no lock state shared with this one
    start = context.Barrier(2)
    workers = [context.Process(target=_record_many, args=(str(workspace.root), n, 16, start)) for n in range(2)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
        assert process.exitcode == 0
    ((_, value),) = entries_in(install.db, str(workspace.root), oc.RECALL_NAMESPACE)
    assert value["recallCount"] == 32 and len(value["queryHashes"]) == 32
    assert lock_rows(install.db) == []
