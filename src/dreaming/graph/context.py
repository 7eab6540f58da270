"""What every node receives through the LangGraph runtime context: the clock, the workspace, models and tools.

The graph layer never builds a model or a tool itself; the entry points (``agent/``) build them and pass them here,
behind the small protocols below, so tests can pass fakes.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from dreaming.config import DreamingConfig
from dreaming.graph._research_deps import ResearchDeps
from dreaming.memory import Workspace

__all__ = ["DreamContext", "ModelAccess", "NarrateFn", "NoModels", "ProgressFn", "VerifyFn"]


class ModelAccess(Protocol):
    """The budget's view of the model gateway, as the graph's budget nodes need it."""

    @property
    def available(self) -> bool:
        """Whether a model is configured and priced at all."""
        ...

    def refusal(self, node: str) -> str | None:
        """Return why a call from ``node`` would be refused now, or None when it may go ahead."""
        ...

    def report(self) -> Mapping[str, Any]:
        """Return the run's spend report (JSON-able) for the diary."""
        ...


class NoModels:
    """The model access of a run with no LLM configured: nothing is ever called."""

    def __init__(self, reason: str = "no LLM configured") -> None:
        self.reason = reason

    @property
    def available(self) -> bool:
        """Return False: there is no model."""
        return False

    def refusal(self, node: str) -> str | None:
        """Refuse every call."""
        return self.reason

    def report(self) -> Mapping[str, Any]:
        """Return a report that says no model was used."""
        return {"available": False, "lines": [f"LLM: not used ({self.reason})."]}


VerifyFn = Callable[[Sequence[Mapping[str, Any]]], Awaitable[Mapping[str, str]]]
"""Ask a model about gate-passing verdict insights; return id -> veto reason."""
NarrateFn = Callable[[str], Awaitable[str | None]]
"""Turn the night's facts into a short paragraph, or None."""
ProgressFn = Callable[[str, str], None]
"""``(node, message)``: tells the command line what is happening."""


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
    models: ModelAccess = field(default_factory=NoModels)
    """Budget-gated model access; ``NoModels`` when none is configured."""
    verify: VerifyFn | None = None
    """The LLM verifier of verdict insights, when configured."""
    narrate: NarrateFn | None = None
    """The diary narrator, when configured."""
    research: ResearchDeps | None = None
    """Research dependencies (tools and chat), when autoresearch is on."""
    clock: Callable[[], float] = time.time
    """A real clock in seconds (epoch), for wall-clock ceilings such as the research deadline."""
    progress: ProgressFn = _quiet
    """Progress reports for the command line."""
