"""A real Postgres for the distributed fleet's tests: each test gets a schema of its own, dropped after.

The server is the machine's (127.0.0.1:5432, trust auth, database ``test``; ``DREAMING_TEST_DATABASE_URL`` names
another). Unreachable, the tests skip, except under ``CI=1``, where they fail: CI always has the server.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

psycopg = pytest.importorskip("psycopg")

SERVER_URL = os.environ.get("DREAMING_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _server() -> Any:
    try:
        return psycopg.connect(SERVER_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Postgres at {SERVER_URL} is unreachable in CI: {exc}")
        pytest.skip(f"Postgres at {SERVER_URL} is unreachable: {exc}")


@pytest.fixture
def pg_url() -> Iterator[str]:
    """Yield a database URL whose ``search_path`` is a new, empty schema; the schema is dropped afterwards."""
    schema = f"t_{secrets.token_hex(6)}"
    with _server() as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in SERVER_URL else "?"
    try:
        yield f"{SERVER_URL}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with _server() as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
