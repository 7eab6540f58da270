"""No look-ahead: changing the future changes nothing the backtest decided before it.

For a night ``t`` there are two claims, each with its own line in time:

- **The insights active at ``t``** (and everything the night at ``t`` wrote in its scratch workspace) depend only on
  what is dated on or before ``t``. The test perturbs everything dated after ``t``: every close is multiplied by a
  random factor, every verdict is flipped to another at random, and an extra verdict is added for every later day.
- **The dreaming committee's decisions of the period ``(t, t + step]``** are themselves dated after ``t``: they are the
  period's verdicts, each read with the regime of its day and the insights of ``t``. So they may depend on what is
  dated up to ``t + step``, and the test perturbs everything dated after ``t + step`` (after the period's last
  decision day) in the same way.

Each is checked against the unperturbed run for several ``t``, and the perturbation is shown to change the later
nights (else the test would prove nothing).
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from dreaming.backtest import Backtest, Night, run_backtest
from dreaming.config import DreamingConfig
from dreaming.memory import Workspace

from ._markets import Market, perturbed_after, trending_market

STEP = 7
MARKET = trending_market(11, phases=3)
FIRST = MARKET.rows[0][0] + timedelta(days=280)
LAST = FIRST + timedelta(days=12 * STEP)
NIGHTS = [FIRST + timedelta(days=k * STEP) for k in (2, 5, 9)]
_VOLATILE = "memory/.dreams/verdict-tallies.json"
"""The tallies hold the inode and mtime of the files they describe: they differ between any two runs."""

Snapshots = dict[date, dict[str, bytes]]


def _run(market: Market, root: Path) -> tuple[Backtest, Snapshots]:
    ws = market.write(root)
    snapshots: Snapshots = {}

    def keep(night: Night, scratch: Workspace) -> None:
        snapshots[night.date] = {
            path.relative_to(scratch.root).as_posix(): path.read_bytes()
            for path in sorted(scratch.root.rglob("*"))
            if path.is_file() and path.relative_to(scratch.root).as_posix() != _VOLATILE
        }

    result = run_backtest(ws, DreamingConfig(), start=FIRST, end=LAST, step_days=STEP, on_night=keep)
    return result, snapshots


@pytest.fixture(scope="module")
def unperturbed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Backtest, Snapshots]:
    return _run(MARKET, tmp_path_factory.mktemp("unperturbed") / "ws")


@pytest.mark.parametrize("night", NIGHTS, ids=[n.isoformat() for n in NIGHTS])
def test_the_insights_active_at_a_night_ignore_everything_after_it(
    tmp_path: Path, unperturbed: tuple[Backtest, Snapshots], night: date
) -> None:
    base, base_files = unperturbed
    result, files = _run(perturbed_after(MARKET, night, seed=night.toordinal()), tmp_path / "ws")
    before = [n for n in base.nights if n.date <= night]
    assert any(n.insights for n in before if n.date == night), "no insight active at the night: nothing to compare"
    assert [n.insights for n in result.nights if n.date <= night] == [n.insights for n in before]
    for day in (n.date for n in before):
        assert files[day] == base_files[day], day  # every file every night up to t wrote, byte for byte
    later = [n.date for n in base.nights if n.date > night]
    assert any(files[day] != base_files[day] for day in later), "the perturbation changed nothing later"


@pytest.mark.parametrize("night", NIGHTS, ids=[n.isoformat() for n in NIGHTS])
def test_the_decisions_after_a_night_ignore_everything_after_their_period(
    tmp_path: Path, unperturbed: tuple[Backtest, Snapshots], night: date
) -> None:
    base, _ = unperturbed
    result, _ = _run(perturbed_after(MARKET, night + timedelta(days=STEP), seed=night.toordinal()), tmp_path / "ws")
    period = [d for d in base.decisions if d.night == night]
    assert period, "no decision in the period: nothing to compare"
    assert [d for d in result.decisions if d.night <= night] == [d for d in base.decisions if d.night <= night]
    assert [d for d in result.decisions if d.night > night] != [d for d in base.decisions if d.night > night]


def test_the_dreaming_committee_acts_in_these_periods(unperturbed: tuple[Backtest, Snapshots]) -> None:
    """Else the decisions compared above would all be the recorded verdicts, and the test would prove less."""
    base, _ = unperturbed
    assert any(d.changed for d in base.decisions if d.night in NIGHTS)
