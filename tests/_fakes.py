"""The shipped fake chat model, re-exported for the tests that import it from here, and helpers of the gateway's tests."""

from __future__ import annotations

from typing import Any

from dreaming.llm.fake import FakeChatModel, Respond, tool_call_answer
from dreaming.llm.gateway import LLMGateway
from dreaming.llm.ledger import BudgetLedger

__all__ = ["FakeChatModel", "Respond", "completion", "file_ledger", "tool_call_answer"]


def file_ledger(gateway: LLMGateway) -> BudgetLedger:
    """Return the gateway's ledger, a file's in every test without a fleet database (the fleet's is in Postgres)."""
    ledger = gateway.ledger
    assert isinstance(ledger, BudgetLedger)
    return ledger


def completion(
    content: str, *, prompt_tokens: int = 30, completion_tokens: int = 10, cached: int = 0, finish_reason: str = "stop"
) -> dict[str, Any]:
    """Return an OpenAI chat-completion body with its usage, as a server would send it (for respx routes)."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_776_000_000,
        "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }
