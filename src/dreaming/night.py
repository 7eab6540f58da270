"""One night: take the lock, resume a crashed run if there is one, build the context, invoke the graph, clean up.

Used by the schedule (``dreaming run``), the chat-triggered "dream now" (``dreaming now``) and the eval harness.
:func:`night_context` is the only place where configuration and environment become live objects (the budgeted model,
the research tools, progress reporting); the graph receives them through its runtime context.

LangGraph, the graph, the gateway and the research tools are imported by the functions that run a night, so that
:func:`workspace_status` (``dreaming status``) loads none of them.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dreaming.config import DreamingConfig, load_config, next_run
from dreaming.errors import ConfigError, LockBusyError
from dreaming.graph.state import jsonable
from dreaming.llm.report import read_budget_status
from dreaming.memory import (
    ConsolidationLock,
    Workspace,
    atomic_write_json,
    check_confined,
    move_aside,
    night_entry,
    read_state,
    record_event,
    render_diary_entry,
    set_aside_unreadable,
    sweep_orphan_temps,
)
from dreaming.memory.gaps import list_gaps

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from dreaming.graph import DreamContext, ProgressFn
    from dreaming.llm import LLMGateway
    from dreaming.tools.sources import ResearchTools

__all__ = [
    "NightLock",
    "NightReport",
    "RunOutcome",
    "SaverFactory",
    "adream",
    "budget_exhausted_before_any_work",
    "busy_answer",
    "codebase_roots",
    "dream",
    "night_context",
    "research_tools",
    "run_night",
    "utc_now",
    "workspace_status",
]

CURRENT_RUN_VERSION = 1
SET_ASIDE_WHEN_UNREADABLE = (
    "candidates.json",
    "knowledge-gaps.json",
    "short-term-recall.json",
    "phase-signals.json",
    "daily-ingestion.json",
)
"""State files checked at the start of a night. The budget ledger is not among them: its own reader moves a corrupt
ledger aside and starts the run with the breaker tripped (fail closed), which a blind move would defeat."""


@dataclass(frozen=True, kw_only=True)
class RunOutcome:
    """What one invocation did."""

    run_id: str
    """The run that finished (the new one, when a crashed one was resumed first)."""
    state: dict[str, Any]
    """The graph's final state."""
    resumed: str | None = None
    """The id of a crashed run that was finished first, if any."""
    took_over_lock: str | None = None
    """The stale lock that was taken over, if any."""
    notes: list[str] = field(default_factory=list)
    """Anything the operator should know (state moved aside, ...)."""


class NightLock(Protocol):
    """Keep a second night off a workspace.

    The file :class:`~dreaming.memory.ConsolidationLock` by default; a Postgres advisory lock in the distributed fleet
    (``dreaming.fleet.postgres``), where ``flock`` on a shared filesystem cannot be trusted.
    """

    took_over: str | None
    """The stale holder that was taken over, if any."""

    def acquire(self) -> None:
        """Take the lock (blocking: :func:`run_night` calls it off the event loop); raise ``LockBusyError`` if held."""

    def release(self) -> None:
        """Release the lock."""


SaverFactory = Callable[[], AbstractAsyncContextManager["BaseCheckpointSaver[Any]"]]
"""Opens the night's LangGraph checkpointer (the workspace's SQLite file by default)."""


def _current_run_path(ws: Workspace) -> Path:
    # Names the run in progress, so that the next run can resume it from its checkpoint after a crash.
    return ws.state_dir / "current-run.json"


def busy_answer(ws: Workspace, exc: LockBusyError) -> str:
    """Say which run holds ``ws``: ``busy: run <id> is dreaming``, the lock's holder when no run id is on disk.

    Reads ``current-run.json`` and nothing else: the answer must not touch the running night's files.
    """
    try:
        run_id = json.loads(_current_run_path(ws).read_text(encoding="utf-8"))["run_id"]
    except (OSError, ValueError, KeyError, TypeError):
        run_id = None
    return f"busy: run {run_id or exc.holder} is dreaming"


def _finish(ws: Workspace) -> None:
    # The run is over: forget it and what it planned, so the next run starts fresh.
    ws.deep_plan.unlink(missing_ok=True)
    _current_run_path(ws).unlink(missing_ok=True)


async def _invoke(saver: BaseCheckpointSaver[Any], context: DreamContext) -> dict[str, Any]:
    """Run the night's graph on its own thread, resuming from the last checkpoint; release its tools after."""
    try:
        return await _invoke_graph(saver, context)
    finally:
        if context.research is not None:
            context.research.close()


async def _invoke_graph(saver: BaseCheckpointSaver[Any], context: DreamContext) -> dict[str, Any]:
    from langgraph.pregel import Pregel

    from dreaming.graph import build_dream_graph

    graph: Pregel[Any, Any, Any, Any] = build_dream_graph().compile(checkpointer=saver)
    config: Any = {
        "configurable": {"thread_id": context.run_id},
        "recursion_limit": context.config.budget.recursion_limit,
    }
    snapshot = await graph.aget_state(config)
    finished = "diary" in (snapshot.values or {}).get("done", [])
    if snapshot.values and not snapshot.next and finished:  # it reached END; only the clean-up was interrupted
        result: dict[str, Any] = dict(snapshot.values)
    else:
        if snapshot.values and not snapshot.next:
            # A checkpoint with nothing left to run that never reached END (a write failed under it): it cannot be
            # resumed, so the night runs again from the start under the same id (every node is safe to rerun).
            await saver.adelete_thread(context.run_id)
            snapshot = await graph.aget_state(config)
        start = None if snapshot.values else {"run_id": context.run_id, "now": context.now.isoformat()}
        result = await graph.ainvoke(start, config, context=context, durability="sync")
    await saver.adelete_thread(context.run_id)
    return result


def _checkpoints_usable(ws: Workspace, now: datetime, notes: list[str]) -> None:
    """Move an unreadable checkpoint database aside (never silently overwritten), so the night can still run."""
    path = ws.checkpoints
    if not path.exists():
        return
    try:
        with contextlib.closing(sqlite3.connect(path)) as conn:
            ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    except sqlite3.DatabaseError:
        ok = False
    if not ok:
        moved = move_aside(path, now)
        record_event(ws.events, "state.moved_aside", now, file=path.name, moved_to=moved.name)
        notes.append(f"unreadable checkpoints.sqlite moved aside to {moved.name}; a crashed run cannot be resumed")


async def _acquire_off_loop(lock: NightLock) -> None:
    """Take ``lock`` in a worker thread; a caller cancelled while waiting releases it once the thread gets it."""
    import asyncio

    taking = asyncio.ensure_future(asyncio.to_thread(lock.acquire))
    try:
        await asyncio.shield(taking)
    except asyncio.CancelledError:
        taking.add_done_callback(lambda done: None if done.cancelled() or done.exception() else lock.release())
        raise


def _sqlite_checkpointer(ws: Workspace) -> SaverFactory:
    """Return the factory of the workspace's SQLite checkpointer (announcing its writes to the write seam)."""

    @contextlib.asynccontextmanager
    async def open_saver() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        from dreaming.graph.build import Checkpointer

        async with Checkpointer.from_conn_string(str(ws.checkpoints)) as saver:
            assert isinstance(saver, Checkpointer)
            saver.path = ws.checkpoints
            yield saver

    return open_saver


async def run_night(
    ws: Workspace,
    config: DreamingConfig,
    *,
    now: datetime,
    trigger: str = "run",
    make_context: Callable[[DreamContext], DreamContext] = lambda c: c,
    wait: bool = True,
    lock: NightLock | None = None,
    checkpointer: SaverFactory | None = None,
    run_id: str | None = None,
) -> RunOutcome:
    """Dream one night on ``ws`` under the consolidation lock (the low-level entry; see :func:`adream`).

    The lock is awaited in a worker thread, so the caller's event loop keeps serving while another run holds it.

    Args:
        ws: the workspace.
        config: its configuration.
        now: the night's 'now'.
        trigger: ``run``, ``now`` or ``eval`` (shown in the diary).
        make_context: adds models, tools and progress reporting to the base context (the entry point's job).
        wait: wait up to ``config.lock_timeout_seconds`` for a held lock; False gives up at once.
        lock: the lock to take instead of the workspace's lock file (the distributed fleet's advisory lock).
        checkpointer: opens the checkpointer instead of the workspace's ``checkpoints.sqlite`` (the fleet's Postgres).
        run_id: the new run's id instead of a random one (the fleet's, derived from the workspace and the night slot,
            so a retried night resumes under the same id and writes the same bytes).

    Raises:
        LockBusyError: another run holds the lock (past ``config.lock_timeout_seconds`` when waiting).
        OutsideWorkspaceError: a folder or file the night writes is a symbolic link (checked before the lock, and
            again by every write); nothing is written.
    """
    from dreaming.graph import DreamContext
    from dreaming.memory.recall import check_recall_store_confined

    check_confined(ws)
    check_recall_store_confined(ws)  # OpenClaw's database, when the recall store is there
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    if lock is None:
        lock = ConsolidationLock(ws.lock_file, timeout_s=config.lock_timeout_seconds if wait else 0.0)
    await _acquire_off_loop(lock)
    try:
        if lock.took_over:
            record_event(ws.events, "lock.stale_taken_over", now, holder=lock.took_over)
            notes.append(f"took over a stale lock (holder {lock.took_over})")
        orphans = sweep_orphan_temps(
            [ws.root, ws.state_dir, ws.insights_dir, ws.archive_dir, *ws.reports_dir.glob("*")]
        )
        if orphans:
            notes.append(f"removed {len(orphans)} temp files left by an interrupted write")
        pending = read_state(_current_run_path(ws), versions=[CURRENT_RUN_VERSION], now=now)
        if pending.moved_aside:
            notes.append(f"unreadable current-run.json moved aside to {pending.moved_aside.name}")
        if checkpointer is None:
            _checkpoints_usable(ws, now, notes)
        for path, moved, problem in set_aside_unreadable(
            [ws.state_dir / name for name in SET_ASIDE_WHEN_UNREADABLE], now
        ):
            record_event(ws.events, "state.moved_aside", now, file=path.name, moved_to=moved.name, problem=problem)
            notes.append(f"unreadable {path.name} moved aside to {moved.name} ({problem})")
        resumed: str | None = None
        async with (checkpointer or _sqlite_checkpointer(ws))() as saver:
            if pending.data is not None and {"run_id", "now"} <= pending.data.keys():
                resumed = str(pending.data["run_id"])
                then = datetime.fromisoformat(str(pending.data["now"]))
                base = DreamContext(
                    workspace=ws,
                    config=config,
                    now=then,
                    run_id=resumed,
                    trigger=str(pending.data.get("trigger", trigger)),
                )
                record_event(ws.events, "run.resumed", now, run_id=resumed)
                notes.append(f"resumed the interrupted run {resumed}")
                state = await _invoke(saver, make_context(base))
                _finish(ws)
                if then == now:
                    return RunOutcome(
                        run_id=resumed, state=state, resumed=resumed, took_over_lock=lock.took_over, notes=notes
                    )
            run_id = run_id or f"{now.strftime('%Y%m%dT%H%M%SZ')}-{trigger}-{secrets.token_hex(3)}"
            atomic_write_json(
                _current_run_path(ws),
                {"version": CURRENT_RUN_VERSION, "run_id": run_id, "now": now.isoformat(), "trigger": trigger},
            )
            record_event(ws.events, "run.started", now, run_id=run_id, trigger=trigger)
            base = DreamContext(workspace=ws, config=config, now=now, run_id=run_id, trigger=trigger)
            state = await _invoke(saver, make_context(base))
            _finish(ws)
    finally:
        lock.release()
    return RunOutcome(run_id=run_id, state=state, resumed=resumed, took_over_lock=lock.took_over, notes=notes)


def budget_exhausted_before_any_work(state: dict[str, Any]) -> bool:
    """Return True when model work was wanted but the budget refused all of it (exit code 4).

    The deterministic phases still ran and the diary entry is written; the code tells a scheduler that the LLM
    part of the night could not happen.
    """
    budget = (state.get("summaries") or {}).get("budget") or {}
    refused = any(h.get("reason") == "budget_exceeded" for h in state.get("halts") or [])
    refused = refused or bool((budget.get("refusals") or {}).get("budget_exceeded"))
    return bool(budget.get("available")) and refused and not budget.get("calls_made") and not budget.get("cache_hits")


def utc_now() -> datetime:
    """Return the real clock, in UTC (the budget's window runs on it)."""
    return datetime.now(UTC)


def codebase_roots(ws: Workspace, config: DreamingConfig) -> list[Path]:
    """Return ``[autoresearch] codebase_roots`` as absolute folders (relative ones are under the workspace root)."""
    roots = []
    for raw in config.autoresearch.codebase_roots:
        path = Path(raw).expanduser()
        roots.append((path if path.is_absolute() else ws.root / path).resolve())
    return roots


def research_tools(ws: Workspace, config: DreamingConfig, *, env: Mapping[str, str]) -> ResearchTools | None:
    """Return the night's research tools, or None when ``[autoresearch]`` is off.

    ripgrep over ``codebase_roots`` (resolved against the workspace root), the workspace's memory search, and Tavily
    only when ``TAVILY_API_KEY`` is set (without it nothing ever calls out); a source not listed in
    ``[autoresearch] sources`` is left out.
    """
    cfg = config.autoresearch
    if not cfg.enabled:
        return None
    from dreaming.tools.codebase import RipgrepSearch
    from dreaming.tools.memory_search import WorkspaceMemorySearch
    from dreaming.tools.sources import ResearchTools
    from dreaming.tools.web import web_search_from_env

    codebase: RipgrepSearch | None = None
    if "codebase" in cfg.sources:
        codebase = RipgrepSearch(codebase_roots(ws, config), base=ws.root)
    memory = WorkspaceMemorySearch(ws, semantic=config.search.semantic) if "memory" in cfg.sources else None
    web = web_search_from_env(env) if "web" in cfg.sources else None
    return ResearchTools(codebase=codebase, memory=memory, web=web, read_line=codebase.read_line if codebase else None)


def night_context(
    *,
    env: Mapping[str, str],
    progress: ProgressFn | None = None,
    clock: Callable[[], datetime] = utc_now,
    gateway_factory: Callable[[DreamContext], LLMGateway] | None = None,
) -> Callable[[DreamContext], DreamContext]:
    """Return the function that completes a base context with what the environment configures.

    The budget's sliding window runs on the real ``clock``, never on the night's (possibly replayed) ``now``: money
    is spent in real time. Without ``progress`` the night reports nothing. ``gateway_factory`` replaces
    :func:`~dreaming.llm.build_gateway` (tests hand in a gateway over a fake chat model).
    """

    def complete(base: DreamContext) -> DreamContext:
        if gateway_factory is not None:
            gateway = gateway_factory(base)
        else:
            from dreaming.llm import build_gateway

            gateway = build_gateway(base.config, base.workspace, env=env, now=clock)
        return replace(
            base,
            progress=progress or base.progress,
            gateway=gateway,
            research=research_tools(base.workspace, base.config, env=env),
        )

    return complete


@dataclass(frozen=True, kw_only=True)
class NightReport:
    """What one night did: the data of ``dreaming run --json`` (:meth:`to_json`), typed."""

    run_id: str
    """The run that finished (the new one, when a crashed one was resumed first)."""
    trigger: str
    """``run``, ``now`` or ``eval``."""
    resumed: str | None
    """The id of a crashed run that was finished first, if any."""
    notes: list[str]
    """Anything the operator should know (state moved aside, a stale lock taken over, ...)."""
    done: list[str]
    """The nodes that ran, in order."""
    halts: list[dict[str, str]]
    """Work stopped cleanly: ``{"node", "reason"}``."""
    bad_input_count: int
    """Input lines skipped."""
    bad_input: list[str]
    """Each skipped line, ``file:line: reason``."""
    summaries: dict[str, Any]
    """Per-phase summaries (verdicts, recall, research, budget)."""
    files: dict[str, str]
    """Where MEMORY.md, DREAMS.md and the insights are."""
    state: dict[str, Any] = field(repr=False, compare=False)
    """The graph's final state (what the diary entry is built from)."""

    @classmethod
    def of(cls, outcome: RunOutcome, ws: Workspace, *, trigger: str) -> NightReport:
        """Return the report of ``outcome``, a night run on ``ws``."""
        state = outcome.state
        return cls(
            run_id=outcome.run_id, trigger=trigger, resumed=outcome.resumed, notes=list(outcome.notes),
            done=list(state.get("done", [])), halts=list(state.get("halts", [])),
            bad_input_count=int(state.get("bad_input_count", 0)), bad_input=list(state.get("bad_input", [])),
            summaries=dict(state.get("summaries", {})),
            files={"memory": str(ws.memory_md), "diary": str(ws.dreams_md), "insights": str(ws.insights_dir)},
            state=state,
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """Return what ``dreaming run --json`` prints."""
        return {
            "run_id": self.run_id, "resumed": self.resumed, "notes": self.notes, "done": self.done,
            "halts": self.halts, "bad_input_count": self.bad_input_count, "bad_input": self.bad_input,
            "summaries": self.summaries, "files": self.files,
        }  # fmt: skip

    @property
    def diary_entry(self) -> str:
        """Return the night's DREAMS.md entry, as markdown."""
        return render_diary_entry(night_entry(self.state, trigger=self.trigger))


async def adream(
    workspace: Workspace | str | os.PathLike[str],
    *,
    now: datetime | None = None,
    env: Mapping[str, str] | None = None,
    trigger: str = "run",
    progress: ProgressFn | None = None,
    wait: bool = True,
) -> NightReport:
    """Dream one night on ``workspace``, exactly as ``dreaming run`` does, and return its report.

    Args:
        workspace: the workspace folder (or a :class:`~dreaming.memory.Workspace`).
        now: the night's 'now'; the clock by default.
        env: where API keys and model settings are read (``OPENAI_API_KEY``, ``DREAMING_MODEL``,
            ``TAVILY_API_KEY``...); ``os.environ`` by default. Nothing configured: every deterministic phase runs and
            no call goes out.
        trigger: ``run`` (scheduled), ``now`` (on demand) or ``eval``, as the diary shows it.
        progress: ``(node, message)`` reports while the night runs.
        wait: wait for another run's lock (up to ``lock_timeout_seconds``, off the event loop); False raises at once.

    Raises:
        NotAWorkspaceError: the folder is not a workspace (``dreaming init`` makes one).
        ConfigError: dreaming.toml is not valid TOML.
        LockBusyError: another run holds the workspace.
        OutsideWorkspaceError: a file the night writes is a symbolic link leading elsewhere; nothing is written.
    """
    ws = workspace if isinstance(workspace, Workspace) else Workspace.at(Path(workspace))
    ws.require()
    config = load_config(ws.config_file)
    complete = night_context(env=os.environ if env is None else env, progress=progress)
    outcome = await run_night(ws, config, now=now or utc_now(), trigger=trigger, make_context=complete, wait=wait)
    return NightReport.of(outcome, ws, trigger=trigger)


def dream(
    workspace: Workspace | str | os.PathLike[str], *, now: datetime | None = None, env: Mapping[str, str] | None = None,
    trigger: str = "run", progress: ProgressFn | None = None, wait: bool = True,
) -> NightReport:  # fmt: skip
    """Dream one night on ``workspace`` and return its report: :func:`adream` for code without an event loop.

    Called from inside a running event loop, the night runs on a worker thread of its own (use :func:`adream` there).
    """
    import asyncio
    import concurrent.futures

    night = adream(workspace, now=now, env=env, trigger=trigger, progress=progress, wait=wait)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(night)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, night).result()


def _state_files(ws: Workspace) -> dict[str, int]:
    sizes: dict[str, int] = {}
    if ws.state_dir.is_dir():
        for path in sorted(ws.state_dir.iterdir()):
            if path.is_file():
                sizes[path.name] = path.stat().st_size
    return sizes


def _last_run(ws: Workspace) -> dict[str, Any] | None:
    try:
        with ws.events.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 256 * 1024))
            tail = handle.read().decode("utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return None
    for line in reversed(tail):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "run.finished":
            return event
    return None


def workspace_status(ws: Workspace, config: DreamingConfig, now: datetime) -> dict[str, Any]:
    """Return what ``dreaming status`` shows, as JSON-able data (reading it changes nothing on disk)."""
    holder = ConsolidationLock(ws.lock_file).holder() if ws.lock_file.exists() else ""
    budget = read_budget_status(ws, config, now)
    open_gaps = list_gaps(ws, status="open", now=now)
    backlog = list_gaps(ws, status="backlog", now=now)
    try:
        upcoming: str | None = next_run(config.schedule.cron, config.timezone, now).isoformat()
    except ConfigError:
        upcoming = None  # an invalid [schedule] cron: `dreaming schedule` names the error
    return {
        "workspace": str(ws.root),
        "last_run": _last_run(ws),
        "lock": holder or "free",
        "state_files": _state_files(ws),
        "insights": len(list(ws.insights_dir.glob("*.md"))) if ws.insights_dir.is_dir() else 0,
        "budget": {**jsonable(budget), "lines": [line.removeprefix("- ") for line in budget.lines()]},
        "open_gaps": [{"query": g.query, "count": g.count, "type": g.type, "attempts": g.attempts} for g in open_gaps],
        "backlog_gaps": [g.query for g in backlog],
        "next_run": upcoming,
        "schedule": {"cron": config.schedule.cron, "timezone": config.timezone},
    }
