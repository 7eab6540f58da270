"""The fingerprint of a text, shared by every dedup layer (budget candidates, research gaps and claims)."""

from __future__ import annotations

import hashlib

__all__ = ["fingerprint"]


def fingerprint(text: str) -> str:
    """Return the first 16 hex digits of the sha256 of ``text`` trimmed, lowercased and whitespace-collapsed."""
    return hashlib.sha256(" ".join(text.strip().lower().split()).encode("utf-8")).hexdigest()[:16]
