"""What the next committee sees: the active insights and a rendered block for its prompt (CIO context injection)."""

from __future__ import annotations

from dataclasses import dataclass

from dreaming.memory.verdicts._index import active_insights
from dreaming.memory.verdicts._insight_files import InsightFile
from dreaming.memory.workspace import Workspace

__all__ = ["PriorInsights", "load_prior_insights"]


@dataclass(frozen=True, kw_only=True, slots=True)
class PriorInsights:
    """The active insights, newest confirmation first, and the same rendered as prompt text."""

    insights: tuple[InsightFile, ...] = ()
    """Active insight files, newest ``last_confirmed`` first, then by id."""
    text: str = ""
    """A block to put in a prompt; empty when there is no insight."""


def _matches(value: object, wanted: str | None) -> bool:
    return wanted is None or (isinstance(value, str) and value.casefold() == wanted.casefold())


def _figures(insight: InsightFile) -> str:
    front = insight.front
    parts = []
    if "score" in front:
        parts.append(f"score {front['score']}, n={front.get('n')}")
    elif "confidence" in front:
        parts.append(f"confidence {front['confidence']}")
    if front.get("last_confirmed"):
        parts.append(f"last confirmed {front['last_confirmed']}")
    return "; ".join(parts)


def _render(insight: InsightFile) -> str:
    body = [line for line in insight.body.strip().splitlines() if not line.startswith("# ")]
    figures = _figures(insight)
    head = f"### {insight.title}" + (f" ({figures})" if figures else "")
    return head + "\n" + "\n".join(body).strip()


def load_prior_insights(ws: Workspace, *, asset: str | None = None, regime: str | None = None) -> PriorInsights:
    """Return the active insights (optionally only those about ``asset`` and/or ``regime``) and their prompt text.

    Filters compare case-insensitively with the insight's ``asset`` and ``regime`` fields, so an insight without
    them (a research finding) is included only when no filter is given.
    """
    chosen = [
        i
        for i in active_insights(ws)
        if _matches(i.front.get("asset"), asset) and _matches(i.front.get("regime"), regime)
    ]
    chosen.sort(key=lambda i: i.id)
    chosen.sort(key=lambda i: str(i.front.get("last_confirmed") or ""), reverse=True)
    if not chosen:
        return PriorInsights()
    text = (
        f"Prior insights from dreaming ({len(chosen)}), learned from past committee verdicts and research. "
        "The numbers are computed, not opinions:\n\n" + "\n\n".join(_render(i) for i in chosen) + "\n"
    )
    return PriorInsights(insights=tuple(chosen), text=text)
