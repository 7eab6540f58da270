"""Start-up: the CPU a command costs as a whole process, against ``python -c pass`` in the same run (issue 14).

Runs ``dreaming --help`` and ``dreaming status`` (on a fresh workspace) the way the console script does
(``from dreaming.cli import main; main()``), each three times after one untimed run, and reads their CPU (user plus
system) from ``resource.getrusage(RUSAGE_CHILDREN)``; prints the min and the median of the three. The children keep
their compiled bytecode in a temporary folder (``PYTHONPYCACHEPREFIX``), as an installed package has it, even where
``PYTHONDONTWRITEBYTECODE`` is set (compiling the package's sources would add about 0.1 s to every run).

For scale, it also times a Typer app of one command (``--help``): Typer's own floor, which no command goes below.
Target: ``--help`` and ``status`` at most 0.35 s of CPU. ``--scale`` does not apply.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import dreaming
from dreaming.memory import Workspace, init_workspace

RUNS = 3
TARGET_S = 0.35
ENTRY = "import sys; from dreaming.cli import main; sys.exit(main())"  # what the `dreaming` console script runs
TYPER_FLOOR = """
import typer
app = typer.Typer(add_completion=False)
@app.command()
def status(workspace: str = ".") -> None:
    '''Show the status.'''
app()
"""


def _cpu(args: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _times(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    _cpu(args, env)  # untimed: writes the bytecode, warms the file cache
    samples = [_cpu(args, env) for _ in range(RUNS)]
    return min(samples), statistics.median(samples)


def run(scale: float) -> None:
    del scale  # a process start does not scale
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        ws = Workspace.at(Path(tmp) / "ws")
        init_workspace(ws)
        source = str(Path(dreaming.__file__).resolve().parents[1])
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH")) if p)
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        floor = _times([sys.executable, "-c", "pass"], env)
        rows = {
            "dreaming --help": _times([sys.executable, "-c", ENTRY, "--help"], env),
            "dreaming status": _times([sys.executable, "-c", ENTRY, "status", "--workspace", str(ws.root)], env),
        }
        typer_floor = _times([sys.executable, "-c", TYPER_FLOOR, "--help"], env)
    print(f"{'python -c pass':34s} CPU min {floor[0]:.3f} s   median {floor[1]:.3f} s")
    for name, (low, mid) in rows.items():
        verdict = "meets" if mid <= TARGET_S else "MISSES"
        print(f"{name:34s} CPU min {low:.3f} s   median {mid:.3f} s   ({mid / floor[1]:.0f}x python -c pass, "
              f"{floor[1]:.3f} s; target <= {TARGET_S} s: {verdict})")  # fmt: skip
    help_median = rows["dreaming --help"][1]
    print(f"{'a one-command Typer app --help':34s} CPU min {typer_floor[0]:.3f} s   median {typer_floor[1]:.3f} s   "
          f"(Typer's floor: {typer_floor[1] / help_median:.0%} of dreaming --help)")  # fmt: skip
