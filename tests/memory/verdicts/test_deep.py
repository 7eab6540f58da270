from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from dreaming.config import VerdictsConfig
from dreaming.memory import Workspace
from dreaming.memory.insights import read_insight, write_insight
from dreaming.memory.verdicts import deep_sleep_verdicts, gate_passing

from ._helpers import candidate, snapshot, write_candidates

CFG = VerdictsConfig()
CAUTION_ID = "caution-hold-ndq-ax-downtrend-30d"


def test_promote_writes_seed_insight_and_index(workspace: Workspace, now: datetime) -> None:
    workspace.memory_md.write_text("# My memory\n\nUser text  \n")
    write_candidates(workspace, [candidate(asset="NDQ.AX"), candidate(asset="B", score=0.79)])
    summary = deep_sleep_verdicts(workspace, CFG, now=now)
    assert summary.promoted == (CAUTION_ID,) and summary.index_changed
    text = (workspace.insights_dir / f"{CAUTION_ID}.md").read_text()
    assert text.startswith(
        "---\nid: caution-hold-ndq-ax-downtrend-30d\nkind: caution\nasset: NDQ.AX\nverdict: HOLD\nregime: downtrend\n"
        "window: 30d\nscore: 1.0\nn: 11\nhits: 0\nhit_rate: 0.0\navg_change_pct: 12.02\nmissed_up_rate: 1.0\n"
        "avoided_down_rate: 0.0\nlast_seen: 2026-04-01\nfirst_promoted: 2026-04-15\nlast_confirmed: 2026-04-15\n"
        "status: active\n---\n# ⚠️ Admonition: HOLD on NDQ.AX in a downtrend (30d) frequently misses opportunities\n"
    )
    assert (
        "## Statistics\n- Sample Count: 11\n- 30-day Hit Rate: 0.0%\n- Average 30-day Actual Change: +12.02%\n" in text
    )
    assert "- Missed Opportunity Rate (HOLD but market rose): 100.0% / Avoided Decline Rate: 0.0%" in text
    assert "## Interpretation\n" in text and "\n> Action suggestion: In this regime, the tendency to HOLD" in text
    memory = workspace.memory_md.read_text()
    assert memory.startswith("# My memory\n\nUser text  \n\n<!-- dreaming:insights:start -->\n")
    assert f"](memory/insights/{CAUTION_ID}.md) — score 1.0, n=11\n<!-- dreaming:insights:end -->\n" in memory


def test_second_run_changes_no_byte(workspace: Workspace, now: datetime) -> None:
    write_candidates(workspace, [candidate(), candidate(verdict="BUY", kind="reliable", hits=10, score=0.93)])
    deep_sleep_verdicts(workspace, CFG, now=now)
    before = snapshot(workspace.root)
    summary = deep_sleep_verdicts(workspace, CFG, now=now)
    assert not summary.index_changed and summary.updated == tuple(sorted(summary.updated)) and summary.promoted == ()
    assert snapshot(workspace.root) == before


def test_update_in_place_keeps_first_promoted(workspace: Workspace, now: datetime) -> None:
    write_candidates(workspace, [candidate(n=11)])
    deep_sleep_verdicts(workspace, CFG, now=now - timedelta(days=5))
    write_candidates(workspace, [candidate(n=12, last_seen="2026-04-10")])
    summary = deep_sleep_verdicts(workspace, CFG, now=now)
    assert summary.updated == ("caution-hold-ndq-downtrend-30d",)
    insight = read_insight(workspace.insights_dir / "caution-hold-ndq-downtrend-30d.md")
    assert insight is not None
    assert (insight.front["first_promoted"], insight.front["last_confirmed"], insight.front["n"]) == (
        "2026-04-10",
        "2026-04-15",
        12,
    )


def test_gate_failure_retires_to_archive_never_deletes(workspace: Workspace, now: datetime) -> None:
    write_candidates(workspace, [candidate()])
    deep_sleep_verdicts(workspace, CFG, now=now)
    write_candidates(workspace, [candidate(n=2, score=0.76)])
    summary = deep_sleep_verdicts(workspace, CFG, now=now)
    assert summary.retired == (("caution-hold-ndq-downtrend-30d", "failed gate: score 0.76 < 0.8, n 2 < 3"),)
    assert not (workspace.insights_dir / "caution-hold-ndq-downtrend-30d.md").exists()
    archived = read_insight(workspace.archive_dir / "caution-hold-ndq-downtrend-30d.md")
    assert archived is not None
    assert archived.front["status"] == "retired" and archived.front["retired"] == "2026-04-15"
    assert archived.front["retired_reason"] == "failed gate: score 0.76 < 0.8, n 2 < 3"
    assert "_No active insights._" in workspace.memory_md.read_text()


def test_aging_retires_then_recurrence_restores_with_history(workspace: Workspace, now: datetime) -> None:
    write_candidates(workspace, [candidate(last_seen="2026-01-10")])  # 95 days before now
    deep_sleep_verdicts(workspace, CFG, now=now - timedelta(days=10))  # 85 days then: fresh, promoted
    summary = deep_sleep_verdicts(workspace, CFG, now=now)
    reason = "stale: last seen 2026-01-10, more than 90 days before 2026-04-15"
    assert summary.stale == ("caution-hold-ndq-downtrend-30d",)
    assert summary.retired == (("caution-hold-ndq-downtrend-30d", reason),)
    assert gate_passing(workspace, CFG, now=now) == []
    # Exactly 90 days is not stale.
    write_candidates(workspace, [candidate(last_seen="2026-01-15")])
    assert len(gate_passing(workspace, CFG, now=now)) == 1
    # The situation recurs: promoted again from the archive, keeping its history.
    write_candidates(workspace, [candidate(last_seen="2026-04-14")])
    later = now + timedelta(days=1)
    summary = deep_sleep_verdicts(workspace, CFG, now=later)
    assert summary.restored == ("caution-hold-ndq-downtrend-30d",)
    insight = read_insight(workspace.insights_dir / "caution-hold-ndq-downtrend-30d.md")
    assert insight is not None
    assert insight.front["first_promoted"] == "2026-04-05"
    assert insight.front["last_confirmed"] == "2026-04-16"
    assert (insight.front["last_retired"], insight.front["last_retired_reason"]) == ("2026-04-15", reason)
    assert not (workspace.archive_dir / "caution-hold-ndq-downtrend-30d.md").exists()


def test_veto_blocks_and_retires(workspace: Workspace, now: datetime) -> None:
    write_candidates(workspace, [candidate()])
    assert [c.id for c in gate_passing(workspace, CFG, now=now)] == ["caution-hold-ndq-downtrend-30d"]
    summary = deep_sleep_verdicts(workspace, CFG, now=now, vetoes={"caution-hold-ndq-downtrend-30d": "spurious"})
    assert summary.vetoed == ("caution-hold-ndq-downtrend-30d",) and summary.promoted == ()
    deep_sleep_verdicts(workspace, CFG, now=now)
    summary = deep_sleep_verdicts(workspace, CFG, now=now, vetoes={"caution-hold-ndq-downtrend-30d": "spurious"})
    assert summary.retired == (("caution-hold-ndq-downtrend-30d", "vetoed: spurious"),)


def test_research_insights_are_never_retired_by_the_verdict_path(workspace: Workspace, now: datetime) -> None:
    path = workspace.insights_dir / "research-why-x.md"
    write_insight(path, {"id": "research-why-x", "kind": "research", "title": "Why: X?", "confidence": 0.85}, "Body\n")
    write_candidates(workspace, [])
    deep_sleep_verdicts(workspace, CFG, now=now)
    assert path.exists()
    assert "- [Why: X?](memory/insights/research-why-x.md) — confidence 0.85" in workspace.memory_md.read_text()


@pytest.mark.parametrize("crash_after", [0, 1, 2, 3])  # 4 writes: A updated, D new, B and C retired
def test_crash_midway_then_rerun_equals_uninterrupted(
    workspace: Workspace,
    now: datetime,
    monkeypatch: pytest.MonkeyPatch,
    crash_after: int,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from dreaming.memory.verdicts import _deep

    def setup(ws: Workspace) -> None:
        write_candidates(ws, [candidate(asset=a) for a in ("A", "B", "C")])
        deep_sleep_verdicts(ws, CFG, now=now - timedelta(days=1))
        write_candidates(ws, [candidate(asset="A"), candidate(asset="B", score=0.5), candidate(asset="D")])

    reference = Workspace.at(tmp_path_factory.mktemp("ref"))
    setup(reference)
    deep_sleep_verdicts(reference, CFG, now=now)
    setup(workspace)
    real = _deep.write_insight  # type: ignore[attr-defined]
    calls = {"n": 0}

    def crashing(*args: object, **kwargs: object) -> bool:
        calls["n"] += 1
        if calls["n"] > crash_after:
            raise KeyboardInterrupt("killed")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_deep, "write_insight", crashing)
    with pytest.raises(KeyboardInterrupt):
        deep_sleep_verdicts(workspace, CFG, now=now)
    monkeypatch.setattr(_deep, "write_insight", real)
    deep_sleep_verdicts(workspace, CFG, now=now)
    assert snapshot(workspace.root) == snapshot(reference.root)
