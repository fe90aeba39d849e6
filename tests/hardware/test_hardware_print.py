"""Printing and gathering: the print bed BUILD.md asks for takes every part, the diffuser has its STL and fits
its seat, and the tools and the glue a builder needs are listed.

The sizes are measured on the STLs ``hardware/render.py`` exports, each part turned as BUILD.md's table says
to print it, so a part that grows past the stated bed fails here.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from rendering import HARDWARE, Rendered
from scad_geometry import Loop, Mesh, read_stl

GUIDE = (HARDWARE / "BUILD.md").read_text(encoding="utf-8")
PROSE = " ".join(GUIDE.split())  #: the guide with its line breaks as spaces, for sentences that wrap
BOM = (HARDWARE / "bom.md").read_text(encoding="utf-8")
SCAD = (HARDWARE / "tower.scad").read_text(encoding="utf-8")
#: The two axes each part lies flat on, as BUILD.md's table prints it: most as they sit in the tower (or
#: upside down, the same footprint); the solenoid bracket on its back plate and the mast on its back face,
#: both upright in the tower, lie on their y face.
ON_THE_BED = {"solenoid_bracket": (0, 2), "mast": (0, 2)}


@pytest.fixture(scope="module")
def parts(rendered: Rendered) -> dict[str, Mesh]:
    return {path.stem: read_stl(path) for path in rendered.stl.glob("*.stl")}


def printed_size(name: str, mesh: Mesh) -> tuple[float, float, float]:
    """The part's footprint on the bed (shorter side, longer side) and its height as printed."""
    lo, hi = mesh.bounds
    size = hi - lo
    flat = ON_THE_BED.get(name, (0, 1))
    up = ({0, 1, 2} - set(flat)).pop()
    short, long = sorted(float(size[i]) for i in flat)
    return short, long, float(size[up])


def test_the_print_bed_the_guide_names_takes_every_part_and_no_smaller_would(parts: dict[str, Mesh]) -> None:
    sizes = {name: printed_size(name, mesh) for name, mesh in parts.items()}
    need = [math.ceil(max(s[i] for s in sizes.values()) - 0.05) for i in range(3)]
    stated = re.search(r"print bed must be at least (\d+) × (\d+) mm .*?print at least (\d+) mm high", PROSE)
    assert stated is not None, "BUILD.md names no print bed"
    assert [int(v) for v in stated.groups()] == need, sizes
    assert f"bed takes {need[0]} × {need[1]} mm and prints {need[2]} mm high" in PROSE  # the tools list
    mast = re.search(r"the mast, lying down, is (\d+) mm long", PROSE)
    assert mast is not None and int(mast.group(1)) == round(sizes["mast"][1])


def solid_radii(loops: list[Loop], angle: float, radii: np.ndarray) -> np.ndarray:
    """Which of ``radii`` along the ray at ``angle`` (degrees, about the tray axis) lie in material."""
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    return np.array([sum(loop.contains(r * c, r * s) for loop in loops) % 2 == 1 for r in radii])


def test_the_diffuser_lies_in_the_light_rings_seat_and_covers_its_led_channel(
    parts: dict[str, Mesh], rendered: Rendered
) -> None:
    ring, diffuser = parts["light_ring"], parts["diffuser"]
    od, id_ = rendered.echoes["diffuser outer diameter"], rendered.echoes["diffuser inner diameter"]
    thickness = float(re.search(r"^diffuser_t = ([\d.]+);", SCAD, re.M).group(1))  # type: ignore[union-attr]
    bottom = ring.bounds[0][2]
    assert diffuser.bounds[0][2] == pytest.approx(bottom, abs=0.05)  # flush with the ring's underside
    assert diffuser.bounds[1][2] - diffuser.bounds[0][2] == pytest.approx(thickness, abs=0.05)
    radii = np.arange(20.0, 62.0, 0.25)
    for angle in (0, 45, 135, 225, 315):  # clear of the wires' hole at the back
        ours = solid_radii(diffuser.cut(bottom + thickness / 2), angle, radii)
        assert ours.any() and not (ours & solid_radii(ring.cut(bottom + thickness / 2), angle, radii)).any()
        # above the seat the LED channel is open downwards: the diffuser spans all of it
        channel = radii[~solid_radii(ring.cut(bottom + thickness + 1), angle, radii) & (radii > id_ / 2)]
        channel = channel[channel < 60]
        assert channel.size and id_ / 2 < channel.min() and channel.max() < od / 2, (angle, channel)


def test_the_diffusers_sizes_bom_names_are_the_models() -> None:
    names = set(re.findall(r"`(diffuser_\w+)`", BOM))
    assert names >= {"diffuser_od", "diffuser_id", "diffuser_t"}
    assigned = set(re.findall(r"^(diffuser_\w+) =", SCAD, re.M))
    assert names <= assigned, f"bom.md names {sorted(names - assigned)}, which tower.scad does not set"
    assert "`diffuser.stl` from `hardware/render.py`" in BOM
    assert re.search(r'^PARTS = \[[^]]*"diffuser"', SCAD, re.M | re.S)


def test_the_diffusers_quoted_sizes_are_the_models(rendered: Rendered) -> None:
    quoted = re.search(r"`diffuser_t` \(([\d.]+), ([\d.]+) and ([\d.]+) mm\)", BOM)
    assert quoted is not None
    od, id_, _t = (float(v) for v in quoted.groups())
    assert od == pytest.approx(rendered.echoes["diffuser outer diameter"])
    assert id_ == pytest.approx(rendered.echoes["diffuser inner diameter"])


def test_the_guide_lists_the_tools_and_the_parts_list_the_glue() -> None:
    tools = GUIDE.split("## Tools", 1)[1].split("\n## ", 1)[0]
    for tool in ("3d printer", "soldering iron", "solder", "multimeter", "wire strippers", "side cutters"):
        assert tool in tools.lower(), tool
    for size in ("M2", "M2.5", "M3"):
        assert size in tools, size
    glue = next(line for line in BOM.splitlines() if line.startswith("| — | 1 | Glue |"))
    assert "chimney" in glue and "diffuser" in glue
    assembly = GUIDE.split("## 3. Assemble", 1)[1].split("\n## ", 1)[0]
    assert assembly.count("glue") + assembly.count("Glue") >= 2
