from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from dreaming.errors import RetryableToolError, ToolError
from dreaming.memory.research import EvidencePool, SourceHit
from dreaming.tools.codebase import (
    DEFINITION_BONUS,
    MAX_HITS_PER_FILE,
    FakeCodebaseSearch,
    RipgrepSearch,
    codebase_search_tool,
    find_rg,
    is_secret_path,
    line_score,
    outline_lines,
    words_held,
)

PLANTED = "sk-proj-PLANTEDSECRET1234567890abcdef"

pytestmark = pytest.mark.skipif(find_rg() is None, reason="ripgrep is not installed")


def _tree(root: Path) -> Path:
    code = root / "project"
    (code / "src").mkdir(parents=True)
    (code / ".gitignore").write_text("build/\n")
    (code / "src" / "settings.py").write_text(
        "# Research settings\n"
        "\n"
        "CONFIDENCE_THRESHOLD = 0.7  # keep findings at or above this\n"
        "\n"
        f'OPENAI_KEY = "{PLANTED}"  # confidence threshold key\n'
    )
    (code / "build").mkdir()
    (code / "build" / "generated.py").write_text("CONFIDENCE_THRESHOLD = 0.1\n")
    (code / ".env").write_text(f"OPENAI_API_KEY={PLANTED}\nCONFIDENCE_THRESHOLD=0.9\n")
    (code / "server.pem").write_text("CONFIDENCE_THRESHOLD in a pem\n")
    (code / "deploy_credentials.txt").write_text("CONFIDENCE_THRESHOLD credentials\n")
    return code


def _run(coro: object) -> list[SourceHit]:
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_finds_code_respects_gitignore_and_never_opens_secret_files(tmp_path: Path) -> None:
    code = _tree(tmp_path)
    search = RipgrepSearch([code], base=tmp_path)
    hits = _run(search.search("confidence threshold"))
    paths = {hit.path for hit in hits}
    assert paths == {"project/src/settings.py"}
    first = next(hit for hit in hits if hit.line == 3)
    assert first.locator == "project/src/settings.py:3"
    assert first.line_text == "CONFIDENCE_THRESHOLD = 0.7  # keep findings at or above this"
    assert "# Research settings" in first.snippet  # context before
    for hit in hits:
        assert PLANTED not in hit.snippet
        assert PLANTED not in (hit.line_text or "")
    assert any("[REDACTED]" in hit.snippet for hit in hits)


def test_the_exact_phrase_ranks_first_and_matches_are_bounded(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    lines = [f"value_{i} = {i}  # gap threshold" for i in range(30)]
    lines.append("the knowledge gap threshold is documented here")
    (code / "a.py").write_text("\n".join(lines) + "\n")
    hits = _run(RipgrepSearch([code], max_matches=20).search("knowledge gap threshold"))
    # The rarest term ("knowledge") decides: its line ranks first; one file fills at most MAX_HITS_PER_FILE slots.
    assert hits[0].line_text == "the knowledge gap threshold is documented here"
    assert len(hits) == MAX_HITS_PER_FILE
    assert hits[0].scope == "" and hits[0].role == "code"


def test_read_line_rereads_inside_roots_only(tmp_path: Path) -> None:
    code = _tree(tmp_path)
    search = RipgrepSearch([code], base=tmp_path)
    assert (
        search.read_line("project/src/settings.py", 3) == "CONFIDENCE_THRESHOLD = 0.7  # keep findings at or above this"
    )
    assert PLANTED not in (search.read_line("project/src/settings.py", 5) or "")
    assert search.read_line("project/.env", 1) is None
    assert search.read_line("project/src/settings.py", 99) is None
    (tmp_path / "outside.txt").write_text("outside\n")
    assert search.read_line("outside.txt", 1) is None


def test_symlinks_out_of_the_roots_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret_notes.py").write_text("confidence threshold outside the root\n")
    code = tmp_path / "code"
    code.mkdir()
    (code / "inside.py").write_text("confidence threshold inside\n")
    (code / "link.py").symlink_to(outside / "secret_notes.py")
    (code / "linkdir").symlink_to(outside, target_is_directory=True)
    hits = _run(RipgrepSearch([code], base=tmp_path).search("confidence threshold"))
    assert [hit.path for hit in hits] == ["code/inside.py"]


def test_timeout_kills_ripgrep_and_is_retryable(tmp_path: Path) -> None:
    slow = tmp_path / "slow-rg"
    pidfile = tmp_path / "rg.pid"
    slow.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 30\n")
    slow.chmod(slow.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "a.py").write_text("x\n")
    search = RipgrepSearch([tmp_path], rg_path=slow, timeout_s=0.3)
    with pytest.raises(RetryableToolError):
        _run(search.search("anything"))
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left sleeping
        os.kill(int(pidfile.read_text()), 0)


def test_missing_binary_is_a_tool_error(tmp_path: Path) -> None:
    search = RipgrepSearch([tmp_path], rg_path=tmp_path / "no-such-rg")
    with pytest.raises(ToolError):
        _run(search.search("anything"))


def test_missing_roots_find_nothing(tmp_path: Path) -> None:
    assert _run(RipgrepSearch([tmp_path / "missing"]).search("x")) == []


def test_secret_path_filter() -> None:
    for path in (".env", "a/.env.local", "k/server.pem", "id_rsa", "x/aws_credentials", ".git/config", "a.P12"):
        assert is_secret_path(path), path
    for path in ("src/env.py", "keys.py", "docs/identity.md"):
        assert not is_secret_path(path), path


def test_fake_and_langchain_tool_fence_hits_with_ids() -> None:
    hit = SourceHit(
        source_type="codebase", locator="src/a.py:3", snippet="THRESHOLD = 0.7", path="src/a.py", line=3, line_text="x"
    )
    fake = FakeCodebaseSearch(lambda q: [hit, hit])
    pool = EvidencePool()
    tool = codebase_search_tool(fake, pool=pool)
    message = asyncio.run(
        tool.ainvoke({"type": "tool_call", "id": "call-1", "name": "codebase_search", "args": {"query": "threshold"}})
    )
    assert fake.calls == ["threshold"]
    assert '<evidence id="E1" source="codebase" locator="src/a.py:3">' in message.content
    assert message.artifact == [hit, hit]
    assert len(pool) == 1


def test_no_process_is_left_behind(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("needle\n" * 10)
    _run(RipgrepSearch([tmp_path]).search("needle"))

    def our_rg(pid: str) -> bool:
        # Only rg processes started by this test process count: other test runs may be using rg at the same time.
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return False
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        return fields.get("Name", "").strip() == "rg" and fields.get("PPid", "").strip() == str(os.getpid())

    leftovers = [
        pid for pid in (os.listdir("/proc") if os.path.isdir("/proc") else []) if pid.isdigit() and our_rg(pid)
    ]
    assert leftovers == []


def test_an_identifier_is_searched_as_written_and_ranks_its_own_lines_first(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "a.py").write_text('flat = " ".join(text.split())\nflat_band = 2\n')
    (code / "b.py").write_text('K_FLAT = 1.0\n"""The flat band multiplier."""\n')
    hits = _run(RipgrepSearch([code]).search("K_FLAT"))
    assert [hit.line_text for hit in hits] == ["K_FLAT = 1.0"]
    hits = _run(RipgrepSearch([code]).search("what is K_FLAT"))
    assert hits[0].line_text == "K_FLAT = 1.0"
    assert all("flat =" not in (hit.line_text or "") for hit in hits)


def test_a_definition_of_what_was_asked_outranks_its_uses_and_fragments_sink(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "a_init.py").write_text('__all__ = [\n    "lock_file",\n]\n')
    (code / "b_run.py").write_text("with Lock(ws.lock_file, timeout_s=3):\n    pass\n")
    (code / "c_ws.py").write_text('def lock_file(self) -> Path:\n    """The lock file of a run."""\n')
    hits = _run(RipgrepSearch([code]).search("where is the lock file"))
    assert [hit.line_text for hit in hits][:1] == ["def lock_file(self) -> Path:"]
    assert (hits[-1].line_text or "").strip() == '"lock_file",'


def test_roots_outside_the_workspace_give_locators_relative_to_their_common_parent(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "docs").mkdir()
    (project / "src" / "pkg" / "rem.py").write_text("# flat band\nK_FLAT = 1.0\n")
    (project / "docs" / "notes.md").write_text("K_FLAT is the flat band multiplier.\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    search = RipgrepSearch([project / "src", project / "docs"], base=workspace)
    hits = _run(search.search("K_FLAT"))
    assert sorted(hit.locator for hit in hits) == ["docs/notes.md:1", "src/pkg/rem.py:2"]
    assert search.read_line("src/pkg/rem.py", 2) == "K_FLAT = 1.0"
    assert search.read_line(str(project / "src" / "pkg" / "rem.py"), 2) == "K_FLAT = 1.0"  # older, absolute locators
    assert search.read_line("pkg/rem.py", 2) is None
    # One root: relative to its own parent folder.
    assert [hit.locator for hit in _run(RipgrepSearch([project / "src"], base=workspace).search("K_FLAT"))] == [
        "src/pkg/rem.py:2"
    ]


def test_a_search_word_must_start_a_word_or_a_name_part() -> None:
    assert words_held(["detect", "back", "max"], "If the shell cannot be detected, None is returned.") == {"detect"}
    assert words_held(["back"], "callback: Callable[..., Any] | None = None,") == set()  # "back" inside callback
    assert words_held(["max", "attempt"], "max_attempts: int = 3") == {"max", "attempt"}
    assert words_held(["maximum"], "MAX_WAIT = 5") == {"maximum"}  # its short form starts a part


def test_an_entry_of_a_multi_line_literal_is_scoped_by_the_name_it_is_assigned_to() -> None:
    source = [
        "def cl100k_base():",
        "    special_tokens = {",
        "        ENDOFTEXT: 100257,",
        "        # the prompt marker",
        "        ENDOFPROMPT: 100276,",
        "    }",
        "    return {",
        '        "name": "cl100k_base",',
        "    }",
        "LIMITS = [",
        "    1,",
        "]",
        "after = 2",
    ]
    outline = outline_lines(source)
    assert outline[2] == ("cl100k_base.special_tokens", "body")
    assert outline[3] == ("cl100k_base.special_tokens", "comment")
    assert outline[4] == ("cl100k_base.special_tokens", "body")
    assert outline[5] == ("cl100k_base.special_tokens", "body")  # the closing bracket still belongs to it
    assert outline[7] == ("cl100k_base", "body")  # a returned literal is assigned to no name
    assert outline[10] == ("LIMITS", "code")
    assert outline[12] == ("", "code")


def test_a_generic_name_earns_no_definition_bonus_and_a_literal_in_the_asked_scope_does() -> None:
    weights = {"default": 1.0, "mode": 1.0, "filetext": 1.0}
    generic = line_score("default: Any = None,", "signature", {"default"}, set(), weights, "value")
    specific = line_score("mode: str | None = None,", "signature", {"mode"}, set(), weights, "value")
    assert specific - generic == pytest.approx(DEFINITION_BONUS)
    said = 'The default mode of this class is `mode="r"`.'
    outside = line_score(said, "docstring", {"default", "mode"}, {"filetext"}, weights, "value")
    inside = line_score(said, "docstring", {"default", "mode"}, {"filetext"}, weights, "value", in_asked=True)
    assert inside - outside == pytest.approx(DEFINITION_BONUS)
    example = line_score(said, "example", {"default", "mode"}, {"filetext"}, weights, "value", in_asked=True)
    assert example < outside  # a usage example never ranks as a definition


def test_the_default_stated_in_the_asked_class_outranks_parameters_of_other_classes(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "models.py").write_text(
        "class ParameterInfo:\n"
        "    def __init__(\n"
        "        self,\n"
        "        mode: str | None = None,\n"
        "        default: Any = None,\n"
        "    ) -> None:\n"
        "        pass\n"
        "\n"
        "class FileText(io.TextIOWrapper):\n"
        '    """\n'
        "    Gives you a file-like object for reading text.\n"
        '    The default mode of this class is `mode="r"`.\n'
        '    """\n'
    )
    hits = _run(RipgrepSearch([code]).search("default file open mode for a typer.FileText parameter"))
    assert hits[0].line_text == '    The default mode of this class is `mode="r"`.'
    assert hits[0].scope == "FileText"


def test_secret_names_are_judged_below_the_root_only(tmp_path: Path) -> None:
    # A project kept under a folder whose name says "secret" is still searched; secret files inside it are not.
    code = tmp_path / "wt-secrets" / "project"
    (code / "deploy").mkdir(parents=True)
    (code / "app.py").write_text("RETRY_BUDGET = 3\n")
    (code / "deploy" / "secrets.yaml").write_text("RETRY_BUDGET: 9\n")
    (code / "deploy" / "my_secret_notes.md").write_text("RETRY_BUDGET is 7\n")
    (code / "deploy" / "tls.key").write_text("RETRY_BUDGET tls\n")
    (code / "linked.py").symlink_to(code / "deploy" / "secrets.yaml")
    search = RipgrepSearch([code], base=tmp_path)
    hits = _run(search.search("RETRY_BUDGET"))
    assert {hit.path for hit in hits} == {"wt-secrets/project/app.py"}
    assert search.read_line("wt-secrets/project/app.py", 1) == "RETRY_BUDGET = 3"
    assert search.read_line("wt-secrets/project/deploy/secrets.yaml", 1) is None
