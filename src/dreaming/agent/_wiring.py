"""Build a night's run-scoped dependencies (models, tools, progress) from the environment."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from dreaming.graph import DreamContext, ProgressFn

__all__ = ["night_context"]


def night_context(*, env: Mapping[str, str], progress: ProgressFn) -> Callable[[DreamContext], DreamContext]:
    """Return the function that completes a base context with what the environment configures."""

    def complete(base: DreamContext) -> DreamContext:
        return replace(base, progress=progress)

    return complete
