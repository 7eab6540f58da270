"""Dream one night on a scratch copy of the demo workspace and show what happened (``make demo``).

The tracked files under ``examples/demo/workspace`` are never modified: they are copied to ``.demo/`` first.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).resolve().parent / "workspace"
SCRATCH = ROOT / ".demo" / "workspace"
NIGHT = "2019-01-02T03:00:00+00:00"  # just after the bundled prices end (see README.md)


def dreaming(*args: str) -> int:
    print(f"\n$ dreaming {' '.join(args)}", flush=True)
    return subprocess.call([sys.executable, "-m", "dreaming", *args])


def main() -> int:
    if SCRATCH.exists():
        shutil.rmtree(SCRATCH)
    shutil.copytree(SOURCE, SCRATCH)
    # Research reads this repository's own code and docs: make the scratch copy's roots absolute.
    toml = SCRATCH / "dreaming.toml"
    roots = f'codebase_roots = ["{(ROOT / "src").as_posix()}", "{(ROOT / "docs").as_posix()}"]'
    toml.write_text(re.sub(r"^codebase_roots = .*$", roots, toml.read_text(), flags=re.MULTILINE))
    print(f"Demo workspace copied to {SCRATCH}")
    code = dreaming("run", "--workspace", str(SCRATCH), "--now", NIGHT)
    if code != 0:
        return code
    code = dreaming("insights", "--workspace", str(SCRATCH))
    if code != 0:
        return code
    archive = SCRATCH / "memory" / "insights" / "archive"
    print("\nWhere the files are:")
    print(f"  long-term memory index  {SCRATCH / 'MEMORY.md'}")
    print(f"  dream diary             {SCRATCH / 'DREAMS.md'}")
    print(f"  active insights         {SCRATCH / 'memory' / 'insights'}")
    print(f"  retired insights        {archive} ({len(list(archive.glob('*.md'))) if archive.is_dir() else 0} files)")
    print(f"  machine state           {SCRATCH / 'memory' / '.dreams'}")
    print("\nLook at the night in the browser (read-only; Ctrl-C stops):")
    print(f"  {Path(sys.executable).parent / 'dreaming'} view --workspace {SCRATCH}")
    print("or write the same pages as static HTML:")
    print(f"  {Path(sys.executable).parent / 'dreaming'} view --workspace {SCRATCH} --export .demo/site")
    return 0


if __name__ == "__main__":
    sys.exit(main())
