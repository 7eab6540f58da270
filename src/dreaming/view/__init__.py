"""``dreaming view``: look at a workspace's nights in the browser, read-only, or export the same pages as HTML.

Six pages, all read from the workspace's files on every request: Dreams (the nights as a timeline, each with its
DREAMS.md entry), Patterns (verdict insights, hit-rate charts, near misses, the archive), Memory (MEMORY.md and the
recall candidates with their components and gates), Research (gaps, findings with their evidence), Budget (spend
against the cap, by node and model, refusals, the breaker) and Backtest (the last ``dreaming backtest`` report: both
committees' metrics, the differences with their intervals, the cumulative opportunity cost plotted). Nothing here
writes to the workspace.
"""

from __future__ import annotations

from dreaming.view._app import COOKIE, create_app
from dreaming.view._site import CONTENT_SECURITY_POLICY, PAGES, Site, export_site

__all__ = ["CONTENT_SECURITY_POLICY", "COOKIE", "PAGES", "Site", "create_app", "export_site"]
