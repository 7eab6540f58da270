"""Where OpenClaw 2026.9 keeps its state, found exactly as OpenClaw finds it, and how it names a workspace there.

Every function takes the environment as a mapping (the process environment by default) so that tests and callers can
say which OpenClaw they mean. The rules are OpenClaw's (``home-dir``, ``state-dir``, ``workspace-default-path`` and
``dreaming-state`` in its dist code):

- the home is ``OPENCLAW_HOME`` (a leading ``~`` expanded against the OS home), else ``HOME``, else ``USERPROFILE``,
  else the OS home, else the current directory; ``"undefined"`` and ``"null"`` count as unset;
- the state dir is ``OPENCLAW_STATE_DIR`` (trimmed, ``~`` expanded against that home, made absolute), else
  ``<home>/.openclaw`` if it exists, else ``<home>/.clawdbot`` if it exists, else ``<home>/.openclaw``;
- its SQLite store is ``<state dir>/state/openclaw.sqlite``;
- a workspace is named by ``sha256_hex(path.resolve(dir))``: made absolute and normalized, symbolic links **not**
  resolved.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "DB_RELATIVE",
    "db_path",
    "default_workspace_dir",
    "entry_key",
    "home_dir",
    "node_path_resolve",
    "resolve_home_relative",
    "state_dir",
    "workspace_key",
]

DB_RELATIVE = Path("state") / "openclaw.sqlite"
"""The shared state database, relative to the state dir."""

_PROFILE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$", re.IGNORECASE)
_TILDE_RE = re.compile(r"^~(?=$|[\\/])")


def _value(env: Mapping[str, str], name: str) -> str | None:
    # OpenClaw's normalizeHomeDirValue: trimmed, and the strings "undefined" and "null" count as unset.
    raw = env.get(name)
    trimmed = raw.strip() if raw is not None else ""
    return trimmed if trimmed and trimmed not in {"undefined", "null"} else None


def node_path_resolve(path: str, *, cwd: str | None = None) -> str:
    """Return Node's ``path.resolve(path)`` on POSIX: absolute, ``.``/``..``/repeated and trailing slashes removed.

    Symbolic links are not resolved. A relative ``path`` is taken from ``cwd`` (the current directory by default).
    """
    joined = os.path.join(cwd if cwd is not None else os.getcwd(), path)
    normalized = os.path.normpath(joined)
    # POSIX keeps a leading "//" (implementation-defined); Node collapses it.
    return "/" + normalized.lstrip("/")


def _os_home(env: Mapping[str, str]) -> str | None:
    # HOME, USERPROFILE, Termux's home, then the passwd entry (Node's os.homedir()).
    raw = _value(env, "HOME") or _value(env, "USERPROFILE")
    if raw is None:
        prefix = _value(env, "PREFIX")
        if prefix and _value(env, "ANDROID_DATA") and re.search(r"(?:^|/)com\.termux/files/usr/?$", prefix):
            raw = os.path.join(prefix, "..", "home")
    if raw is None:
        try:
            raw = pwd.getpwuid(os.getuid()).pw_dir.strip() or None
        except KeyError:
            raw = None
    return node_path_resolve(raw) if raw else None


def home_dir(env: Mapping[str, str] | None = None) -> str:
    """Return OpenClaw's effective home (``OPENCLAW_HOME``, else the OS home, else the current directory)."""
    env = os.environ if env is None else env
    explicit = _value(env, "OPENCLAW_HOME")
    if explicit is not None:
        if explicit == "~" or explicit.startswith(("~/", "~\\")):
            os_home = _os_home(env)
            if os_home is not None:
                return node_path_resolve(_TILDE_RE.sub(lambda _: os_home, explicit, count=1))
        else:
            return node_path_resolve(explicit)
    return _os_home(env) or node_path_resolve(".")


def resolve_home_relative(value: str, env: Mapping[str, str] | None = None, *, cwd: str | None = None) -> str:
    """Return a user-supplied path trimmed, a leading ``~`` expanded against the home, made absolute from ``cwd``."""
    trimmed = value.strip()
    if trimmed.startswith("~"):
        home = home_dir(env)
        trimmed = _TILDE_RE.sub(lambda _: home, trimmed, count=1)
    return node_path_resolve(trimmed, cwd=cwd)


def state_dir(env: Mapping[str, str] | None = None) -> str:
    """Return the state dir OpenClaw would use in ``env`` (it need not exist)."""
    env = os.environ if env is None else env
    override = (env.get("OPENCLAW_STATE_DIR") or "").strip()
    if override:
        return resolve_home_relative(override, env)
    home = home_dir(env)
    new = os.path.join(home, ".openclaw")
    if os.path.exists(new):
        return new
    legacy = os.path.join(home, ".clawdbot")
    return legacy if os.path.exists(legacy) else new


def db_path(state: str | Path) -> Path:
    """Return ``<state>/state/openclaw.sqlite``."""
    return Path(state) / DB_RELATIVE


def default_workspace_dir(env: Mapping[str, str] | None = None, *, state: str | None = None) -> str | None:
    """Return the workspace OpenClaw uses when none is configured, as OpenClaw spells it; None for a bad profile name.

    ``state`` stands for ``OPENCLAW_STATE_DIR`` when dreaming was told the state dir another way (its own config).
    """
    env = os.environ if env is None else env
    explicit = (env.get("OPENCLAW_WORKSPACE_DIR") or "").strip()
    if explicit:
        return node_path_resolve(explicit)  # no "~" expansion here: OpenClaw does none
    if (env.get("OPENCLAW_STATE_DIR") or "").strip():
        return os.path.join(state_dir(env), "workspace")
    if state is not None:
        return os.path.join(state, "workspace")
    profile = (env.get("OPENCLAW_PROFILE") or "").strip()
    if profile and profile.lower() != "default":
        if not _PROFILE_RE.match(profile):
            return None  # OpenClaw throws "Invalid profile name": it has no default workspace then
        return os.path.join(home_dir(env), f".openclaw-{profile}", "workspace")
    return os.path.join(home_dir(env), ".openclaw", "workspace")


def _sha256_hex(text: str) -> str:
    # Paths that are not UTF-8 reach Python with surrogate escapes: hash their original bytes.
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def workspace_key(workspace_dir: str) -> str:
    """Return OpenClaw's workspace key: ``sha256_hex(path.resolve(workspace_dir))`` (POSIX: no lowercasing)."""
    return _sha256_hex(node_path_resolve(workspace_dir))


def entry_key(workspace: str, logical_key: str) -> str:
    """Return the row key ``<workspace key>:<sha256_hex(logical_key)>`` of a wrapped entry (``workspace`` is a key)."""
    return f"{workspace}:{_sha256_hex(logical_key)}"
