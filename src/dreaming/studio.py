"""The nightly graph for LangGraph Studio and ``langgraph dev`` (``langgraph.json`` points here).

The platform brings its own checkpointer and sends the run's context as JSON; :class:`StudioContext` turns
``{"workspace": "/path/to/workspace", "now": "2026-09-01T03:00:00+00:00"}`` into the full context a night needs, as
``dreaming run`` builds it (the budgeted gateway and the research tools from the environment). Studio runs the graph
itself: there is no consolidation lock and no resume of a crashed ``dreaming run`` here, so do not point it at a
workspace a scheduled night is dreaming at the same moment.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any

from langgraph.pregel import Pregel

from dreaming.config import load_config
from dreaming.graph import DreamContext, build_dream_graph
from dreaming.memory import Workspace
from dreaming.night import night_context, utc_now

__all__ = ["StudioContext", "graph"]


class StudioContext(DreamContext):
    """A night's context built from the JSON a LangGraph server sends (``workspace``, optional ``now``)."""

    def __init__(self, workspace: str | os.PathLike[str] | Workspace, now: str | datetime | None = None, **_: Any):
        """Build the night's context for ``workspace`` at ``now`` (the clock by default) from the environment."""
        ws = workspace if isinstance(workspace, Workspace) else Workspace.at(Path(workspace))
        ws.require()
        moment = datetime.fromisoformat(now) if isinstance(now, str) else (now or utc_now())
        run_id = f"{moment.strftime('%Y%m%dT%H%M%SZ')}-studio-{secrets.token_hex(3)}"
        base = DreamContext(
            workspace=ws, config=load_config(ws.config_file), now=moment, run_id=run_id, trigger="studio"
        )
        complete = night_context(env=os.environ)(base)
        for f in fields(DreamContext):
            object.__setattr__(self, f.name, getattr(complete, f.name))


graph: Pregel[Any, Any, Any, Any] = build_dream_graph(context_schema=StudioContext).compile()
"""The compiled nightly graph, without a checkpointer (the platform supplies one)."""
