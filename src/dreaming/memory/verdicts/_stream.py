"""Streaming JSONL for large verdict files: a reader that refuses NaN, and an atomic line writer."""

from __future__ import annotations

import contextlib
import gc
import json
import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, TypeGuard

import msgspec

from dreaming.memory._decode import NOT_UTF8, TOO_DEEP, check_json_text
from dreaming.memory.files import InputReport, before_write

__all__ = [
    "EXTRA_FIELDS",
    "AppendingLineWriter",
    "AtomicLineWriter",
    "VerdictLine",
    "VerdictLines",
    "bulk_objects",
    "format_number",
    "is_number",
    "parse_line",
    "read_objects",
]

_CHUNK_LINES = 8192
_COMPARE_BYTES = 1 << 20


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


_STRICT = json.JSONDecoder(parse_constant=_refuse_constant)
_SCAN = _STRICT.scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__, not in the stubs


def read_objects(path: Path, report: InputReport, label: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each JSON-object line of ``path``; skip and report the rest.

    Unlike :func:`dreaming.memory.iter_jsonl`, ``NaN`` and ``Infinity`` literals are refused, so every number that
    reaches the verdict path is finite. A line that is not UTF-8 (or escapes a lone surrogate) is skipped and
    reported as ``not UTF-8``, so every string that reaches the verdict path can be written back. A missing file
    yields nothing; blank lines are ignored.
    """
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        for number, raw in enumerate(handle, start=1):
            obj = parse_line(raw)
            if isinstance(obj, dict):
                yield number, obj
            elif obj is not None:
                report.skip(label, number, obj)


def parse_line(raw: bytes) -> dict[str, Any] | str | None:
    """Parse one JSONL line: its object, why it is refused (the reason reported), or None for a blank line."""
    try:
        if raw[:1] == b"{" and raw[1:2] != b"\x00":
            # Fast path for the usual line: what json.loads(raw) does for a line that starts with "{" (its
            # encoding check finds UTF-8; it scans one value and allows only JSON whitespace after it),
            # without its three Python-level wrapper calls, and decoding strictly where it would let
            # encoded surrogates pass. The scanner is the strict decoder's, so NaN and Infinity are
            # refused here too.
            text = raw.decode("utf-8")
            obj, end = _SCAN(text, 0)
            if end != len(text) and text[end:].strip(" \t\n\r"):
                raise ValueError("extra data")
        elif b"NaN" in raw or b"Infinity" in raw:
            obj = _STRICT.decode(raw.decode("utf-8"))
        else:
            obj = json.loads(raw.decode("utf-8-sig"))
        check_json_text(raw, obj)
    except StopIteration:  # the scanner's way of saying "no JSON value here"
        return "not valid JSON"
    except UnicodeDecodeError:
        return NOT_UTF8
    except RecursionError:
        return TOO_DEEP
    except ValueError as exc:
        if not raw.strip():
            return None
        if str(exc).startswith(NOT_UTF8):
            return str(exc)
        if "is not a number" in str(exc):  # say it as the strict decoder does (it decodes strictly first)
            try:
                _STRICT.decode(raw.decode("utf-8"))
            except ValueError as again:
                exc = again
        return str(exc) if "is not a number" in str(exc) else "not valid JSON"
    if type(obj) is not dict:
        return "not a JSON object"
    return obj


_Scalar = str | int | bool | None
"""The extra field values the typed decoder takes; floats, lists and objects go the general way (exactly as json
reads them: a float's digits, a nested value's depth)."""


class VerdictLine(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A verdict line of the usual shape, decoded straight into its types (the hot path of the review step).

    Any line that does not fit (another field, another type, a null ``macro_shock``, bytes that are not UTF-8,
    anything msgspec refuses) is parsed by :func:`parse_line` instead, which says exactly what is wrong with it.
    Where msgspec accepts a line, json reads the same values from it.
    """

    decision_date: str
    asset: str
    verdict: str
    macro_shock: bool = False
    id: _Scalar | msgspec.UnsetType = msgspec.UNSET
    note: _Scalar | msgspec.UnsetType = msgspec.UNSET
    regime: _Scalar | msgspec.UnsetType = msgspec.UNSET
    role: _Scalar | msgspec.UnsetType = msgspec.UNSET


EXTRA_FIELDS = ("id", "note", "regime", "role")
"""The optional fields of :class:`VerdictLine`, in key order."""
_DECODE_LINE = msgspec.json.Decoder(VerdictLine).decode
_READ_BYTES = 1 << 20


class VerdictLines:
    """The lines in bytes ``[start, end)`` of a verdict file, typed where they can be; bad lines skipped and reported.

    Iterating yields ``(line_number, line)``: a :class:`VerdictLine` when the line has the usual shape, else the dict
    :func:`parse_line` reads; bad lines are reported as :func:`read_objects` reports them. Lines are numbered from
    ``first_number``; ``start`` must be the start of a line. Every byte read is fed to ``digest`` (a hashlib object),
    so the caller knows exactly what was consumed even while the file grows. A missing file yields nothing.
    """

    def __init__(
        self,
        path: Path,
        report: InputReport,
        label: str,
        *,
        start: int = 0,
        end: int,
        first_number: int = 1,
        digest: Any = None,
    ) -> None:
        self.path, self.report, self.label = path, report, label
        self.start, self.end, self.digest = start, end, digest
        self.numbered = first_number - 1
        """The number of the last line read so far."""
        self.whole_lines = True
        """Whether the bytes read so far end with a newline (or are none)."""
        self.offset = start
        """Where the bytes read so far end."""

    def __iter__(self) -> Iterator[tuple[int, VerdictLine | dict[str, Any]]]:
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            return
        decode, report, label, digest = _DECODE_LINE, self.report, self.label, self.digest
        number = self.numbered + 1
        tail = b""
        with handle:
            handle.seek(self.start)
            remaining = self.end - self.start
            while remaining > 0:
                chunk = handle.read(min(_READ_BYTES, remaining))
                if not chunk:
                    break
                remaining -= len(chunk)
                self.offset += len(chunk)
                if digest is not None:
                    digest.update(chunk)
                lines = chunk.split(b"\n")
                lines[0] = tail + lines[0]
                tail = lines.pop()
                for raw in lines:
                    try:
                        yield number, decode(raw)
                    except msgspec.DecodeError:  # ValidationError included: the general parser says exactly why
                        obj = parse_line(raw)
                        if isinstance(obj, dict):
                            yield number, obj
                        elif obj is not None:
                            report.skip(label, number, obj)
                    number += 1
                self.numbered = number - 1
            if self.offset > self.start:
                self.whole_lines = not tail
            if tail:
                self.numbered = number
                obj = parse_line(tail)
                if isinstance(obj, dict):
                    yield number, obj
                elif obj is not None:
                    report.skip(label, number, obj)


@contextmanager
def bulk_objects() -> Iterator[None]:
    """Pause the cyclic garbage collector while a step builds its many small, long-lived objects.

    A step holds hundreds of thousands of tuples and records at once; every generation-2 collection walks them all,
    which at a million lines costs more than the work itself. Nothing made in these steps forms a reference cycle,
    so reference counting frees it all the same; the collector's previous state is restored on exit.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def is_number(value: object) -> TypeGuard[float]:
    """Return whether ``value`` is a finite int or float (booleans are not numbers here)."""
    return (type(value) is float and math.isfinite(value)) or type(value) is int


def format_number(value: float | None) -> str:
    """Render a stored number the one way every verdict file stores it: rounded to 4 decimals, or ``null``."""
    if value is None:
        return "null"
    return repr(round(float(value), 4))


class AtomicLineWriter:
    """Write a large text file line by line into a temp file, then swap it in atomically.

    The target is replaced only when the bytes differ, so an unchanged rerun touches nothing. On an exception the
    temp file is removed and the target is left as it was. ``changed`` tells, after the block, whether it was replaced.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.changed = False
        self.lines = 0
        self._buffer: list[str] = []
        before_write(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        self._tmp = Path(name)
        self._handle = os.fdopen(fd, "wb")

    def write(self, line: str) -> None:
        """Add one line (which must end with a newline)."""
        self._buffer.append(line)
        self.lines += 1
        if len(self._buffer) >= _CHUNK_LINES:
            self._flush()

    def write_lines(self, lines: list[str]) -> None:
        """Add many lines at once (each ending with a newline): one join and one write instead of a call per line."""
        self._flush()
        self._handle.write("".join(lines).encode("utf-8"))
        self.lines += len(lines)

    def write_text(self, text: str, lines: int) -> None:
        """Add ``text``, made of ``lines`` whole lines: for a caller that joins its lines itself."""
        self._flush()
        self._handle.write(text.encode("utf-8"))
        self.lines += lines

    def _flush(self) -> None:
        if self._buffer:
            self._handle.write("".join(self._buffer).encode("utf-8"))
            self._buffer.clear()

    def __enter__(self) -> AtomicLineWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if kind is not None:
                return
            self._flush()
            self._handle.flush()
            if _same_bytes(self._tmp, self.path):
                return
            os.fsync(self._handle.fileno())
            self._handle.close()
            with contextlib.suppress(FileNotFoundError):
                os.chmod(self._tmp, self.path.stat().st_mode & 0o777)
            os.replace(self._tmp, self.path)
            self.changed = True
        finally:
            self._handle.close()
            with contextlib.suppress(FileNotFoundError):
                self._tmp.unlink()


class AppendingLineWriter:
    """Append lines to a large text file that a night wrote before, in place (the incremental night's writer).

    Not atomic: a crash part way leaves some of the new lines, the last one possibly torn. The stored tallies
    (``_tallies``) describe the file as it was before, so the next night finds it changed and rewrites it whole.
    The interface is :class:`AtomicLineWriter`'s; ``changed`` tells whether anything was appended.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.changed = False
        self.lines = 0
        before_write(path)
        self._handle = path.open("ab")

    def write_lines(self, lines: list[str]) -> None:
        """Add many lines at once (each ending with a newline)."""
        self.write_text("".join(lines), len(lines))

    def write_text(self, text: str, lines: int) -> None:
        """Add ``text``, made of ``lines`` whole lines."""
        if text:
            self._handle.write(text.encode("utf-8"))
            self.lines += lines
            self.changed = True

    def __enter__(self) -> AppendingLineWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if kind is None and self.changed:
                self._handle.flush()
                os.fsync(self._handle.fileno())
        finally:
            self._handle.close()


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        if a.stat().st_size != b.stat().st_size:
            return False
        with a.open("rb") as fa, b.open("rb") as fb:
            while True:
                chunk = fa.read(_COMPARE_BYTES)
                if chunk != fb.read(_COMPARE_BYTES):
                    return False
                if not chunk:
                    return True
    except FileNotFoundError:
        return False
