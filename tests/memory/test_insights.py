from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dreaming.config import VerdictsConfig
from dreaming.memory import Workspace
from dreaming.memory.insights import (
    INDEX_END,
    INDEX_START,
    Scalar,
    active_insights,
    insight_paths,
    load_prior_insights,
    parse_scalar,
    read_insight,
    render_insight,
    write_insight,
    write_memory_index,
)
from dreaming.memory.verdicts import deep_sleep_verdicts
from tests.memory.verdicts._helpers import candidate, write_candidates


def _research(ws: Workspace, slug: str, confirmed: str | None = None) -> None:
    front: dict[str, str | float | None] = {
        "id": slug,
        "kind": "research",
        "title": f"Finding {slug}",
        "confidence": 0.9,
    }
    if confirmed:
        front["last_confirmed"] = confirmed
    write_insight(ws.insights_dir / f"{slug}.md", front, "# ignored heading\nThe finding.\n")


def test_no_insights_and_no_memory_file_creates_nothing(workspace: Workspace) -> None:
    assert not write_memory_index(workspace)
    assert not workspace.memory_md.exists()


def test_missing_memory_file_is_created_with_heading(workspace: Workspace) -> None:
    _research(workspace, "research-a")
    assert write_memory_index(workspace)
    assert workspace.memory_md.read_text() == (
        "# Long-Term Memory\n\n"
        f"{INDEX_START}\n## Insights\n\n"
        "- [Finding research-a](memory/insights/research-a.md) — confidence 0.9\n"
        f"{INDEX_END}\n"
    )
    assert not write_memory_index(workspace)


def test_only_the_marked_block_changes(workspace: Workspace) -> None:
    user_top = (
        "# Memory\r\n\r\nnotes with trailing spaces   \n\xe9\xff raw bytes\n\n"
        "## Promoted From Short-Term Memory (2026-04-14)\n- x\n"
    )
    user_bottom = "\n## Promoted From Short-Term Memory (2026-04-15)\n- y"
    raw = user_top.encode("latin-1") + f"{INDEX_START}\nold\n{INDEX_END}".encode() + user_bottom.encode()
    workspace.memory_md.write_bytes(raw)
    _research(workspace, "research-b")
    assert write_memory_index(workspace)
    data = workspace.memory_md.read_bytes()
    assert data.startswith(user_top.encode("latin-1") + INDEX_START.encode())
    assert data.endswith(INDEX_END.encode() + user_bottom.encode())
    assert b"research-b.md" in data and b"\nold\n" not in data
    assert not write_memory_index(workspace)


def test_scalars_round_trip(workspace: Workspace) -> None:
    front: dict[str, Scalar] = {
        "a": "NDQ.AX",
        "b": "123",
        "c": "true",
        "d": 'He said: "x" # y',
        "e": 1.5,
        "f": 3,
        "g": None,
        "h": False,
    }
    text = render_insight(front, "body\n")
    assert 'b: "123"\n' in text and "a: NDQ.AX\n" in text
    path = workspace.root / "x.md"
    path.write_text(text)
    insight = read_insight(path)
    assert insight is not None and dict(insight.front) == front and insight.body == "body\n"
    assert parse_scalar("'it''s'") == "it's"


def test_prior_insights_newest_first_and_filtered(workspace: Workspace, now: datetime) -> None:
    write_candidates(workspace, [candidate(asset="A"), candidate(asset="B", regime="uptrend")])
    deep_sleep_verdicts(workspace, VerdictsConfig(), now=now)
    _research(workspace, "research-old", confirmed="2026-01-01")
    _research(workspace, "research-new", confirmed="2026-04-20")
    prior = load_prior_insights(workspace)
    assert [i.id for i in prior.insights] == [
        "research-new",
        "caution-hold-a-downtrend-30d",
        "caution-hold-b-uptrend-30d",
        "research-old",
    ]
    assert prior.text.count("\n### ") + prior.text.startswith("### ") == 4
    only = load_prior_insights(workspace, asset="a", regime="DOWNTREND")
    assert [i.id for i in only.insights] == ["caution-hold-a-downtrend-30d"]
    assert (
        "### ⚠️ Admonition: HOLD on A in a downtrend (30d) frequently misses opportunities (score 1.0, n=11;"
        in only.text
    )
    assert "> Action suggestion:" in only.text
    assert load_prior_insights(workspace, asset="ZZZ").text == ""


def test_prior_insight_bodies_sit_one_level_under_their_insight_heading(workspace: Workspace, now: datetime) -> None:
    write_candidates(workspace, [candidate(asset="A")])
    deep_sleep_verdicts(workspace, VerdictsConfig(), now=now)
    body = "# Title\n\n## Finding\n\nx\n\n### Detail\n\n```python\n# a comment, not a heading\n```\n"
    write_insight(workspace.insights_dir / "research-x.md", {"kind": "research", "title": "X", "confidence": 0.9}, body)
    text = load_prior_insights(workspace).text
    levels = [len(line) - len(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")]
    assert levels.count(3) == 2 and set(levels) == {3, 4, 5, 1}  # the 1 is the comment inside the code block
    assert "#### Statistics\n" in text and "#### Interpretation\n" in text and "\n## " not in text
    assert (
        "### X (confidence 0.9)\n#### Finding\n\nx\n\n##### Detail\n\n```python\n# a comment, not a heading\n```"
        in text
    )
    assert "# Title" not in text


def test_an_insight_file_linked_outside_the_workspace_is_never_read(workspace: Workspace, tmp_path: Path) -> None:
    """Memory search leaves such a link out; so do the prompt, MEMORY.md's index and the viewer (insight_paths)."""
    _research(workspace, "research-kept")
    outside = tmp_path / "outside" / "research-leak.md"
    outside.parent.mkdir()
    write_insight(outside, {"id": "research-leak", "kind": "research", "title": "LEAKED"}, "TOP SECRET\n")
    (workspace.insights_dir / "research-leak.md").symlink_to(outside)
    assert [i.id for i in active_insights(workspace)] == ["research-kept"]
    assert [p.name for p in insight_paths(workspace, workspace.insights_dir)] == ["research-kept.md"]
    assert "TOP SECRET" not in load_prior_insights(workspace).text
    write_memory_index(workspace)
    assert "LEAKED" not in workspace.memory_md.read_text()
