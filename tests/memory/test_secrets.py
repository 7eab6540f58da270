"""Redaction and secret file names: every planted shape is hidden, ordinary code is not, secret files are skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreaming.memory import REDACTED, Workspace, is_secret_name, is_secret_path, redact_secrets
from tests.memory._secret_shapes import ORDINARY, SECRET_NAMED, SHAPES, Shape

REDACTABLE = [s for s in SHAPES if s.path not in SECRET_NAMED]


@pytest.mark.parametrize("shape", REDACTABLE, ids=[s.name for s in REDACTABLE])
def test_every_planted_shape_loses_its_value_and_keeps_its_key(shape: Shape) -> None:
    out = redact_secrets(shape.line)
    assert shape.value not in out
    assert REDACTED in out
    # Only the value goes: what the line is about (its key or its host) stays readable.
    head = shape.line.split("=")[0].split(":")[0].strip().strip('"')
    if head and shape.value not in head:
        assert head in out


def test_there_are_at_least_twenty_shapes() -> None:
    assert len(REDACTABLE) >= 20 and len(SHAPES) >= 25


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_code_and_prose_are_left_alone(line: str) -> None:
    assert redact_secrets(line) == line


def test_keys_and_hosts_stay_and_lines_are_kept() -> None:
    text = "DATABASE_URL=postgres://app:PgS3cretPass@db.internal:5432/app\nDB_PASS=hunt3r2\npassword: x1ZqW9"
    assert redact_secrets(text) == (
        "DATABASE_URL=postgres://app:[REDACTED]@db.internal:5432/app\nDB_PASS=[REDACTED]\npassword: [REDACTED]"
    )
    block = "a\n-----BEGIN EC PRIVATE KEY-----\nAAAA\nBBBB\n-----END EC PRIVATE KEY-----\nb"
    assert redact_secrets(block).split("\n") == ["a", *[REDACTED] * 4, "b"]


def test_a_key_body_cut_from_its_begin_line_is_redacted() -> None:
    # A snippet's context window can start inside a key block.
    body = "MIIEpAIBAAKCAQEAplantedPrivateKeyBodyLine0123456789abcdefghijklmnop"
    end = "-----END RSA PRIVATE KEY-----"
    assert redact_secrets(f"{body}\n{end}") == f"{REDACTED}\n{end}"


def test_redaction_is_idempotent_and_never_touches_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("redaction opened a socket")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    text = "\n".join(s.line for s in REDACTABLE)
    once = redact_secrets(text)
    assert redact_secrets(once) == once
    assert once.count("\n") == text.count("\n")


@pytest.mark.parametrize(
    "name",
    ["secrets.yaml", "SECRETS.md", "my_secret_notes.md", "server.pem", "tls.key", "gcp-credentials.json",
     "credentials", ".env", ".env.production", "prod.env", "id_rsa", "id_ed25519.pub", "cert.p12", ".netrc",
     "service-account-prod.json", "terraform.tfvars"],
)  # fmt: skip
def test_secret_looking_names(name: str) -> None:
    assert is_secret_name(name)
    assert is_secret_path(f"repo/sub/{name}")


@pytest.mark.parametrize(
    "name", ["config.py", "settings.yaml", "keyboard.py", "id_utils.py", "environment.md", "README.md"]
)
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


def test_memory_files_with_secret_names_are_never_indexed(tmp_path: Path) -> None:
    from dreaming.memory.search import iter_memory_files, search_memory

    ws = Workspace.at(tmp_path / "ws")
    (ws.memory_dir / "secrets").mkdir(parents=True)
    (ws.memory_dir / "2026-08-31.md").write_text("# Staging\n\nThe staging database is postgres on db.internal.\n")
    (ws.memory_dir / "secrets.md").write_text("# Staging\n\nstaging database password MemSecretsFileVal9\n")
    (ws.memory_dir / "secrets" / "2026-08-30.md").write_text("staging database vault MemSecretsDirVal8\n")
    assert [rel for rel, _ in iter_memory_files(ws)] == ["memory/2026-08-31.md"]
    assert [hit.path for hit in search_memory(ws, "staging database")] == ["memory/2026-08-31.md"]


def test_the_memory_index_holds_no_secret_a_note_does(tmp_path: Path) -> None:
    from dreaming.memory.search import search_memory

    ws = Workspace.at(tmp_path / "ws")
    ws.memory_dir.mkdir(parents=True)
    note = "# Staging\n\nDATABASE_URL=postgres://app:PgS3cretPass@db.internal:5432/app\nDB_PASS=hunt3r2\n"
    (ws.memory_dir / "2026-08-31.md").write_text(note)
    hits = search_memory(ws, "staging database")
    assert hits and "PgS3cretPass" not in hits[0].snippet and "hunt3r2" not in hits[0].snippet
    assert (hits[0].start_line, hits[0].end_line) == (1, 4)  # line numbers unchanged by redaction
    for path in ws.state_dir.rglob("*"):
        if path.is_file():
            assert b"PgS3cretPass" not in path.read_bytes() and b"hunt3r2" not in path.read_bytes()


def test_a_note_line_holding_a_secret_is_never_promoted() -> None:
    # A recall recorded before redaction (its snippet verbatim) still finds its line: the promotion is refused.
    from dataclasses import fields

    from dreaming.memory.recall import Candidate
    from dreaming.memory.recall._apply import plan_promotion

    values: dict[str, object] = {f.name: None for f in fields(Candidate)}
    values.update(path="memory/2026-08-31.md", start_line=1, end_line=1, snippet="Staging DB_PASS=hunt3r2")
    candidate = Candidate(**values)  # type: ignore[arg-type]
    assert plan_promotion(candidate, ["Staging DB_PASS=hunt3r2"]) == "holds_secret"
