"""The state of one night's graph: JSON-able values only, merged by reducers; :func:`jsonable` makes them so."""

from __future__ import annotations

import dataclasses
import enum
import operator
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

__all__ = ["DreamState", "jsonable", "merge_dicts"]


def merge_dicts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Merge two mappings, the right one winning (used for per-node summaries)."""
    return {**(left or {}), **(right or {})}


def jsonable(value: Any) -> Any:
    """Return ``value`` as plain dicts, lists, strings and numbers."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value) if not f.name.startswith("_")
        }
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [jsonable(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Path):
        return value.as_posix()
    if isinstance(value, enum.Enum):
        return value.value
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


class DreamState(TypedDict, total=False):
    """What flows between the nodes of a night.

    Everything here is checkpointed after each node, so it holds summaries and decisions, never bulk data: the
    phases hand bulk data to each other through their files in ``memory/.dreams``.
    """

    run_id: str
    """Identifier of the run (also the checkpoint thread)."""
    now: str
    """The night's 'now', ISO 8601."""
    done: Annotated[list[str], operator.add]
    """Nodes that finished, in order."""
    summaries: Annotated[dict[str, Any], merge_dicts]
    """Per-phase summaries for the diary and the command line."""
    bad_input: Annotated[list[str], operator.add]
    """Skipped input lines, ``file:line: reason``."""
    bad_input_count: Annotated[int, operator.add]
    """How many input lines were skipped in all."""
    vetoes: Annotated[dict[str, str], merge_dicts]
    """Verdict-insight id -> the reason a model vetoed it."""
    halts: Annotated[list[dict[str, str]], operator.add]
    """Work stopped cleanly: ``{"node", "reason"}``."""
    narrative: str | None
    """The model-written diary paragraph, when there is one."""
    research_plan: list[dict[str, Any]]
    """The gaps selected tonight, in order: ``{"key", "query"}``."""
    research_deadline: float
    """When the research phase must stop, by the context's ``clock``."""
    research_results: Annotated[list[dict[str, Any]], operator.add]
    """One JSON-able result per gap (see ``graph/_research_gap.py``), appended by each research branch."""
