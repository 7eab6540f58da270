"""What every node receives through the LangGraph runtime context: the clock, the workspace, the model and the tools.

The graph never builds a model or a tool itself: ``night.py`` builds them from the configuration and the environment
and hands them in here; tests hand in fakes (``FakeChatModel`` behind a real gateway, the tools' fakes).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dreaming.config import DreamingConfig
from dreaming.llm import LLMGateway, Skipped
from dreaming.memory import Workspace
from dreaming.tools.sources import ResearchTools

__all__ = ["NO_MODEL", "DreamContext", "ProgressFn"]

ProgressFn = Callable[[str, str], None]
"""``(node, message)``: tells the command line what is happening."""
NO_MODEL = "no LLM configured"
"""Why a context without a gateway calls nothing."""


def _quiet(node: str, message: str) -> None:
    return None


@dataclass(frozen=True, kw_only=True)
class DreamContext:
    """Run-scoped dependencies of the dream graph."""

    workspace: Workspace
    """The workspace being dreamed."""
    config: DreamingConfig
    """Its configuration."""
    now: datetime
    """The night's 'now' (only entry points read the clock)."""
    run_id: str
    """Identifier of the run."""
    trigger: str = "run"
    """What started the run: ``run`` (schedule), ``now`` (on demand) or ``eval``."""
    gateway: LLMGateway | None = None
    """The budgeted model (``llm/``); None, or a gateway that is not ``available``, calls nothing."""
    research: ResearchTools | None = None
    """The research tools, when autoresearch is on."""
    clock: Callable[[], float] = time.time
    """A real clock in seconds (epoch), for wall-clock ceilings such as the research deadline."""
    progress: ProgressFn = _quiet
    """Progress reports for the command line."""

    @property
    def model(self) -> LLMGateway | None:
        """Return the gateway when a model can be called at all, else None."""
        return self.gateway if self.gateway is not None and self.gateway.available else None

    def model_refusal(self, node: str) -> str | None:
        """Return why a call from ``node`` would be refused now (counted in the report, not logged), or None."""
        if self.gateway is None:
            return NO_MODEL
        decision = self.gateway.check(node, log=False)
        return decision.reason if isinstance(decision, Skipped) else None

    def budget_report(self) -> dict[str, Any]:
        """Return the run's budget report as JSON-able data with its diary ``lines``."""
        if self.gateway is None:
            return {"available": False, "lines": [f"LLM: not used ({NO_MODEL})."]}
        return self.gateway.report().to_json()
