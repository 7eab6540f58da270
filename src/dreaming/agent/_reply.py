"""A model's answer as the gateway returns it, and the parsing of structured answers."""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.messages import AIMessage
from pydantic import BaseModel, ValidationError

__all__ = ["LLMReply", "parse_structured"]


@dataclass(frozen=True, kw_only=True, slots=True)
class LLMReply:
    """A model's answer and what it cost."""

    message: AIMessage
    """The raw answer."""
    parsed: BaseModel | None = None
    """The structured answer when a schema was asked for and the answer fits it."""
    parse_error: str | None = None
    """Why the answer did not fit the schema (the caller decides what a malformed answer means)."""
    input_tokens: int = 0
    """Prompt tokens recorded."""
    output_tokens: int = 0
    """Completion tokens recorded."""
    cached_tokens: int = 0
    """Prompt tokens served from the provider's cache."""
    cost_usd: float = 0.0
    """Cost recorded in the ledger (0 for a cache hit)."""
    estimated: bool = False
    """True when the API reported no usage and the estimate was recorded."""
    cache_hit: bool = False
    """True when served from dreaming's cache without calling the model."""

    @property
    def text(self) -> str:
        """The answer's text content."""
        return self.message.text


def parse_structured(message: AIMessage, schema: type[BaseModel]) -> tuple[BaseModel | None, str | None]:
    """Return the answer as ``schema`` (from a forced tool call, or JSON text), or why it does not fit."""
    for call in message.tool_calls:
        if call["name"] == schema.__name__:
            try:
                return schema.model_validate(call["args"]), None
            except ValidationError as exc:
                return None, f"tool call does not fit {schema.__name__}: {exc.errors(include_url=False)}"
    text = message.text.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return schema.model_validate_json(text), None
    except ValidationError:
        return None, f"answer is not a {schema.__name__}: {text[:200]!r}"
