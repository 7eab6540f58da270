"""Prompt text only, no logic: each prompt is a markdown file next to this module, read with :func:`load_prompt`."""

from __future__ import annotations

from importlib import resources

__all__ = ["load_prompt"]


def load_prompt(name: str) -> str:
    """Return the text of ``prompts/<name>.md``.

    Raises:
        FileNotFoundError: there is no such prompt.
    """
    return resources.files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8").strip()
