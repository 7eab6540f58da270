"""The dated price table shipped with the package, extended by ``[llm.prices]``, and pricing of token usage.

Unknown models are refused, never guessed: :meth:`PriceTable.price_for` returns None and the gateway reports "no LLM".
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from dreaming.config import ModelPrice

__all__ = ["PriceTable", "cost_usd", "load_price_table"]

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
    """Read the shipped table (``agent/prices.json``) and apply ``overrides`` from ``[llm.prices]``.

    Raises:
        ValueError: the shipped table is malformed (a packaging bug, caught by the tests).
    """
    text = resources.files("dreaming.agent").joinpath(_TABLE_FILE).read_text(encoding="utf-8")
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
