"""The viewer's pages and app: what each page shows, that untrusted text stays text, GET only, the token."""

from __future__ import annotations

import html as html_lib
import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

import dreaming
from dreaming.cli import app as cli_app
from dreaming.config import load_config
from dreaming.memory import Workspace
from dreaming.view import CONTENT_SECURITY_POLICY, COOKIE, PAGES, Site, create_app, export_site
from tests._workspaces import snapshot
from tests.view.conftest import SCRIPT


def _site(ws: Workspace) -> Site:
    return Site.of(ws, load_config(ws.config_file))


@pytest.fixture(scope="module")
def pages(demo_workspace: Workspace) -> dict[str, str]:
    site = _site(demo_workspace)
    return {name: site.render(name) for name, _ in PAGES}


def _definition_of(line: str) -> str:
    """Return ``path:line`` of the source line that binds a constant, as research cites it."""
    verdicts = Path(dreaming.__file__).parent / "memory" / "verdicts"
    for path in sorted(verdicts.glob("*.py")):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if text == line:
                return f"src/dreaming/memory/verdicts/{path.name}:{number}"
    raise AssertionError(f"{line!r} is bound nowhere")


def test_each_page_shows_what_the_night_did(pages: dict[str, str]) -> None:
    dreams, patterns, memory, research, budget, backtest = (pages[n] for n, _ in PAGES)
    assert "reviewed 4,512" in dreams and "scored 18 buckets, 5 pass" in dreams
    assert "researched 5 gaps" in dreams
    assert "Reliable: HOLD on NASDAQ in a downtrend (7d) is usually right" in patterns
    assert patterns.count("<svg") == 2  # NASDAQ at 7 and 30 days
    assert "score 0.7936 &lt; 0.8" in patterns  # the nearest miss and the gate it missed
    assert "Promoted From Short-Term Memory" in memory and "already promoted" in memory
    assert "K_FLAT = 1.0" in research and _definition_of("K_FLAT = 1.0") in research
    assert 'class="hit"' in research  # the evidence line itself is shown
    assert 'class="cap"' in budget and "not used: no OPENAI_API_KEY in the environment" in budget
    assert "No backtest yet" in backtest  # a night writes no backtest report


def test_untrusted_text_is_escaped_everywhere(pages: dict[str, str]) -> None:
    for name, html in pages.items():
        assert "<script" not in html, name
        assert "onerror=" not in html.replace("onerror=&#34;", "").replace("onerror=&quot;", ""), name
        assert "javascript:" not in html.replace("javascript:alert(1)).", ""), name
    assert "&lt;script&gt;" in pages["memory.html"]  # shown as text, not dropped
    assert "&lt;script&gt;" in pages["research.html"]  # the planted gap's query


def test_no_html_comment_of_the_files_reaches_a_page(pages: dict[str, str]) -> None:
    for html in pages.values():
        assert "dreaming:run:" not in html
        assert "openclaw-memory-promotion" not in html


def test_links_to_insight_files_point_at_their_page(pages: dict[str, str]) -> None:
    assert 'href="patterns.html#insight-reliable-hold-nasdaq-downtrend-7d"' in pages["memory.html"]
    assert 'href="research.html#insight-research-what-is-k-flat"' in pages["memory.html"]
    assert 'id="insight-research-what-is-k-flat"' in pages["research.html"]


def test_rendering_writes_nothing(demo_workspace: Workspace, tmp_path: Path) -> None:
    before = snapshot(demo_workspace.root)
    before_events = demo_workspace.events.read_bytes()
    site = _site(demo_workspace)
    for name, _ in PAGES:
        site.render(name)
    assert snapshot(demo_workspace.root) == before
    assert demo_workspace.events.read_bytes() == before_events


def test_the_app_serves_get_only_with_a_script_free_policy(demo_workspace: Workspace) -> None:
    client = TestClient(create_app(_site(demo_workspace)))
    for name, _ in PAGES:
        response = client.get(f"/{name}")
        assert response.status_code == 200, name
        assert response.headers["content-security-policy"].startswith(CONTENT_SECURITY_POLICY)
        assert "script-src" not in CONTENT_SECURITY_POLICY and "default-src 'none'" in CONTENT_SECURITY_POLICY
    assert client.get("/").text == client.get("/index.html").text.replace("", "")
    assert client.get("/nope.html").status_code == 404
    assert client.get("/../MEMORY.md").status_code == 404
    for method in ("post", "put", "delete", "patch"):
        assert getattr(client, method)("/index.html").status_code == 405


def test_a_token_is_required_when_given(demo_workspace: Workspace) -> None:
    client = TestClient(create_app(_site(demo_workspace), token="s3cret-token"))
    assert client.get("/").status_code == 401
    assert client.get("/?token=wrong").status_code == 401
    assert client.get("/", headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
    first = client.get("/?token=s3cret-token")
    assert first.status_code == 200 and first.cookies.get(COOKIE) == "s3cret-token"
    assert client.get("/budget.html").status_code == 200  # the cookie carries it to the next page


def test_export_writes_every_page(demo_workspace: Workspace, tmp_path: Path) -> None:
    written = export_site(_site(demo_workspace), tmp_path / "site")
    assert sorted(p.name for p in written) == sorted(name for name, _ in PAGES)
    assert [p.name for p in (tmp_path / "site").iterdir() if p.name.startswith(".")] == []
    assert html_lib.unescape((tmp_path / "site" / "index.html").read_text()).count(CONTENT_SECURITY_POLICY) == 1


def test_the_cli_exports_and_refuses_an_export_inside_the_workspace(demo_workspace: Workspace, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli_app, ["view", "--workspace", str(demo_workspace.root), "--export", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "s" / "research.html").is_file()
    inside = demo_workspace.root / "site"
    result = runner.invoke(cli_app, ["view", "--workspace", str(demo_workspace.root), "--export", str(inside)])
    assert result.exit_code == 2 and not inside.exists()


def test_a_workspace_with_nothing_yet_renders(workspace: Workspace) -> None:
    workspace.memory_md.write_text("# Long-Term Memory\n")
    site = _site(workspace)
    for name, _ in PAGES:
        assert "<h1>" in site.render(name)
    assert "No night yet" in site.render("index.html")


def test_hostile_and_broken_state_files_are_reported_not_fatal(workspace: Workspace) -> None:
    state = workspace.state_dir
    state.mkdir(parents=True)
    workspace.memory_md.write_bytes(b"# Memory\n\xff\xfe not UTF-8 \x00\n")
    workspace.events.write_bytes(
        b'{"type": "run.started", "run_id": "r1", "at": "2026-01-01T03:00:00+00:00"}\n\xff\xfe\n[1, 2]\n'
        b'{"type": "run.finished", "run_id": "r1", "at": "2026-01-01T03:00:00+00:00", "digest": "not a dict",'
        b' "halts": ["x", {"node": "research", "reason": "<b>budget</b>"}]}\n'
    )
    workspace.candidates.write_text('{"version": 1, "candidates": [1, "x", {"id": "<i>b</i>", "score": "NaN"}]}')
    workspace.budget_ledger.write_text("{not json")
    workspace.research_log.write_text(
        json.dumps({"gap": SCRIPT, "decision": "keep", "claim": SCRIPT, "locators": ["../../../etc/passwd:1", 7]})
        + "\n"
    )
    (state / "knowledge-gaps.json").write_text("[]")
    site = Site(workspace=workspace, config=load_config(workspace.config_file), read_line=lambda path, line: None)
    html = {name: site.render(name) for name, _ in PAGES}
    assert "events.jsonl:2" in html["index.html"]  # the undecodable line is named
    assert "stopped research: &lt;b&gt;budget&lt;/b&gt;" in html["index.html"]
    assert "dreaming-budget.json is unreadable" in html["budget.html"]
    assert "&lt;i&gt;b&lt;/i&gt;" in html["patterns.html"]
    assert "not readable here now" in html["research.html"]
    for page in html.values():
        assert "<script" not in page and "<b>" not in page and "<i>b" not in page


def test_evidence_is_read_only_inside_the_roots_and_the_workspace(workspace: Workspace, tmp_path: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("TOP SECRET\n")
    (workspace.memory_dir).mkdir()
    (workspace.memory_dir / "note.md").write_text("# Note\napi_key = 'sk-live-abcdefghijklmnopqrstuvwxyz123456'\n")
    (workspace.memory_dir / "link.md").symlink_to(secret)
    (workspace.root / "dreaming.toml").write_text('[autoresearch]\ncodebase_roots = ["code"]\n')
    (workspace.root / "code").mkdir()
    (workspace.root / "code" / "mod.py").write_text("X = 1\n")
    read_line = _site(workspace).read_line
    assert read_line is not None
    assert read_line(str(secret), 1) is None
    assert read_line("../outside.txt", 1) is None
    assert read_line("memory/link.md", 1) is None
    assert read_line("memory/note.md", 1) == "# Note"
    assert "sk-live" not in (read_line("memory/note.md", 2) or "")
    assert read_line("code/mod.py", 1) == "X = 1"


def test_memory_md_and_the_diary_linked_outside_the_workspace_are_not_shown(
    workspace: Workspace, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0:TOP SECRET\n")
    (outside / "diary.md").write_text("## 2026-01-01 03:00\n<!-- dreaming:run:r1 -->\nTOP SECRET DIARY\n")
    workspace.memory_md.symlink_to(outside / "passwd")
    workspace.dreams_md.symlink_to(outside / "diary.md")
    workspace.state_dir.mkdir(parents=True)
    workspace.events.write_text(
        '{"type": "run.started", "run_id": "r1", "at": "2026-01-01T03:00:00+00:00"}\n'
        '{"type": "run.finished", "run_id": "r1", "at": "2026-01-01T03:00:00+00:00"}\n'
    )
    site = _site(workspace)
    html = {name: site.render(name) for name, _ in PAGES}
    assert all("TOP SECRET" not in page for page in html.values())
    assert "MEMORY.md links outside the workspace; not shown" in html["memory.html"]
    assert "DREAMS.md links outside the workspace; not shown" in html["index.html"]


def test_the_cli_makes_up_a_token_off_loopback_and_needs_none_on_it(
    demo_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    served: list[dict[str, object]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: served.append({"app": app, **kwargs}))
    runner = CliRunner()
    ws = str(demo_workspace.root)
    assert runner.invoke(cli_app, ["view", "--workspace", ws, "--host", "0.0.0.0", "--port", "9"]).exit_code == 0
    assert runner.invoke(cli_app, ["view", "--workspace", ws]).exit_code == 0
    off, on = served
    assert off["host"] == "0.0.0.0" and off["port"] == 9 and on["host"] == "127.0.0.1"
    assert TestClient(off["app"]).get("/").status_code == 401  # type: ignore[arg-type]
    assert TestClient(on["app"]).get("/").status_code == 200  # type: ignore[arg-type]
