"""hardware/tower.scad and hardware/render.py: the one command renders every printable part to a closed STL
and a PNG view, and the model refuses sizes it cannot build.

Skips, saying so, where OpenSCAD is not installed (Debian package ``openscad``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from rendering import HARDWARE, Rendered
from scad_geometry import read_stl

SCAD = HARDWARE / "tower.scad"
sys.path.insert(0, str(HARDWARE))
import render  # noqa: E402  (hardware/render.py: a script, not a package module)

PARTS = render.parts()


def run_openscad(out: Path, *defines: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("openscad")
    if exe is None:
        pytest.skip("OpenSCAD is not installed (Debian package 'openscad')")
    args = [exe, "-o", str(out)]
    for define in defines:
        args += ["-D", define]
    return subprocess.run([*args, str(SCAD)], capture_output=True, text=True, timeout=120)


def test_the_parts_list_names_every_printable_module() -> None:
    text = SCAD.read_text(encoding="utf-8")
    modules = set(re.findall(r"^module (\w+)\(", text, re.M))
    assert set(PARTS) <= modules
    # every part the list names is selectable by -D part="..."
    for part in PARTS:
        assert f'part == "{part}"' in text, part


def test_the_documented_command_renders_every_part(rendered: Rendered) -> None:
    assert sorted(p.stem for p in rendered.stl.glob("*.stl")) == sorted(PARTS)
    for part in PARTS:
        mesh = read_stl(rendered.stl / f"{part}.stl")
        assert len(mesh.triangles) >= 12, part
        # closed and consistently wound (a slicer mangles anything else), and a solid of positive volume
        assert mesh.open_edges() == 0, f"{part}.stl is not a closed surface"
        assert mesh.volume() > 1000, f"{part}.stl encloses {mesh.volume():.0f} mm³"
        low, high = mesh.bounds
        assert np.all(high - low < 256), f"{part} is larger than a 256 mm print bed: {high - low}"


def test_every_part_and_the_assembly_has_a_picture(rendered: Rendered) -> None:
    if rendered.img is None:
        pytest.skip("no display and no xvfb-run (Debian package 'xvfb') for OpenSCAD's PNG views")
    for name in [*PARTS, *render.VIEWS]:
        image = cv2.imread(str(rendered.img / f"{name}.png"))
        assert image is not None, f"{name}.png is not an image"
        assert image.shape[:2] == (480, 640)
        # not a blank frame: the part covers a good share of the picture
        background = np.all(image == image[0, 0], axis=2)
        assert 0.03 < 1 - background.mean() < 0.95, name


def test_the_committed_pictures_are_the_ones_the_guide_shows() -> None:
    guide = (HARDWARE / "BUILD.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"\]\((img/[\w.]+\.png)\)", guide))
    assert {f"img/{name}.png" for name in [*PARTS, *render.VIEWS]} <= shown
    for path in shown:
        image = cv2.imread(str(HARDWARE / path))
        assert image is not None and image.shape[:2] == (480, 640), path


def test_a_tray_too_near_for_the_closest_focus_is_refused(tmp_path: Path) -> None:
    result = run_openscad(tmp_path / "tower.csg", "px_per_mm=9")
    assert result.returncode != 0 or "Assertion" in result.stderr
    assert "closest focus" in result.stderr


def test_a_tray_wider_than_the_frame_is_refused(tmp_path: Path) -> None:
    result = run_openscad(tmp_path / "tower.csg", "tray_d=125")
    assert "a die at the wall is cut off" in result.stderr


def test_an_unknown_part_is_refused_by_name(tmp_path: Path) -> None:
    result = run_openscad(tmp_path / "x.stl", 'part="trya"')
    assert 'unknown part "trya"' in result.stderr
    assert not (tmp_path / "x.stl").exists() or (tmp_path / "x.stl").stat().st_size == 0


def test_render_refuses_a_bad_facet_count_before_running_anything(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        render.main(["--fn", "2", "--no-png"])
    assert exc.value.code == 2
    assert "--fn must be 3 to 360" in capsys.readouterr().err
