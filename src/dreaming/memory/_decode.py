r"""Input bytes to text: undecodable bytes are located, reported and never raised.

Every input is UTF-8. What a reader does with bytes that are not depends on what the file is:

- **Line-based inputs** (price CSVs, verdict and other JSONL files): the line is skipped and reported as
  ``path:line: not UTF-8``; the rest of the file is read.
- **Machine state** (versioned JSON stores): the whole file is unusable, so it is moved aside and reported (see
  :func:`dreaming.memory.read_state`); :func:`parse_json_bytes` says why.
- **Notes the user wrote** (daily notes, other memory markdown): read whole with U+FFFD in place of each bad byte and
  reported with the line of the first one (:func:`read_user_text`). Dropping a user's note for one stray byte would
  lose the rest of it; the file itself is never rewritten.
- **File names** that are not UTF-8 (Python hands them over with lone surrogates): the file is skipped and
  reported (:data:`NAME_NOT_UTF8`), since its path could be stored in no JSON file and no index.
- **Files dreaming edits in place around user text** (MEMORY.md, DREAMS.md): decoded with ``surrogateescape`` and
  encoded back the same way (:func:`decode_keeping_bytes`, :func:`encode_keeping_bytes`), so a stray byte of the
  user's survives byte for byte.

A JSON ``\ud800`` escape decodes to a lone surrogate, which no UTF-8 file can hold: a later write of it would fail.
JSON readers treat it as not UTF-8 too (:func:`check_json_text`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "NAME_NOT_UTF8",
    "NOT_UTF8",
    "TOO_DEEP",
    "bad_line_numbers",
    "check_json_text",
    "decode_keeping_bytes",
    "decode_user_text",
    "encode_keeping_bytes",
    "has_undecodable",
    "parse_json_bytes",
    "printable",
    "read_user_text",
    "undecodable_note",
    "why_unparsable",
]

NOT_UTF8 = "not UTF-8"
"""The reason every reader gives for a line or file with undecodable bytes."""
NAME_NOT_UTF8 = "file name is not UTF-8: skipped"
"""The reason for an input file whose name holds undecodable bytes (no state file could record its path)."""

TOO_DEEP = "not valid JSON: nested too deeply"
"""The reason for JSON nested past Python's recursion limit (the parser would otherwise raise RecursionError)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_A_BYTE = re.compile("[\ud800-\udc7f\udd00-\udfff]")
_ESCAPED_SURROGATE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def printable(text: str) -> str:
    """Return text with each lone surrogate (an undecodable byte of a file name, say) shown as U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def decode_keeping_bytes(data: bytes) -> str:
    """Decode UTF-8, turning each undecodable byte into a lone surrogate that :func:`encode_keeping_bytes` restores."""
    return data.decode("utf-8", "surrogateescape")


def encode_keeping_bytes(text: str) -> bytes:
    """Encode text from :func:`decode_keeping_bytes`, restoring each undecodable byte exactly.

    A lone surrogate that did not come from a byte (it cannot be stored in UTF-8) is written as U+FFFD.
    """
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return _NOT_A_BYTE.sub("\ufffd", text).encode("utf-8", "surrogateescape")


def has_undecodable(text: str) -> bool:
    """Return whether text holds a lone surrogate (an undecodable byte, or an escape no UTF-8 file can hold)."""
    return _SURROGATE.search(text) is not None


def bad_line_numbers(text: str) -> list[int]:
    """Return the 1-based numbers (as ``str.splitlines`` counts) of the lines holding a lone surrogate."""
    if _SURROGATE.search(text) is None:
        return []
    return [number for number, line in enumerate(text.splitlines(), start=1) if _SURROGATE.search(line)]


def undecodable_note(lines: list[int], how: str = "read with U+FFFD for the bad bytes") -> str:
    """Describe the undecodable lines of a user's file and what the reader did with them."""
    count = len(lines)
    return f"{NOT_UTF8}: {how} ({count} line{'s' if count != 1 else ''})"


def read_user_text(path: Path) -> tuple[str, list[int]]:
    """Read a user's UTF-8 file, each undecodable byte replaced by U+FFFD; return the text and the bad lines.

    Raises:
        OSError: the file cannot be read.
    """
    return decode_user_text(path.read_bytes())


def decode_user_text(data: bytes) -> tuple[str, list[int]]:
    """Decode the bytes of a user's UTF-8 file as :func:`read_user_text` does (for a reader that has the bytes)."""
    text = data.decode("utf-8", "surrogateescape")
    lines = bad_line_numbers(text)
    return (printable(text) if lines else text), lines


def check_json_text(raw: bytes, value: Any) -> None:
    r"""Refuse a parsed JSON value that holds a lone surrogate from a ``\uD800``-style escape.

    Cheap for the usual line: the value is only re-encoded when its bytes hold such an escape.

    Raises:
        ValueError: the value holds a lone surrogate (the message starts with :data:`NOT_UTF8`).
    """
    if b"\\u" not in raw or _ESCAPED_SURROGATE_BYTES.search(raw) is None:
        return
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{NOT_UTF8}: an escaped lone surrogate") from None
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def parse_json_bytes(raw: bytes) -> Any:
    """Parse one JSON document (or JSONL line) from UTF-8 bytes; a leading BOM is allowed.

    Unlike ``json.loads(bytes)``, bytes that are not UTF-8 (encoded surrogates included) and escaped lone
    surrogates are refused, so every string that comes out can be written back.

    msgspec's decoder reads it first (twice as fast as json on a large store): where it accepts a document, json reads
    the same values from it, and it refuses all that this function refuses (bytes that are not UTF-8, lone surrogate
    escapes). What msgspec refuses (``NaN``, ``1e999``, a BOM, anything malformed) goes to json, which reads it or
    says why not, as before. Both stop at the interpreter's recursion limit; msgspec a few levels deeper.

    Raises:
        ValueError: not UTF-8 (a ``UnicodeDecodeError``, or a message starting with :data:`NOT_UTF8`) or not JSON
            (a ``json.JSONDecodeError``).
    """
    try:
        return _fast_decode()(raw)
    except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError
        pass
    text = raw.decode("utf-8-sig")
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    check_json_text(raw, value)
    return value


@functools.cache
def _fast_decode() -> Callable[[bytes], Any]:
    import msgspec  # on first use: the commands that parse no JSON (``--help``) do not load it

    return msgspec.json.Decoder().decode


def why_unparsable(exc: ValueError) -> str:
    """Return the reason to report for a :func:`parse_json_bytes` failure."""
    if isinstance(exc, UnicodeDecodeError):
        return NOT_UTF8
    if str(exc).startswith((NOT_UTF8, TOO_DEEP)):
        return str(exc)
    return "not valid JSON"
