"""Dreaming's cross-run cache of identical LLM requests.

A request is identified by the sha256 of (model, messages, parameters) in canonical JSON. Each answer is one small
versioned JSON file ``memory/.dreams/llm-cache/<key>.json``, written atomically. The folder is bounded: entries older
than ``max_age`` are misses and are removed when met, and only the newest ``max_entries`` are kept. An unreadable
entry is a miss (and is removed): the cache is an optimisation, never a source of truth.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, message_to_dict, messages_from_dict

from dreaming.memory import atomic_write_json

__all__ = ["CACHE_VERSION", "CachedReply", "LLMCache", "request_key"]

logger = logging.getLogger(__name__)

CACHE_VERSION = 1
DEFAULT_MAX_ENTRIES = 512
DEFAULT_MAX_AGE = timedelta(days=30)


def _canonical_message(message: BaseMessage) -> dict[str, Any]:
    # Only what reaches the model: ids and response metadata differ between identical requests.
    row: dict[str, Any] = {"type": message.type, "content": message.content}
    if message.name:
        row["name"] = message.name
    tool_calls = getattr(message, "tool_calls", None)
    if tool_calls:
        row["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c.get("id")} for c in tool_calls]
    tool_call_id = getattr(message, "tool_call_id", None)
    if tool_call_id:
        row["tool_call_id"] = tool_call_id
    return row


def request_key(model: str, messages: Sequence[BaseMessage], parameters: Mapping[str, Any]) -> str:
    """Return the sha256 hex digest identifying a request."""
    payload = {"model": model, "messages": [_canonical_message(m) for m in messages], "parameters": parameters}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, kw_only=True, slots=True)
class CachedReply:
    """An answer served from the cache."""

    message: AIMessage
    """The model's original answer."""
    created_at: datetime
    """When it was first answered."""


class LLMCache:
    """The cache folder of one workspace.

    Args:
        folder: ``memory/.dreams/llm-cache``.
        max_entries: newest entries kept.
        max_age: older entries are misses and get pruned.
    """

    def __init__(
        self, folder: Path, *, max_entries: int = DEFAULT_MAX_ENTRIES, max_age: timedelta = DEFAULT_MAX_AGE
    ) -> None:
        self.folder = folder
        self.max_entries = max_entries
        self.max_age = max_age

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str, *, now: datetime) -> CachedReply | None:
        """Return the cached answer for ``key``, or None."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("version") != CACHE_VERSION or data.get("key") != key:
                raise ValueError("unknown version or key")
            created_at = datetime.fromisoformat(data["created_at"])
            (message,) = messages_from_dict([data["message"]])
            if not isinstance(message, AIMessage):
                raise ValueError("not an AI message")
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            logger.info("llm cache entry %s unusable (%s); removed", path.name, exc)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            return None
        if now - created_at > self.max_age:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            return None
        return CachedReply(message=message, created_at=created_at)

    def put(self, key: str, message: AIMessage, *, model: str, now: datetime) -> None:
        """Store an answer, then prune the folder to its bounds."""
        payload = {
            "version": CACHE_VERSION,
            "key": key,
            "model": model,
            "created_at": now.isoformat(),
            "message": message_to_dict(message),
        }
        atomic_write_json(self._path(key), payload)
        self._prune()

    def _prune(self) -> None:
        # File times only order the entries; expiry uses the stored ``created_at`` against the injected clock.
        files = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for path in files[self.max_entries :]:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
