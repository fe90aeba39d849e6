"""Render every printable part of ``tower.scad`` to STL, and a PNG view of each part and of the assembly.

    python3 hardware/render.py                 # STLs in hardware/stl/, pictures in hardware/img/
    python3 hardware/render.py --out DIR       # both under DIR (DIR/stl, DIR/img)
    python3 hardware/render.py --fn 24 --no-png

Needs OpenSCAD 2021.01 or later (Debian: ``apt install openscad``). OpenSCAD draws its PNG views with
OpenGL, so on a machine without a display the views are drawn under ``xvfb-run`` (Debian: ``apt install xvfb
xauth``). The parts come from the ``PARTS`` list in ``tower.scad``, so a part added there is rendered here
without a change. Each part is rendered by its own OpenSCAD process, several at a time, and the figures
``tower.scad`` echoes (lens height, scale, cable run) are printed at the end. Standard library only: it runs
before any venv exists.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCAD = HERE / "tower.scad"
#: Views drawn besides each part: every part in place, and the base's contents with the base left out.
VIEWS = ("assembly", "inside")
#: One part's render is bounded: CGAL on the largest part takes seconds, not minutes.
TIMEOUT_S = 600
IMG_SIZE = "640,480"


def parts(scad: Path = SCAD) -> list[str]:
    """The printable parts, read from the ``PARTS = [...]`` line of ``tower.scad``."""
    match = re.search(r"^PARTS\s*=\s*\[(.*?)\];", scad.read_text(encoding="utf-8"), re.M | re.S)
    if match is None:
        raise SystemExit(f"render: no PARTS = [...] list in {scad}")
    return re.findall(r'"([a-z_]+)"', match.group(1))


def openscad_command(scad: Path, out: Path, part: str, fn: int | None, png: bool) -> list[str]:
    """One OpenSCAD call: an STL (CGAL render) or a PNG view (OpenGL preview, in colour)."""
    exe = shutil.which("openscad")
    if exe is None:
        raise SystemExit("render: OpenSCAD is not installed (Debian: apt install openscad)")
    cmd = [exe, "-o", str(out), "-D", f'part="{part}"']
    if fn is not None:
        cmd += ["-D", f"$fn={fn}"]
    if png:
        cmd += ["--imgsize", IMG_SIZE, "--viewall", "--autocenter", "--colorscheme", "Tomorrow"]
    return [*cmd, str(scad)]


#: tries of one PNG view: OpenSCAD's OpenGL preview under a shared virtual display now and then dies of a
#: signal (a segfault in the software GL) with several views drawn at once; the same view then draws fine
VIEW_TRIES = 3


def run(cmd: list[str], out: Path, tries: int = 1) -> str:
    """Run one render; the output must exist and be non-empty. Returns OpenSCAD's console text.

    A render killed by a signal is tried again, ``tries`` times in all; any other failure is final.
    """
    for _ in range(tries):
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        if result.returncode >= 0:
            break
    console = result.stdout + result.stderr
    if result.returncode != 0 or not out.is_file() or out.stat().st_size == 0:
        raise RuntimeError(f"{out.name}: OpenSCAD failed (exit {result.returncode}):\n{console[-2000:]}")
    if "WARNING:" in console:
        raise RuntimeError(f"{out.name}: OpenSCAD warned:\n{console[-2000:]}")
    return console


def render(
    out_stl: Path, out_img: Path | None, *, fn: int | None = None, jobs: int = 0, scad: Path = SCAD
) -> str:
    """Render every part (and the views, unless ``out_img`` is None); returns the echoed figures."""
    out_stl.mkdir(parents=True, exist_ok=True)
    tasks = [
        (openscad_command(scad, out_stl / f"{p}.stl", p, fn, False), out_stl / f"{p}.stl", 1)
        for p in parts(scad)
    ]
    if out_img is not None:
        out_img.mkdir(parents=True, exist_ok=True)
        for p in [*parts(scad), *VIEWS]:
            view = out_img / f"{p}.png"
            tasks.append((openscad_command(scad, view, p, fn, True), view, VIEW_TRIES))
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        consoles = list(pool.map(lambda task: run(*task), tasks))
    for _, out, _tries in tasks:
        print(f"wrote {out}")
    return "\n".join(re.findall(r'^ECHO: "(.*)"$', consoles[0], re.M))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="render.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, help="write DIR/stl and DIR/img (default: hardware/stl, hardware/img)"
    )
    parser.add_argument(
        "--fn", type=int, help="facets per circle, overriding $fn (24 renders fast and coarse)"
    )
    parser.add_argument("--no-png", action="store_true", help="STLs only, no PNG views")
    parser.add_argument(
        "--jobs", type=int, default=0, help="OpenSCAD processes at a time (default: one per CPU)"
    )
    args = parser.parse_args(argv)
    if not args.no_png and not os.environ.get("DISPLAY"):
        # one virtual display for every view: xvfb-run starts it, runs this script again inside it, stops it
        xvfb = shutil.which("xvfb-run")
        if xvfb is None:
            parser.error(
                "no display and no xvfb-run for the PNG views (apt install xvfb xauth), or pass --no-png"
            )
        argv = sys.argv[1:] if argv is None else argv
        return subprocess.run([xvfb, "-a", sys.executable, str(Path(__file__).resolve()), *argv]).returncode
    if args.fn is not None and not 3 <= args.fn <= 360:
        parser.error("--fn must be 3 to 360")
    stl, img = (args.out / "stl", args.out / "img") if args.out else (HERE / "stl", HERE / "img")
    try:
        figures = render(stl, None if args.no_png else img, fn=args.fn, jobs=args.jobs)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"render: {exc}", file=sys.stderr)
        return 1
    print(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
