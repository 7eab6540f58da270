"""The night replay: the verdict path's real steps run night after night on the as-of views of a history.

Each night ``t`` writes the view at ``t`` into one scratch workspace under a temp folder (never the user's), then runs
review, light, REM and deep sleep (with aging) at ``now`` = ``t`` at the workspace's schedule time. The scratch
workspace lives through the whole replay, as a real workspace lives through its nights: deep sleep's archive and
history carry over, and each step is incremental wherever the verdict path itself is.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from pathlib import Path

from dreaming.backtest._history import History
from dreaming.config import DreamingConfig
from dreaming.memory import InputReport, Workspace, active_insights, atomic_write_text
from dreaming.memory.verdicts import (
    VERDICT_KINDS,
    deep_sleep_verdicts,
    light_sleep_verdicts,
    rem_sleep_verdicts,
    review_verdicts,
)
from dreaming.memory.workspace import MEMORY_SKELETON

__all__ = ["ActiveInsight", "Night", "night_time", "replay_nights"]

_PLAIN_TIME = re.compile(r"(\d{1,2}) (\d{1,2}) \* \* \*")


@dataclass(frozen=True, kw_only=True, slots=True)
class ActiveInsight:
    """A verdict insight active after a night's deep sleep: the bucket it speaks for and its figures."""

    id: str
    kind: str
    """``caution`` or ``reliable``."""
    asset: str
    verdict: str
    regime: str
    window: str
    score: float
    n: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Night:
    """One replayed night: its date, the time it ran at, and the insights active after it."""

    date: date
    now: datetime
    insights: tuple[ActiveInsight, ...]
    """Sorted by id."""


NightHook = Callable[[Night, Workspace], None]
"""Called after each night with the scratch workspace as that night left it (for tests: read, never write)."""


def night_time(t: date, config: DreamingConfig) -> datetime:
    """Return when night ``t`` runs: the daily time of ``[schedule] cron`` in the workspace's timezone, else 00:00 UTC.

    A cron of the plain daily form ``M H * * *`` gives the time; any other form (several runs a day, weekdays only)
    has no one time of day, and the night runs at midnight UTC.
    """
    found = _PLAIN_TIME.fullmatch(" ".join(config.schedule.cron.split()))
    if found is not None:
        minute, hour = int(found[1]), int(found[2])
        if minute < 60 and hour < 24:
            return datetime.combine(t, time(hour, minute), tzinfo=config.tz)
    return datetime.combine(t, time(0, 0), tzinfo=UTC)


def replay_nights(
    history: History,
    nights: Iterable[date],
    config: DreamingConfig,
    *,
    scratch_dir: Path | None = None,
    on_night: NightHook | None = None,
) -> Iterator[Night]:
    """Run the deterministic night on the view at each of ``nights`` (in order); yield what each left active.

    The scratch workspace is made under ``scratch_dir`` (default: the system's temp folder) and removed at the end.
    What the steps report about the views is not kept: the history reported its bad input once when it was read.
    """
    with tempfile.TemporaryDirectory(prefix="dreaming-backtest-", dir=scratch_dir) as folder:
        scratch = Workspace.at(folder)
        scratch.state_dir.mkdir(parents=True)
        scratch.prices_dir.mkdir()
        atomic_write_text(scratch.memory_md, MEMORY_SKELETON)
        for t in nights:
            now = night_time(t, config)
            history.write_view(scratch, t)
            report = InputReport(keep=0)
            review_verdicts(scratch, now=now, report=report)
            light_sleep_verdicts(scratch, now=now, report=report)
            rem_sleep_verdicts(scratch, config.verdicts, now=now, report=report)
            deep_sleep_verdicts(scratch, config.verdicts, now=now, report=report)
            night = Night(date=t, now=now, insights=_active(scratch))
            if on_night is not None:
                on_night(night, scratch)
            yield night


def _active(scratch: Workspace) -> tuple[ActiveInsight, ...]:
    out = []
    for insight in active_insights(scratch):
        front = insight.front
        if insight.kind not in VERDICT_KINDS:
            continue
        score, n = front.get("score"), front.get("n")
        out.append(
            ActiveInsight(
                id=insight.id,
                kind=insight.kind,
                asset=str(front.get("asset")),
                verdict=str(front.get("verdict")),
                regime=str(front.get("regime")),
                window=str(front.get("window")),
                score=float(score) if isinstance(score, int | float) else 0.0,
                n=n if isinstance(n, int) else 0,
            )
        )
    return tuple(sorted(out, key=lambda i: i.id))
