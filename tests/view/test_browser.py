"""The viewer in a real headless Chromium (Debian's ``chromium``, driven by Playwright through its executable path).

Each page of the demo workspace after its night loads, shows what it must (the promoted insights, the budget chart),
the ``<script>`` planted in a note, MEMORY.md and a gap never runs, and a screenshot of each page is saved in the
test's tmp folder. Without a browser the tests skip here and fail in CI (``.ci/run`` installs it and sets ``CI``).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from dreaming.config import load_config
from dreaming.memory import Workspace
from dreaming.view import PAGES, Site, create_app, export_site

pytestmark = pytest.mark.slow

TOKEN = "browser-test-token"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]  # fmt: skip
"""The flags a closed network needs: without the background-networking ones Chromium keeps dialing out."""


def _chromium() -> str:
    found = os.environ.get("DREAMING_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    message = "no chromium executable (Debian: apt-get install chromium; .ci/run installs it)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def base_url(demo_workspace: Workspace) -> Iterator[str]:
    """Serve the demo workspace's viewer on a free loopback port, with a token, for the module's tests."""
    site = Site.of(demo_workspace, load_config(demo_workspace.config_file))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(site, token=TOKEN), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        threading.Event().wait(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    listener.close()


def _watch(page: Any) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {"dialogs": [], "console": []}

    def on_dialog(dialog: Any) -> None:
        seen["dialogs"].append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("console", lambda message: seen["console"].append(message.text))
    return seen


def test_every_page_loads_in_chromium_and_no_planted_script_runs(browser: Any, base_url: str, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    seen = _watch(page)
    assert page.goto(f"{base_url}/?token={TOKEN}").status == 200
    for name, title in PAGES:
        page.click(f"nav >> text={title}")  # the token travels in the cookie from page to page
        page.wait_for_url(f"{base_url}/{name}")
        assert page.locator("main > h1").inner_text() == title
        assert page.locator("script").count() == 0
        assert page.evaluate("window.__pwned") is None, name
        assert page.title().startswith(f"{title} · dreaming"), name
        page.screenshot(path=str(tmp_path / f"{name.removesuffix('.html')}.png"), full_page=True)
    assert seen["dialogs"] == []
    assert [m for m in seen["console"] if "Content Security Policy" in m] == []  # nothing even tried to run
    for name, _ in PAGES:
        assert (tmp_path / f"{name.removesuffix('.html')}.png").stat().st_size > 10_000
    page.close()


def test_the_pages_show_the_promoted_insights_and_the_budget_chart(browser: Any, base_url: str) -> None:
    page = browser.new_page()
    page.goto(f"{base_url}/patterns.html?token={TOKEN}")
    table = page.locator("table").first
    assert "Reliable: HOLD on NASDAQ in a downtrend (7d) is usually right" in table.inner_text()
    assert page.locator("figure.chart svg").count() == 2
    assert page.locator("figure.chart svg rect.bar").count() > 10
    page.goto(f"{base_url}/memory.html")
    memory = page.locator("section.memory-md")
    assert memory.get_by_role("link", name="Reliable: HOLD on NASDAQ in a downtrend (7d) is usually right").count() == 1
    assert "<script>window.__pwned" in memory.inner_text()  # the planted text is shown, as text
    assert memory.locator("a[href^='javascript']").count() == 0
    page.goto(f"{base_url}/budget.html")
    chart = page.locator("figure.budget-chart svg")
    assert chart.is_visible()
    assert chart.locator("line.cap").count() == 1 and chart.locator("rect.window").count() == 1
    assert chart.bounding_box()["width"] > 300
    page.goto(f"{base_url}/research.html")
    hits = page.locator("section.kept pre.evidence .hit").all_inner_texts()
    assert any(h.split()[1:4] == ["K_FLAT", "=", "1.0"] for h in hits), hits  # "  35  K_FLAT = 1.0": the line itself
    page.close()


def test_without_the_token_the_browser_gets_nothing(browser: Any, base_url: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    response = page.goto(f"{base_url}/memory.html")
    assert response is not None and response.status == 401
    assert "Long-Term Memory" not in page.content()
    context.close()


def test_the_static_export_opens_from_disk(browser: Any, demo_workspace: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "site"
    export_site(Site.of(demo_workspace, load_config(demo_workspace.config_file)), folder)
    page = browser.new_page()
    seen = _watch(page)
    page.goto((folder / "index.html").as_uri())
    page.click("nav >> text=Patterns")
    assert page.locator("main > h1").inner_text() == "Patterns"
    assert page.evaluate("window.__pwned") is None and seen["dialogs"] == []
    page.screenshot(path=str(tmp_path / "export-patterns.png"), full_page=True)
    page.close()


def test_the_backtest_page_draws_its_plot_and_runs_no_planted_script(browser: Any, tmp_path: Path) -> None:
    import json

    from tests.view.conftest import IMG, SCRIPT
    from tests.view.test_backtest_page import _report

    ws = Workspace.at(tmp_path / "ws")
    ws.state_dir.mkdir(parents=True)
    (ws.state_dir / "backtest.json").write_text(json.dumps({**_report(asset=SCRIPT + IMG), "policy": SCRIPT}))
    folder = tmp_path / "site"
    export_site(Site(workspace=ws, config=load_config(ws.config_file)), folder)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    seen = _watch(page)
    page.goto((folder / "backtest.html").as_uri())
    chart = page.locator("figure.backtest-chart svg")
    assert chart.is_visible() and chart.bounding_box()["width"] > 300
    assert chart.locator("path.baseline").count() == 1 and chart.locator("path.dreaming").count() == 1
    assert "<script>window.__pwned" in page.locator("table.buckets").inner_text()  # shown, as text
    assert page.evaluate("window.__pwned") is None and seen["dialogs"] == []
    page.screenshot(path=str(tmp_path / "backtest.png"), full_page=True)
    page.close()
