"""Offline token counting and the dated price table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load
import tiktoken.registry

from dreaming.config import DreamingConfig, ModelPrice
from dreaming.llm import pricing
from dreaming.llm.pricing import cost_usd, load_price_table
from tests.conftest import NetworkBlockedError

TEXT = "The committee's BUY verdicts on BTC in a bull regime were right 80% of the time."


@pytest.fixture
def fresh_tiktoken(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """A machine that never loaded an encoding: empty tiktoken cache, nothing in memory, reads recorded."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    pricing._encoding.cache_clear()
    reads: list[str] = []
    real_read = tiktoken.load.read_file

    def recording_read(blobpath: str) -> bytes:
        reads.append(blobpath)
        return real_read(blobpath)

    monkeypatch.setattr(tiktoken.load, "read_file", recording_read)
    yield reads
    pricing._encoding.cache_clear()


def test_counts_offline_with_empty_cache(fresh_tiktoken: list[str]) -> None:
    count = pricing.count_text_tokens(TEXT)
    assert pricing._encoding() is not None, "the bundled encoding did not load"
    assert 10 < count < len(TEXT.encode())
    # The one read was the bundled file, never a URL: no download was attempted.
    assert fresh_tiktoken and all("://" not in path for path in fresh_tiktoken)
    assert any(path.endswith("cl100k_base.tiktoken") for path in fresh_tiktoken)


def test_matches_cl100k_token_ids(fresh_tiktoken: list[str]) -> None:
    encoding = tiktoken.get_encoding(pricing.ENCODING_NAME)
    assert encoding.encode_ordinary("hello world") == [15339, 1917]  # cl100k_base ids


def test_network_really_is_blocked() -> None:
    # The proof above relies on the autouse fixture; make sure it would have caught a download.
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(NetworkBlockedError):
        sock.connect(("198.51.100.1", 443))


def test_fallback_over_counts_when_encoding_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    exact = pricing.count_text_tokens(TEXT)

    def missing(name: str) -> tiktoken.Encoding:
        raise ValueError(f"unknown encoding {name}")

    pricing._encoding.cache_clear()
    monkeypatch.setattr(tiktoken, "get_encoding", missing)
    try:
        assert pricing.count_text_tokens(TEXT) == len(TEXT.encode()) > exact
    finally:
        pricing._encoding.cache_clear()


def test_message_count_includes_overhead_and_schemas() -> None:
    from langchain_core.messages import HumanMessage, SystemMessage

    messages = [SystemMessage("be brief"), HumanMessage(TEXT)]
    bare = pricing.count_message_tokens(messages)
    assert bare > pricing.count_text_tokens("be brief") + pricing.count_text_tokens(TEXT)
    assert pricing.count_message_tokens(messages, extra=[{"name": "Verdict", "parameters": {}}]) > bare


# Prices


def test_shipped_table_is_dated_and_prices_common_models() -> None:
    table = load_price_table()
    assert table.as_of == "2026-11-01"
    assert table.price_for("gpt-4.1-mini") == ModelPrice(input=0.40, output=1.60, cached_input=0.10)
    assert table.price_for(DreamingConfig().llm.model) is not None


def test_unknown_model_has_no_price() -> None:
    assert load_price_table().price_for("my-local-llama") is None


def test_overrides_extend_and_replace() -> None:
    table = load_price_table(
        {"my-local-llama": ModelPrice(input=0, output=0), "gpt-4.1-mini": ModelPrice(input=1, output=2)}
    )
    assert table.price_for("my-local-llama") == ModelPrice(input=0, output=0)
    assert table.price_for("gpt-4.1-mini") == ModelPrice(input=1, output=2)


def test_cost_uses_cached_discount() -> None:
    price = ModelPrice(input=0.40, output=1.60, cached_input=0.10)
    assert cost_usd(price, input_tokens=1_000_000, output_tokens=0) == pytest.approx(0.40)
    assert cost_usd(price, input_tokens=1_000_000, output_tokens=1_000_000, cached_tokens=500_000) == pytest.approx(
        0.20 + 0.05 + 1.60
    )
    no_discount = ModelPrice(input=0.40, output=1.60)
    assert cost_usd(no_discount, input_tokens=100, output_tokens=0, cached_tokens=100) == pytest.approx(0.00004)
