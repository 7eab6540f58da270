"""The fleet's migrations on a real Postgres: applied once, idempotent, concurrent-safe, newer versions refused."""

from __future__ import annotations

import threading

import psycopg
import pytest

from dreaming.errors import ConfigError
from dreaming.fleet._schema import SCHEMA_VERSION, apply_migrations, schema_version


def test_migrations_apply_once_and_a_second_run_applies_nothing(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        assert schema_version(conn) == 0
        assert apply_migrations(conn) == list(range(1, SCHEMA_VERSION + 1))
        assert apply_migrations(conn) == []
        assert schema_version(conn) == SCHEMA_VERSION
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
    assert {"dreaming_schema_version", "dreaming_budget", "dreaming_budget_entries"} <= tables


def test_concurrent_inits_apply_each_migration_once(pg_url: str) -> None:
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def init() -> None:
        try:
            with psycopg.connect(pg_url) as conn:
                results.append(apply_migrations(conn))
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=init) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(results, key=len) == [[], [], [], list(range(1, SCHEMA_VERSION + 1))]


def test_a_database_from_a_newer_dreaming_is_refused(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        apply_migrations(conn)
        conn.execute("INSERT INTO dreaming_schema_version (version, name) VALUES (%s, 'future')", (SCHEMA_VERSION + 1,))
        conn.commit()
        with pytest.raises(ConfigError, match="newer than this dreaming knows"):
            apply_migrations(conn)
