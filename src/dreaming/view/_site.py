"""The viewer's pages as HTML: the Jinja environment, safe markdown, and the static export.

Everything shown is untrusted text (notes, evidence, claims, queries): templates autoescape, markdown is rendered
with raw HTML disabled (a ``<script>`` in a note becomes text), link targets go through markdown-it's validation
(no ``javascript:``), and every page carries a Content-Security-Policy that allows no script at all, so a mistake
in escaping still cannot run code. Links between pages are relative file names, so the same HTML is served by the
app and written by :func:`export_site`.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import jinja2
from markdown_it import MarkdownIt

from dreaming.config import DreamingConfig
from dreaming.memory import Workspace, active_insights, readable_markdown
from dreaming.view import _read

__all__ = ["CONTENT_SECURITY_POLICY", "PAGES", "Site", "export_site"]

PAGES: tuple[tuple[str, str], ...] = (
    ("index.html", "Dreams"),
    ("patterns.html", "Patterns"),
    ("memory.html", "Memory"),
    ("research.html", "Research"),
    ("budget.html", "Budget"),
    ("backtest.html", "Backtest"),
)
"""Every page: its file name (its URL path) and its title, in navigation order."""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
)
"""No script, no fetch, no form: the pages are documents (the app also refuses to be framed)."""

_INSIGHT_LINK = re.compile(r"^(?:\./)?memory/insights/(?P<stem>[^/]+)\.md$")


def _number(value: object) -> float | None:
    # A number from a file may be missing, a string or NaN: shown as "-", never an error.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


@dataclass(frozen=True, slots=True)
class Site:
    """Renders the pages of one workspace; reads its files on every call (the viewer is live)."""

    workspace: Workspace
    """The workspace shown."""
    config: DreamingConfig
    """Its configuration (gates, cap, roots)."""
    now: datetime | None = None
    """The pages' "now"; None: the last night's time (:func:`~dreaming.view._read.viewer_now`)."""
    read_line: Callable[[str, int], str | None] | None = None
    """Reads a ``path:line`` of research evidence (confined and redacted); None shows locators only."""

    @classmethod
    def of(cls, workspace: Workspace, config: DreamingConfig, *, now: datetime | None = None) -> Site:
        """Return the site of ``workspace``, reading evidence lines the way research reads them.

        Only inside the codebase roots and the workspace, secret files refused, secrets redacted.
        """
        from dreaming.night import codebase_roots  # deferred: the night's wiring, only to resolve the roots
        from dreaming.tools.codebase import RipgrepSearch

        # Two readers: the codebase's locators are relative to its roots' common parent, the memory's to the workspace.
        code = RipgrepSearch(codebase_roots(workspace, config), base=workspace.root).read_line
        notes = RipgrepSearch([workspace.root], base=workspace.root).read_line

        def read_line(path: str, line: int) -> str | None:
            found = code(path, line)
            return found if found is not None else notes(path, line)

        return cls(workspace, config, now, read_line)

    def _environment(self) -> jinja2.Environment:
        env = jinja2.Environment(
            loader=jinja2.PackageLoader("dreaming.view", "templates"),
            autoescape=True,
            undefined=jinja2.ChainableUndefined,  # hostile or partial rows lack keys: shown empty, never a 500
            trim_blocks=True,
            lstrip_blocks=True,
        )
        env.filters["markdown"] = self._render_markdown
        env.filters["usd"] = lambda value: "-" if (n := _number(value)) is None else f"${n:.4f}"
        env.filters["pct"] = lambda value: "-" if (n := _number(value)) is None else f"{n:.1%}"
        env.filters["when"] = lambda value: value.strftime("%Y-%m-%d %H:%M") if isinstance(value, datetime) else "-"
        return env

    def _insight_pages(self) -> Mapping[str, str]:
        return {
            i.path.stem: "research.html" if i.kind == "research" else "patterns.html"
            for i in active_insights(self.workspace)
        }

    def _render_markdown(self, text: str, top: int = 3) -> str:
        # ``top``: the level a "#" heading of the file becomes, so the page's own h1/h2 stay on top.
        md = _markdown()
        tokens = md.parse(readable_markdown(text or ""))
        pages = self._insight_pages()
        for token in tokens:
            if token.type in ("heading_open", "heading_close"):
                token.tag = f"h{min(6, int(token.tag[1]) + top - 1)}"
            for child in token.children or ():
                href = child.attrGet("href") if child.type == "link_open" else None
                if isinstance(href, str) and (match := _INSIGHT_LINK.match(href)):
                    stem = match["stem"]
                    child.attrSet("href", f"{pages.get(stem, 'patterns.html')}#{_read.insight_anchor(stem)}")
        return str(md.renderer.render(tokens, md.options, {}))

    def render(self, name: str) -> str:
        """Return the HTML of page ``name`` (a file name from :data:`PAGES`).

        Raises:
            KeyError: no such page.
        """
        titles = dict(PAGES)
        title = titles[name]
        ws, config = self.workspace, self.config
        now = self.now or _read.viewer_now(ws)
        if name == "index.html":
            data = _read.dreams_page(ws)
        elif name == "patterns.html":
            data = _read.patterns_page(ws, config)
        elif name == "memory.html":
            data = _read.memory_page(ws, config, now)
        elif name == "research.html":
            data = _read.research_page(ws, config, self.read_line)
        elif name == "backtest.html":
            data = _read.backtest_page(ws)
        else:
            data = _read.budget_page(ws, config, now)
        template = self._environment().get_template(name)
        return template.render(
            page=name, title=title, pages=PAGES, workspace=ws.root.name, root=str(ws.root), now=now,
            csp=CONTENT_SECURITY_POLICY, **data,
        )  # fmt: skip


def export_site(site: Site, folder: Path) -> list[Path]:
    """Write every page as a static HTML file into ``folder`` (made if missing); return the files written.

    Each file is written whole (a temporary file renamed over it), so a reader never sees half a page. The folder
    is the user's choice and is usually outside the workspace; nothing is written into the workspace.
    """
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, _ in PAGES:
        target = folder / name
        html = site.render(name)
        handle, temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(html)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        written.append(target)
    return written
