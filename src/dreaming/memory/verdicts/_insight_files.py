"""Insight files ``memory/insights/<slug>.md``: a small front-matter reader and writer (no YAML library).

The front matter is a flat block of ``key: value`` lines between ``---`` fences. Values are scalars: integers,
floats, ``true``/``false``, ``null`` and strings. A string that could be read back as something else, or that holds
characters outside a plain set, is written JSON-quoted; the reader also accepts single-quoted strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dreaming.memory._decode import has_undecodable
from dreaming.memory.files import atomic_write_text

__all__ = ["InsightFile", "Scalar", "parse_scalar", "read_insight", "render_insight", "write_insight"]

Scalar = str | int | float | bool | None

_FENCE = "---"
_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?")
_PLAIN = re.compile(r"[A-Za-z0-9_.+/-](?:[A-Za-z0-9_ .+/()-]*[A-Za-z0-9_.+/)-])?")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_scalar(text: str) -> Scalar:
    """Read one front-matter value."""
    text = text.strip()
    if not text or text in ("null", "~"):
        return None
    if text == "true":
        return True
    if text == "false":
        return False
    if text[0] == '"':
        try:
            value = json.loads(text)
        except ValueError:
            return text
        # An escaped lone surrogate could never be written back: keep the text as it stands.
        return value if isinstance(value, str) and not has_undecodable(value) else text
    if text[0] == "'" and text.endswith("'") and len(text) >= 2:
        return text[1:-1].replace("''", "'")
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def _render_scalar(value: Scalar) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return repr(value)
    if _PLAIN.fullmatch(value) and parse_scalar(value) == value:
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class InsightFile:
    """One insight file as read from disk."""

    path: Path
    """Where it was read from."""
    front: Mapping[str, Scalar] = field(default_factory=dict)
    """The front matter, in file order."""
    body: str = ""
    """Everything after the closing fence."""

    def _text(self, key: str) -> str:
        value = self.front.get(key)
        return "" if value is None else str(value)

    @property
    def id(self) -> str:
        """Return the ``id`` field, else the file stem."""
        return self._text("id") or self.path.stem

    @property
    def kind(self) -> str:
        """Return ``caution``, ``reliable``, ``research``, ... (empty when absent)."""
        return self._text("kind")

    @property
    def status(self) -> str:
        """Return the ``status`` field (``active`` when absent)."""
        return self._text("status") or "active"

    @property
    def title(self) -> str:
        """Return the ``title`` field, else the first ``# `` heading of the body, else the id."""
        if title := self._text("title"):
            return title
        for line in self.body.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
        return self.id


def _split(text: str) -> tuple[dict[str, Scalar], str] | None:
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != _FENCE:
        return None
    front: dict[str, Scalar] = {}
    for i in range(1, len(lines)):
        line = lines[i].rstrip("\r")
        if line == _FENCE:
            return front, "\n".join(lines[i + 1 :])
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if sep and _KEY.fullmatch(key.strip()):
            front[key.strip()] = parse_scalar(value)
    return None


def read_insight(path: Path) -> InsightFile | None:
    """Read an insight file; return None when it is missing, unreadable or has no front matter."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    split = _split(text)
    if split is None:
        return None
    front, body = split
    return InsightFile(path=path, front=front, body=body)


def render_insight(front: Mapping[str, Scalar], body: str) -> str:
    """Return the text of an insight file: front matter in the given key order, then the body."""
    head = "".join(f"{key}: {_render_scalar(value)}\n" for key, value in front.items())
    return f"{_FENCE}\n{head}{_FENCE}\n{body}"


def write_insight(path: Path, front: Mapping[str, Scalar], body: str) -> bool:
    """Write an insight file atomically; return whether its bytes changed."""
    return atomic_write_text(path, render_insight(front, body))
