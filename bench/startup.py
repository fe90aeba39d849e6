"""Benchmark: wall time of a whole ``dicetower`` process, this tree against a named baseline.

Usage::

    .venv/bin/python bench/startup.py --baseline REV [--runs 40] [-- roll 1d6]

Each run is one fresh interpreter running ``python -m dicetower.firmware.cli ARGS`` (default
``roll 1d6``), timed from start to exit with ``perf_counter``: interpreter start-up, imports,
the roll and the exit, what a person typing the command waits for. The baseline is commit
REV checked out into a temporary git worktree (:class:`previous_version.Checkout`); this tree
is put behind the same kind of shim, so both import ``dicetower`` the same way. Runs
alternate between the two versions so background load hits both alike. Bytecode caching is
on whatever ``PYTHONDONTWRITEBYTECODE`` says (an installed package has its ``.pyc`` files),
and two unrecorded runs of each come first, so neither version is timed compiling its
source. A bare ``python -c pass`` is timed the same way as the floor no command can go
under. The last column says whether the command imported OpenCV or numpy (from
``python -X importtime``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["main", "time_process"]

HEAVY = ("cv2", "numpy")
WARM_UP_RUNS = 2


def _checkout_class() -> type:
    spec = importlib.util.spec_from_file_location(
        "previous_version", Path(__file__).with_name("previous_version.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Checkout


def _cached(env: dict[str, str]) -> dict[str, str]:
    """``env`` with bytecode caching on."""
    return {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}


def time_process(cmd: list[str], env: dict[str, str] | None, cwd: Path) -> float:
    """Seconds from starting ``cmd`` to its exit; a failing command is an error, not a figure."""
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return seconds


def heavy_imports(cmd: list[str], env: dict[str, str] | None, cwd: Path) -> list[str]:
    """Which of OpenCV and numpy the command imports, read from ``-X importtime``."""
    done = subprocess.run(
        [cmd[0], "-X", "importtime", *cmd[1:]], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    return [m for m in HEAVY if m in names]


def _row(name: str, times: list[float], heavy: str) -> str:
    ms = sorted(t * 1000.0 for t in times)
    p90 = ms[min(len(ms) - 1, round(0.9 * (len(ms) - 1)))]
    return f"  {name:<28} {statistics.median(ms):>9.1f} {p90:>9.1f} {ms[0]:>9.1f}  {heavy}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, metavar="REV", help="git revision to compare against")
    parser.add_argument("--runs", type=int, default=40, help="timed processes per version (default 40)")
    parser.add_argument("command", nargs="*", default=["roll", "1d6"], help="dicetower arguments")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    checkout = _checkout_class()
    cli = [sys.executable, "-m", "dicetower.firmware.cli", *args.command]
    with checkout(args.baseline) as base, checkout(None) as here:
        sides = {
            f"baseline {args.baseline}": (_cached(base.env()), base.root),
            "this tree": (_cached(here.env()), here.root),
        }
        floor: list[float] = []
        times: dict[str, list[float]] = {name: [] for name in sides}
        for i in range(WARM_UP_RUNS + args.runs):
            for name, (env, cwd) in sides.items():
                t = time_process(cli, env, cwd)
                if i >= WARM_UP_RUNS:
                    times[name].append(t)
            t = time_process([sys.executable, "-c", "pass"], _cached(dict(os.environ)), Path.cwd())
            if i >= WARM_UP_RUNS:
                floor.append(t)
        heavy = {
            name: ", ".join(heavy_imports(cli, env, cwd)) or "neither" for name, (env, cwd) in sides.items()
        }
    print(f"python {sys.version.split()[0]}; dicetower {' '.join(args.command)}: {args.runs} processes each")
    print(f"  {'version':<28} {'median ms':>9} {'p90 ms':>9} {'best ms':>9}  imports cv2/numpy")
    for name in sides:
        print(_row(name, times[name], heavy[name]))
    print(_row("python -c pass (floor)", floor, "-"))
    base_name, here_name = sides
    ratio = statistics.median(times[base_name]) / statistics.median(times[here_name])
    print(f"  median ratio baseline / this tree: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
