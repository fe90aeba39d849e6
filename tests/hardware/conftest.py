"""The tower's parts, rendered once per test run (``rendering.py``)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from rendering import HARDWARE, TEST_FN, Rendered, can_draw, echoes


@pytest.fixture(scope="session")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    if shutil.which("openscad") is None:
        pytest.skip("OpenSCAD is not installed (Debian package 'openscad')")
    out = tmp_path_factory.mktemp("render")
    args = [sys.executable, str(HARDWARE / "render.py"), "--out", str(out), "--fn", str(TEST_FN)]
    if not can_draw():
        args.append("--no-png")
    result = subprocess.run(args, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    console = subprocess.run(
        ["openscad", "-o", str(out / "tower.csg"), str(HARDWARE / "tower.scad")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert console.returncode == 0, console.stderr
    return Rendered(out / "stl", out / "img" if can_draw() else None, echoes(console.stderr), console.stderr)
