"""The embedded memory-search index: SQLite FTS5 with BM25 in ``memory/.dreams/search-index.sqlite``.

The index is a cache of the markdown files, never a source of truth: a file that is not a usable index (corrupt, of
another schema version, or built by another tokenizer) is deleted and rebuilt from the notes. It holds the notes' text
with secrets redacted (:func:`dreaming.memory.redact_secrets`), so that no hit, recall or evidence taken from it, and
not the index file itself, carries a password a note holds. It is refreshed incrementally before a search
(``_changes.py``): a folder is listed again only when its entries changed, a note whose stamp (ctime, size, inode)
changed is read again and re-indexed only when its bytes differ from what was indexed (a digest in ``files``), and
notes that disappeared are dropped.

Which notes a refresh ``stat``-s is its caller's choice (:func:`refresh_index`): every note (a *full* look: the
default, and :meth:`MemoryIndex.refresh <dreaming.memory.search.MemoryIndex.refresh>`), or, by the rule that a search
follows (:func:`~dreaming.memory.search.search_memory`, ``dreaming search``, and a ``MemoryIndex`` re-check), every
note only when the last full look recorded in the index is older than :data:`FULL_LOOK_INTERVAL_S`. In between, a
refresh checks every folder's stamp (a note added, removed or renamed is seen at once, and so is a note saved by an
editor that renames a new file over the old one), MEMORY.md, the :data:`~dreaming.memory.search._changes.HOT_NOTES`
notes most recently changed and those changed in the last seconds: a note edited in place (its folder untouched) that
is none of these is found by a full look, so by any search that starts more than :data:`FULL_LOOK_INTERVAL_S` after
the edit (the full look it takes, or one taken since the edit, sees it). The ``meta`` table holds the time of the last
full look (``full_look_ns``) and the notes watched in between (``hot_notes``). Nothing is written when nothing
changed, except that a full look records its time when the time recorded is more than half the interval old.

Each chunk is indexed twice. ``chunks_fts`` holds its words as FTS5's ``unicode61`` tokenizer reads them (the exact
search). ``chunks_morph`` holds its morphological tokens, computed in Python (``morph_tokens`` in
``memory/_terms.py``: stems, CJK bigrams, harder folding) and joined with spaces; FTS5's ``ascii`` tokenizer only
splits them again at the spaces. That table is contentless (it stores no text, only what it needs to rank): a chunk's
tokens are deleted by computing them again from the chunk's text, which is why the index records the tokenizer that
made them (:func:`tokenizer_config`, in the ``meta`` table) and is rebuilt when it changes.

``chunk_terms`` holds each chunk's distinct index terms and morphological tokens, each with a space before and after
(`` kafka retention ``): a hit's term coverage is then a substring test per query term, where tokenizing the chunk
again for every search would cost more than the search.

``chunk_vectors`` holds a chunk's embedding (float32 bytes) once a semantic search has needed it (``_semantic.py``:
filled then, dropped with the chunk, cleared when the ``meta`` key ``embedder`` names another model).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import sqlite3
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dreaming.errors import ToolError
from dreaming.memory._decode import decode_user_text, undecodable_note
from dreaming.memory._secrets import redact_secrets
from dreaming.memory._terms import MORPH_TOKENIZER_VERSION, index_tokens, morph_tokens, spaced_terms
from dreaming.memory.files import check_write_path
from dreaming.memory.search._changes import Changes, FolderState, Watched, hottest, look
from dreaming.memory.search._chunks import chunk_markdown
from dreaming.memory.workspace import Workspace

__all__ = ["FULL_LOOK_INTERVAL_S", "SCHEMA_VERSION", "IndexRefresh", "open_index", "refresh_index", "tokenizer_config"]

SCHEMA_VERSION = 5
"""Stored in ``PRAGMA user_version``; any other value means the file is rebuilt from the notes (version 2: text
redacted; version 3: the morphological table and the ``meta`` table; version 4: ``folders``, digests in ``files``,
``chunk_terms``; version 5: ``chunk_vectors``)."""

FULL_LOOK_INTERVAL_S = 30.0
"""How old the last full look (every note ``stat``-ed) may be before a one-off search takes one again: the longest a
note edited in place, neither among the most recently changed nor in a changed folder, can go unseen."""

BUSY_TIMEOUT_S = 10.0
"""How long a search waits for another process that is refreshing the same index."""

_log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE folders (
    path TEXT PRIMARY KEY, stamp BLOB NOT NULL, notes TEXT NOT NULL, stamps BLOB NOT NULL, subfolders TEXT NOT NULL
);
CREATE TABLE files (path TEXT PRIMARY KEY, digest BLOB NOT NULL);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX chunks_path ON chunks (path);
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    text, content='chunks', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE chunks_morph USING fts5 (text, content='', tokenize='ascii');
CREATE TABLE chunk_terms (id INTEGER PRIMARY KEY, words TEXT NOT NULL, stems TEXT NOT NULL);
CREATE TABLE chunk_vectors (id INTEGER PRIMARY KEY, vector BLOB NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@functools.cache
def tokenizer_config() -> str:
    """Return what made the index's tokens, as stored in its ``meta`` table under ``tokenizer``.

    Besides :data:`dreaming.memory._terms.MORPH_TOKENIZER_VERSION`, it names the Snowball stemmer's release and the
    Unicode version of Python's ``unicodedata``: an upgrade of either can change a stem or a fold, and the index must
    then be rebuilt, not patched with tokens that no longer delete what they added.
    """
    import importlib.metadata  # its email, csv and zipfile cost a command that never opens the index

    return (
        f"exact=unicode61 remove_diacritics 2; morph={MORPH_TOKENIZER_VERSION}; "
        f"snowballstemmer={importlib.metadata.version('snowballstemmer')}; unicode={unicodedata.unidata_version}"
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class IndexRefresh:
    """What one incremental refresh did."""

    scanned: int
    """Memory files seen on disk."""
    reread: tuple[str, ...]
    """Files (re)indexed because they were new or their bytes changed, workspace-relative."""
    removed: tuple[str, ...]
    """Files dropped from the index because they no longer exist (or are no longer memory)."""
    chunks: int
    """Chunks in the index afterwards."""
    undecodable: tuple[str, ...] = ()
    """``path:line: reason`` for each re-read file holding bytes that are not UTF-8 (indexed with U+FFFD)."""
    full_look: bool = True
    """Whether every note was ``stat``-ed; else only MEMORY.md, the most recently changed notes and the unsettled."""


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def _usable(conn: sqlite3.Connection) -> str | None:
    # None when the index can be used as it is; else why not.
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        row = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()
        return None if row is not None and row[0] == tokenizer_config() else f"another tokenizer ({row and row[0]})"
    if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have created it between the check and the lock: look again.
            if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute("INSERT INTO meta (key, value) VALUES ('tokenizer', ?)", (tokenizer_config(),))
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return _usable(conn)
    return f"schema version {version}, not {SCHEMA_VERSION}"


def open_index(ws: Workspace) -> sqlite3.Connection:
    """Open (creating or rebuilding as needed) the workspace's index.

    Raises:
        ToolError: SQLite cannot open the index even after deleting it.
        OutsideWorkspaceError: the index (or its folder) is a symbolic link.
    """
    path = ws.search_index
    for suffix in ("", "-wal", "-shm"):
        check_write_path(Path(f"{path}{suffix}"))
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in (1, 2):
        conn: sqlite3.Connection | None = None
        try:
            conn = _connect(path)
            problem = _usable(conn)
            if problem is None:
                return conn
        except sqlite3.DatabaseError as exc:
            problem = str(exc)
        if conn is not None:
            conn.close()
        if attempt == 2:
            break
        _log.warning("search index %s is not usable (%s); rebuilding it", path, problem)
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                Path(f"{path}{suffix}").unlink()
    raise ToolError(f"cannot open the search index {path}")


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _drop(conn: sqlite3.Connection, relative: str) -> None:
    conn.execute(
        "INSERT INTO chunks_fts (chunks_fts, rowid, text) SELECT 'delete', id, text FROM chunks WHERE path = ?",
        (relative,),
    )
    # A contentless table forgets a row only when told the very tokens it was given.
    rows = conn.execute("SELECT id, text FROM chunks WHERE path = ?", (relative,)).fetchall()
    conn.executemany(
        "INSERT INTO chunks_morph (chunks_morph, rowid, text) VALUES ('delete', ?, ?)",
        [(rowid, " ".join(morph_tokens(text))) for rowid, text in rows],
    )
    conn.executemany("DELETE FROM chunk_terms WHERE id = ?", [(rowid,) for rowid, _ in rows])
    conn.executemany("DELETE FROM chunk_vectors WHERE id = ?", [(rowid,) for rowid, _ in rows])
    conn.execute("DELETE FROM chunks WHERE path = ?", (relative,))
    conn.execute("DELETE FROM files WHERE path = ?", (relative,))


def _insert(conn: sqlite3.Connection, relative: str, text: str, digest: bytes) -> None:
    for chunk in chunk_markdown(redact_secrets(text)):
        cursor = conn.execute(
            "INSERT INTO chunks (path, start_line, end_line, text) VALUES (?, ?, ?, ?)",
            (relative, chunk.start_line, chunk.end_line, chunk.text),
        )
        morph = morph_tokens(chunk.text)
        conn.execute("INSERT INTO chunks_fts (rowid, text) VALUES (?, ?)", (cursor.lastrowid, chunk.text))
        conn.execute("INSERT INTO chunks_morph (rowid, text) VALUES (?, ?)", (cursor.lastrowid, " ".join(morph)))
        conn.execute(
            "INSERT INTO chunk_terms (id, words, stems) VALUES (?, ?, ?)",
            (cursor.lastrowid, spaced_terms(index_tokens(chunk.text)), spaced_terms(morph)),
        )
    conn.execute("INSERT INTO files (path, digest) VALUES (?, ?)", (relative, digest))


def _read(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        _log.warning("cannot read %s for the search index: %s", path, exc)
        return None


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


_NAMES = "/"  # joins the names of a folder's notes and of its subfolders: no file name holds a slash


def _stored_folders(conn: sqlite3.Connection) -> dict[str, FolderState]:
    return {
        path: FolderState(
            stamp=stamp,
            notes=tuple(notes.split(_NAMES)) if notes else (),
            stamps=stamps,
            subfolders=tuple(subfolders.split(_NAMES)) if subfolders else (),
        )
        for path, stamp, notes, stamps, subfolders in conn.execute(
            "SELECT path, stamp, notes, stamps, subfolders FROM folders"
        )
    }


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the index holds of its last look, and which look to take now."""

    folders: dict[str, FolderState]
    """The folders as last seen."""
    full_look_ns: int | None
    """When the last full look was taken (wall clock, ns), if recorded."""
    watched: Watched | None
    """The notes to ``stat`` besides the unsettled ones; None for a full look."""


def _watched(conn: sqlite3.Connection, folders: dict[str, FolderState]) -> Watched | None:
    # The stored ``hot_notes`` ({folder: [[position, name], ...]}), or None when missing or no longer matching the
    # folders (as when an older release wrote the index): the look must then be full.
    row = conn.execute("SELECT value FROM meta WHERE key = 'hot_notes'").fetchone()
    if row is None:
        return None
    watched: dict[str, list[int]] = {}
    try:
        for relative, notes in json.loads(row[0]).items():
            names = folders[relative].notes
            if not all(type(at) is int and 0 <= at < len(names) and names[at] == name for at, name in notes):
                return None
            watched[relative] = [at for at, _ in notes]
    except (ValueError, TypeError, AttributeError, KeyError, IndexError):
        return None
    return watched


def _plan(conn: sqlite3.Connection, now_ns: int, full_look_every_s: float) -> _Plan:
    folders = _stored_folders(conn)
    row = conn.execute("SELECT value FROM meta WHERE key = 'full_look_ns'").fetchone()
    full_look_ns = int(row[0]) if row is not None and row[0].isdigit() else None
    watched = None
    # A last full look in the future (a clock set back) proves nothing: the look is full.
    if full_look_ns is not None and 0 <= now_ns - full_look_ns <= full_look_every_s * 1e9:
        watched = _watched(conn, folders)
    return _Plan(folders=folders, full_look_ns=full_look_ns, watched=watched)


def _to_record(plan: _Plan, now_ns: int) -> bool:
    # Whether a look that changed nothing is still written: a full look whose time the index should learn (the time
    # recorded is missing, in the future or more than half the interval old), so that one-off searches can rely on it.
    if plan.watched is not None:
        return False
    recorded = plan.full_look_ns
    return recorded is None or not 0 <= now_ns - recorded <= FULL_LOOK_INTERVAL_S * 1e9 / 2


def _record(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def _edited(conn: sqlite3.Connection, changes: Changes) -> list[str]:
    # The candidates to index again, sorted: the new ones, and those whose bytes differ from what was indexed or
    # cannot be read (a touch or a chmod changes the stamp, not the bytes: such a note is read, never indexed again).
    edited = []
    for relative, path in changes.candidates.items():
        row = conn.execute("SELECT digest FROM files WHERE path = ?", (relative,)).fetchone()
        if row is None:
            edited.append(relative)
            continue
        data = _read(path)
        if data is None or _digest(data) != row[0]:
            edited.append(relative)
    return sorted(edited)


def refresh_index(
    ws: Workspace, conn: sqlite3.Connection, *, now_ns: int | None = None, full_look_every_s: float = 0.0
) -> IndexRefresh:
    """Bring the index up to date with the memory files: re-index the notes whose bytes changed, drop those gone.

    Reads the index and ``stat``-s every note (a full look), or, when ``full_look_every_s`` is positive and the last
    full look recorded in the index is at most that old, only the notes watched in between (see the module
    docstring). Writes (in one transaction) only when something changed, or to record the time of a full look. When
    another process refreshed the index meanwhile, the look is taken again inside the transaction. ``now_ns`` is the
    wall clock (the default), against which a file's stamp is judged settled (see ``_changes.py``) and the age of
    the last full look is measured.
    """
    clock = time.time_ns if now_ns is None else lambda: now_ns
    seen_version = conn.execute("PRAGMA data_version").fetchone()[0]
    now = clock()
    plan = _plan(conn, now, full_look_every_s)
    changes = look(ws, plan.folders, now_ns=now, watched=plan.watched)
    edited = _edited(conn, changes)
    reread: list[str] = []
    undecodable: list[str] = []
    if changes.dirty or edited or changes.removed or _to_record(plan, now):
        with _transaction(conn):
            if conn.execute("PRAGMA data_version").fetchone()[0] != seen_version:
                now = clock()
                plan = _plan(conn, now, full_look_every_s)
                changes = look(ws, plan.folders, now_ns=now, watched=plan.watched)
                edited = _edited(conn, changes)
            folders = dict(changes.folders)
            for relative in changes.removed:
                _drop(conn, relative)
            for relative in edited:
                _drop(conn, relative)
                data = _read(changes.candidates[relative])  # after its stamp was taken: a later edit shows next time
                if data is None:  # out of the index, and read again at the next look
                    folder, _, name = relative.rpartition("/")
                    folders[folder] = folders[folder].unsettle(name)
                    continue
                text, bad = decode_user_text(data)
                if bad:  # a user's note with a stray byte is still indexed (U+FFFD in its place); see memory._decode
                    undecodable.append(f"{relative}:{bad[0]}: {undecodable_note(bad)}")
                    _log.warning("%s", undecodable[-1])
                _insert(conn, relative, text, _digest(data))
                reread.append(relative)
            conn.execute("DELETE FROM folders")
            conn.executemany(
                "INSERT INTO folders (path, stamp, notes, stamps, subfolders) VALUES (?, ?, ?, ?, ?)",
                [
                    (path, state.stamp, _NAMES.join(state.notes), state.stamps, _NAMES.join(state.subfolders))
                    for path, state in folders.items()
                ],
            )
            hot = {
                relative: [[at, folders[relative].notes[at]] for at in positions]
                for relative, positions in hottest(folders).items()
            }
            _record(conn, "hot_notes", json.dumps(hot))
            if plan.watched is None:
                _record(conn, "full_look_ns", str(now))
    total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    return IndexRefresh(
        scanned=changes.scanned,
        reread=tuple(reread),
        removed=changes.removed,
        chunks=int(total),
        undecodable=tuple(undecodable),
        full_look=plan.watched is None,
    )
