"""The shipped fake chat model, re-exported for the tests that import it from here."""

from __future__ import annotations

from typing import Any

from dreaming.llm.fake import FakeChatModel, Respond, tool_call_answer

__all__ = ["FakeChatModel", "Respond", "completion", "tool_call_answer"]


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
