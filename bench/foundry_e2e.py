"""Benchmark: a Foundry roll fulfilled by the tower, from the roll's start to Foundry's result.

Usage::

    .venv/bin/python bench/foundry_e2e.py [--rolls 50] [--formula "2d20kh + 1d6"]

Starts ``dicetower serve --tower sim`` (a tray of two blue d20 and a white d6) and a page server on loopback,
loads the Foundry module in headless Chromium under the fake of Foundry's documented API
(``foundry/test/harness.html``), and times ``--rolls`` rolls of ``--formula`` with the tower as the
fulfillment method: from ``Roll.evaluate()`` to its result, every die thrown and read by the simulated tower.
The named baseline, in turns with it on the same tower: the same dice (``2d20+1d6``) thrown through the
module's tower client alone (queue the roll, wait for it on the event stream, fetch it), so the difference is
the module's and Foundry's own work. Prints p50 / p99 / max of each. Loopback only; bounded in count.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

RIG_PATH = Path(__file__).resolve().parent / "foundry_rig.py"


def load_rig() -> Any:
    spec = importlib.util.spec_from_file_location("bench_foundry_rig", RIG_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_foundry_rig"] = module
    spec.loader.exec_module(module)
    return module


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary(name: str, values: list[float]) -> str:
    return (
        f"{name:<34} n={len(values):>3}  p50 {statistics.median(values):7.1f} ms  "
        f"p99 {percentile(values, 0.99):7.1f} ms  max {max(values):7.1f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=50, help="rolls of each kind (1-1000)")
    parser.add_argument("--formula", default="2d20kh + 1d6", help="the Foundry roll")
    parser.add_argument("--direct", default="2d20+1d6", help="the baseline's tower notation (the same dice)")
    args = parser.parse_args(argv)
    if not 1 <= args.rolls <= 1000:
        parser.error("--rolls must be 1-1000")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        parser.error("no chromium on PATH (Debian: apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    rig = load_rig()
    module_ms: list[float] = []
    direct_ms: list[float] = []
    problems = 0
    with (
        tempfile.TemporaryDirectory() as data,
        rig.page_server() as pages,
        rig.sim_tower(Path(data), "--cors-origin", pages, "--rate", "0") as tower,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(f"{pages}{rig.HARNESS}")
        page.wait_for_function("window.harnessReady === true")
        page.evaluate("([url]) => harness.start(url)", [tower])
        for _ in range(args.rolls):
            rolled = page.evaluate("([f]) => harness.roll(f)", [args.formula])
            problems += len(rolled["notifications"])
            module_ms.append(rolled["ms"])
            direct = page.evaluate("([u, n]) => harness.direct(u, n)", [tower, args.direct])
            direct_ms.append(direct["ms"])
        browser.close()
    print(f"tower: dicetower serve --tower sim; Foundry roll {args.formula!r}; baseline {args.direct!r}")
    print(summary("Foundry roll through the module", module_ms))
    print(summary("baseline: tower client alone", direct_ms))
    print(f"notifications (failed throws): {problems}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
