"""Where OpenClaw keeps its state, and how it names a workspace, exactly as OpenClaw 2026.9 computes them."""

from __future__ import annotations

import os
from pathlib import Path

from dreaming.memory.recall._openclaw_paths import (
    db_path,
    default_workspace_dir,
    entry_key,
    home_dir,
    node_path_resolve,
    resolve_home_relative,
    state_dir,
    workspace_key,
)

# Computed by Node 24's own path.resolve + crypto.createHash("sha256") (the reference's "acafeabac1c06a4e..." for
# this path does not match what Node computes; this does).
EXAMPLE_KEY = "11bc312af950cf65e7a6415f2debd993c70c4ddb7a2575e5b145ad14689e236e"


def test_the_workspace_key_is_sha256_of_nodes_path_resolve() -> None:
    assert workspace_key("/tmp/example/ws") == EXAMPLE_KEY
    assert workspace_key("/tmp//example/./ws/../ws/") == EXAMPLE_KEY
    assert workspace_key("//tmp/example/ws") == EXAMPLE_KEY  # Node collapses a leading "//"; POSIX normpath keeps it


def test_an_entry_key_is_the_workspace_key_and_sha256_of_the_logical_key() -> None:
    row_key = entry_key(EXAMPLE_KEY, "memory:memory/2026-04-10.md:3:3")
    assert row_key == f"{EXAMPLE_KEY}:13863f9c7cf77de19190cf3d1be874f909c5a2b53ec80d6058c40d0510a726ed"


def test_symbolic_links_are_not_resolved_and_relative_paths_start_at_the_cwd(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    assert node_path_resolve(str(tmp_path / "link")) == str(tmp_path / "link")
    assert workspace_key(str(tmp_path / "link")) != workspace_key(str(real))
    assert node_path_resolve("ws/../other", cwd="/base") == "/base/other"


def test_the_home_is_openclaw_home_then_home_and_undefined_counts_as_unset() -> None:
    env = {"HOME": "/h/user", "OPENCLAW_HOME": " undefined "}
    assert home_dir(env) == "/h/user"
    assert home_dir({"HOME": "null", "USERPROFILE": "/h/profile"}) == "/h/profile"
    assert home_dir({"HOME": "/h/user", "OPENCLAW_HOME": "~/claw"}) == "/h/user/claw"
    assert home_dir({"HOME": "/h/user", "OPENCLAW_HOME": "/srv//claw/"}) == "/srv/claw"


def test_the_state_dir_follows_openclaw(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    assert state_dir({**env, "OPENCLAW_STATE_DIR": "  ~/custom/  "}) == f"{home}/custom"
    assert state_dir({**env, "OPENCLAW_STATE_DIR": "~other"}) == os.path.join(os.getcwd(), "~other")  # not ~/...
    assert state_dir(env) == f"{home}/.openclaw"  # nothing exists: the new name
    (home / ".clawdbot").mkdir()
    assert state_dir(env) == f"{home}/.clawdbot"  # only the legacy one exists
    (home / ".openclaw").mkdir()
    assert state_dir(env) == f"{home}/.openclaw"
    assert db_path(state_dir(env)) == home / ".openclaw" / "state" / "openclaw.sqlite"
    assert resolve_home_relative("state", env, cwd="/ws") == "/ws/state"


def test_the_default_workspace_follows_openclaw() -> None:
    env = {"HOME": "/h"}
    assert default_workspace_dir(env) == "/h/.openclaw/workspace"
    assert default_workspace_dir({**env, "OPENCLAW_PROFILE": "Default"}) == "/h/.openclaw/workspace"
    assert default_workspace_dir({**env, "OPENCLAW_PROFILE": "work"}) == "/h/.openclaw-work/workspace"
    assert default_workspace_dir({**env, "OPENCLAW_PROFILE": "../bad"}) is None  # OpenClaw throws
    assert default_workspace_dir({**env, "OPENCLAW_STATE_DIR": "/s"}) == "/s/workspace"
    assert default_workspace_dir({**env, "OPENCLAW_WORKSPACE_DIR": "/w/./x/"}) == "/w/x"
    assert default_workspace_dir(env, state="/configured") == "/configured/workspace"
