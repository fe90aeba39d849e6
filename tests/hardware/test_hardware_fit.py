"""The printed parts fit each other and what they hold, measured on the STLs ``hardware/render.py`` exports.

Where a part sits comes from its own geometry (horizontal cuts through the STLs, ``scad_geometry``); the
heights to cut at come from ``tower.scad``'s echoed levels; the sizes of the bought parts (the Pi's holes, the
camera's) come from ``hardware/spec.toml``. Every part is exported in its place in the assembly, so two parts'
holes can be compared directly.
"""

from __future__ import annotations

import math
import tomllib
from itertools import pairwise

import numpy as np
import pytest
from rendering import HARDWARE, Rendered
from scad_geometry import Loop, Mesh, read_stl

SPEC = tomllib.loads((HARDWARE / "spec.toml").read_text(encoding="utf-8"))
M3, M3_PILOT, M25_PILOT, M2_PILOT = 3.4, 2.5, 2.2, 1.8
#: Two holes meant to take one screw are within this of each other (mm).
ALIGN = 0.2

Point = tuple[float, float]


@pytest.fixture(scope="module")
def parts(rendered: Rendered) -> dict[str, Mesh]:
    return {path.stem: read_stl(path) for path in rendered.stl.glob("*.stl")}


@pytest.fixture(scope="module")
def level(rendered: Rendered) -> dict[str, float]:
    return {
        name.removeprefix("level "): z for name, z in rendered.echoes.items() if name.startswith("level ")
    }


def near(point: Point, points: list[Point], within: float = ALIGN) -> bool:
    return any(math.dist(point, p) <= within for p in points)


def spans(points: list[Point]) -> tuple[float, float]:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return max(xs) - min(xs), max(ys) - min(ys)


def is_rectangle(points: list[Point], size: list[float]) -> bool:
    """Four points at the corners of an axis-aligned rectangle of ``size`` (either way round)."""
    if len(points) != 4:
        return False
    w, h = spans(points)
    xs, ys = sorted(p[0] for p in points), sorted(p[1] for p in points)
    square = xs[1] - xs[0] < 0.05 and xs[3] - xs[2] < 0.05 and ys[1] - ys[0] < 0.05 and ys[3] - ys[2] < 0.05
    return square and sorted([w, h]) == pytest.approx(sorted(size), abs=0.1)


def material_at(loops: list[Loop], x: float, y: float) -> bool:
    return sum(loop.contains(x, y) for loop in loops) % 2 == 1


def along(loops: list[Loop], axis: Point, angle: float, r0: float, r1: float) -> float | None:
    """The first radius from ``r0`` towards ``r1`` along the ray at ``angle`` where the cut has material."""
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    for r in np.arange(r0, r1, 0.05 if r1 > r0 else -0.05):
        if material_at(loops, axis[0] + r * c, axis[1] + r * s):
            return float(r)
    return None


def tray_axis(parts: dict[str, Mesh]) -> Point:
    low, high = parts["tray"].bounds
    outline = max(parts["tray"].cut((low[2] + high[2]) / 2 + 10), key=lambda loop: loop.area)
    return outline.centroid


def tray_floor(parts: dict[str, Mesh]) -> tuple[float, float]:
    """The tray's inner radius and the top of its floor, from the inner wall."""
    tray = parts["tray"]
    high = tray.bounds[1]
    inner = min(tray.cut(high[2] - 5), key=lambda loop: loop.area)
    axis = tray_axis(parts)
    radius = float(inner.radii(axis).min())
    points = tray.triangles.reshape(-1, 3)
    on_wall = (
        np.abs(np.hypot(points[:, 0] - axis[0], points[:, 1] - axis[1]) - inner.radii(axis).max()) < 0.05
    )
    return radius, float(points[on_wall, 2].min())


def test_the_tray_floats_inside_the_shroud_which_stands_in_its_groove(
    parts: dict[str, Mesh], level: dict[str, float]
) -> None:
    axis = tray_axis(parts)
    tray_points = parts["tray"].triangles.reshape(-1, 3)
    tray_r = float(np.hypot(tray_points[:, 0] - axis[0], tray_points[:, 1] - axis[1]).max())
    z = level["base top"] - 0.5  # through the groove in the base's top
    top, shroud = parts["base"].cut(z), parts["shroud"].cut(level["base top"] + 0.5)
    for angle in range(0, 360, 10):
        wall_in = along(shroud, axis, angle, tray_r, tray_r + 20)
        if wall_in is None:
            continue  # the door's opening
        wall_out = along(shroud, axis, angle, tray_r + 20, tray_r)
        assert wall_out is not None
        groove_in = along(top, axis, angle, wall_in, tray_r)  # the groove's inner edge, looking inwards
        groove_out = along(top, axis, angle, wall_in, tray_r + 20)
        assert groove_in is not None and groove_out is not None, angle
        assert groove_in <= wall_in and wall_out <= groove_out, f"the shroud misses the groove at {angle}°"
        assert (groove_out - groove_in) - (wall_out - wall_in) <= 1, f"the groove is loose at {angle}°"
        assert tray_r + 2 <= wall_in, f"the tray (r {tray_r:.1f}) touches the shroud (r {wall_in:.1f})"
    # the tray's three grommet screws come up through the base's top into blind holes in the tray's floor
    tray_holes = parts["tray"].holes(level["tray underside"] + 1, M3_PILOT)
    base_holes = parts["base"].holes(level["base top"] - 2.5, M3)
    assert len(tray_holes) == 3
    assert all(near(h, base_holes) for h in tray_holes), (tray_holes, base_holes)
    assert not parts["tray"].holes(level["dice rest"] - 0.5, M3_PILOT), (
        "the grommet holes go through the floor"
    )


def test_the_shroud_and_its_door_close_the_sides(parts: dict[str, Mesh], level: dict[str, float]) -> None:
    axis = tray_axis(parts)
    high = parts["base"].bounds[1]
    radii = np.arange(50, min(high[0], high[1]) - 1, 0.25)

    def blocked(loops: list[Loop], angle: int) -> bool:
        c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        return any(material_at(loops, axis[0] + r * c, axis[1] + r * s) for r in radii)

    for z in (level["tray underside"] + 20, level["ring top"] - 5):
        shroud, door = parts["shroud"].cut(z), parts["shroud_door"].cut(z)
        opening = [a for a in range(360) if not blocked(shroud, a)]
        assert 60 <= len(opening) <= 100, "the shroud has no opening for loading dice"
        assert all(blocked(door, a) for a in opening), f"the door leaves part of the opening open at z {z}"
    # the shroud and the door reach the light ring, and the ring fits inside the shroud
    ring_top = level["ring top"]
    assert parts["shroud"].bounds[1][2] >= ring_top - 0.5
    assert parts["shroud_door"].bounds[1][2] >= ring_top - 0.5
    ring = parts["light_ring"].cut(ring_top - 5)
    ring_r = max(loop.radii(axis).max() for loop in ring if not loop.is_hole)
    shroud_r = min(loop.radii(axis).min() for loop in parts["shroud"].cut(ring_top - 5))
    assert ring_r < shroud_r


def test_the_chimney_stands_in_the_light_rings_groove(
    parts: dict[str, Mesh], level: dict[str, float]
) -> None:
    axis = tray_axis(parts)
    cap, ring = parts["camera_cap"], parts["light_ring"]
    z = cap.bounds[0][2] + 0.5  # the chimney's foot
    assert ring.bounds[0][2] < z < level["ring top"], "the chimney does not reach into the ring"
    chimney, groove = cap.cut(z), ring.cut(z)
    for angle in range(0, 360, 15):
        inner, outer = along(chimney, axis, angle, 0, 80), along(chimney, axis, angle, 80, 0)
        assert inner is not None and outer is not None
        assert not material_at(groove, *polar(axis, angle, (inner + outer) / 2)), (
            "the ring has no groove there"
        )
        assert material_at(groove, *polar(axis, angle, inner - 0.5)) and material_at(
            groove, *polar(axis, angle, outer + 0.5)
        ), f"the groove is loose at {angle}°"


def polar(axis: Point, angle: float, r: float) -> Point:
    return axis[0] + r * math.cos(math.radians(angle)), axis[1] + r * math.sin(math.radians(angle))


def test_the_camera_looks_down_the_tray_axis_at_the_readers_scale(
    parts: dict[str, Mesh], level: dict[str, float]
) -> None:
    camera = SPEC["camera"]
    axis = tray_axis(parts)
    cap, ring = parts["camera_cap"], parts["light_ring"]
    holes = cap.holes(level["camera cap underside"] + 1, M2_PILOT)
    assert is_rectangle(holes, camera["holes_mm"]), holes
    centre = np.mean(holes, axis=0)
    lens = centre + np.array(camera["lens_from_holes_mm"])
    assert math.dist(lens, axis) < 0.5, f"the lens is {math.dist(lens, axis):.2f} mm off the tray's axis"
    # the board's back rests on the bosses around the holes; the lens front is the module's depth below
    points = cap.triangles.reshape(-1, 3)
    on_bosses = np.min([np.hypot(points[:, 0] - x, points[:, 1] - y) for x, y in holes], axis=0) < 3
    lens_z = float(points[on_bosses, 2].min()) - camera["depth_mm"]
    inner_r, floor_z = tray_floor(parts)
    lens_h = lens_z - (floor_z + SPEC["tray"]["liner_mm"])
    assert lens_h == pytest.approx(camera["lens_height_mm"], abs=0.5)
    assert lens_h >= camera["closest_focus_mm"]
    # the scale at the dice's tops, from the lens's field of view over the capture's crop of the sensor
    (sensor_w, sensor_h), (cap_w, cap_h) = camera["sensor_px"], camera["capture_px"]
    crop_w, crop_h = min(sensor_w, sensor_h * cap_w / cap_h), min(sensor_h, sensor_w * cap_h / cap_w)
    tan_full = math.tan(math.radians(camera["hfov_deg"] / 2))
    tan_h, tan_v = tan_full * crop_w / sensor_w, tan_full * crop_h / sensor_w
    top = lens_h - camera["die_top_mm"]
    assert cap_w / (2 * top * tan_h) == pytest.approx(camera["px_per_mm"], rel=0.01)
    assert inner_r <= top * tan_v, "a die at the tray's wall is outside the frame"
    # the view cone clears the light ring's bore all the way down
    cuts = [(ring, ring.bounds[0][2] + 0.5), (ring, level["ring top"] - 0.5), (cap, cap.bounds[0][2] + 0.5)]
    for part, z in cuts:
        bore = min(loop.radii(axis).min() for loop in part.cut(z) if loop.is_hole)
        assert bore > (lens_z - z) * math.hypot(tan_h, tan_v), f"the light ring shades the frame at z {z}"


def test_the_arm_holds_the_camera_cap_and_sits_on_the_mast(
    parts: dict[str, Mesh], level: dict[str, float]
) -> None:
    arm_z = level["arm underside"]
    arm_holes = parts["camera_arm"].holes(arm_z + 1, M3)
    cap_holes = parts["camera_cap"].holes(arm_z - 1, M3_PILOT)
    mast_holes = parts["mast"].holes(arm_z - 1, M3_PILOT)
    assert len(cap_holes) == 2 and len(mast_holes) == 2
    assert all(near(h, arm_holes) for h in cap_holes + mast_holes)
    # the cap lies against the arm's underside, and the mast's top meets it too
    assert parts["camera_cap"].bounds[1][2] == pytest.approx(arm_z, abs=0.05)
    assert parts["mast"].bounds[1][2] == pytest.approx(arm_z, abs=0.05)


def board_placements(holes: list[Point], board: list[float], inset: float | None = None) -> list[list[Point]]:
    """The corners of each way a board goes on its four holes. ``inset``: the holes' distance from the board's
    edges at one end of its length (a Pi's 3.5 mm; the other end overhangs); None: the holes are centred."""
    xs, ys = [h[0] for h in holes], [h[1] for h in holes]
    w, h = spans(holes)
    long_x = w >= h
    length, width = max(board), min(board)
    span_long, span_short = max(w, h), min(w, h)
    ends = [(length - span_long) / 2] if inset is None else [inset, length - span_long - inset]
    side = (width - span_short) / 2
    placements = []
    for end in ends:
        lo_long = (min(xs) if long_x else min(ys)) - end
        lo_short = (min(ys) if long_x else min(xs)) - side
        x0, y0, bw, bh = (lo_long, lo_short, length, width) if long_x else (lo_short, lo_long, width, length)
        placements.append([(x0 + i * bw, y0 + j * bh) for i in (0, 1) for j in (0, 1)])
    return placements


def inside_rectangle(point: Point, corners: list[Point]) -> bool:
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    return min(xs) < point[0] < max(xs) and min(ys) < point[1] < max(ys)


def overlap(a: list[Point], b: list[Point]) -> bool:
    ax, ay, bx, by = [c[0] for c in a], [c[1] for c in a], [c[0] for c in b], [c[1] for c in b]
    return min(ax) < max(bx) and min(bx) < max(ax) and min(ay) < max(by) and min(by) < max(ay)


def test_the_pi_and_the_perfboard_fit_on_their_standoffs_inside_the_base(
    parts: dict[str, Mesh], level: dict[str, float]
) -> None:
    plate = parts["floor_plate"]
    standoff_z = plate.bounds[1][2] - 2
    pi_holes = plate.holes(standoff_z, M25_PILOT)
    perf_holes = plate.holes(standoff_z, M2_PILOT)
    assert is_rectangle(pi_holes, SPEC["pi"]["holes_mm"]), pi_holes
    assert is_rectangle(perf_holes, SPEC["perfboard"]["holes_mm"]), perf_holes
    # the hollow, cut below the panel's and the back wall's holes
    cavity = min(parts["base"].cut(parts["base"].bounds[0][2] + 2), key=lambda loop: loop.area)

    def fits(corners: list[Point]) -> bool:
        inside = all(cavity.contains(*c) for c in corners)
        return inside and not any(inside_rectangle(tuple(p), corners) for p in cavity.points)  # no post

    pi_ways = board_placements(pi_holes, SPEC["pi"]["board_mm"], SPEC["pi"]["hole_inset_mm"])
    perf_ways = board_placements(perf_holes, SPEC["perfboard"]["board_mm"])
    pi = next((way for way in pi_ways if fits(way)), None)
    perf = next((way for way in perf_ways if fits(way)), None)
    assert pi is not None, f"the Pi fits neither way round on its standoffs: {pi_ways}"
    assert perf is not None, f"the perfboard sticks out of the base or over a post: {perf_ways}"
    low, high = parts["solenoid_bracket"].bounds
    bracket = [(low[0], low[1]), (high[0], high[1])]
    assert not overlap(pi, perf) and not overlap(pi, bracket) and not overlap(perf, bracket)
    # the floor plate's four screws go up into the base's corner posts
    plate_screws = plate.holes(plate.bounds[0][2] + 1, M3)
    post_pilots = parts["base"].holes(parts["base"].bounds[0][2] + 2, M3_PILOT)
    assert len(plate_screws) == 4 and all(near(h, post_pilots) for h in plate_screws)


def test_the_bracket_and_the_mast_screw_to_the_base_top(
    parts: dict[str, Mesh], level: dict[str, float]
) -> None:
    top = parts["base"].cut(level["base top"] - 1.5)
    base_holes = [loop.centroid for loop in top if loop.is_hole and abs(loop.diameter - M3) < 0.3]
    bracket = parts["solenoid_bracket"]
    bracket_top = bracket.bounds[1][2]
    assert level["base top"] - 5 < bracket_top < level["base top"], (
        "the bracket does not reach the base's top"
    )
    bracket_holes = bracket.holes(bracket_top - 1, M3)
    assert len(bracket_holes) == 2 and all(near(h, base_holes) for h in bracket_holes)
    # the plunger's way up: the bracket's bore, then the base's hole, on the tray's axis
    axis = tray_axis(parts)
    bore = max((loop for loop in bracket.cut(bracket_top - 1) if loop.is_hole), key=lambda loop: -loop.area)
    plunger_hole = max((loop for loop in top if loop.is_hole), key=lambda loop: -loop.area)
    assert math.dist(bore.centroid, axis) < ALIGN and math.dist(plunger_hole.centroid, axis) < ALIGN
    assert plunger_hole.diameter > bore.diameter
    foot_holes = parts["mast"].holes(level["base top"] + 1, M3)
    assert len(foot_holes) == 4 and all(near(h, base_holes) for h in foot_holes)


def test_the_levels_stack_up_from_the_table(level: dict[str, float]) -> None:
    order = [
        "base top",
        "tray underside",
        "dice rest",
        "ring top",
        "lens",
        "camera cap underside",
        "arm underside",
    ]
    assert all(level[a] < level[b] for a, b in pairwise(order)), level


def slots(loops: list[Loop]) -> list[Point]:
    """Centres of the ribbon's slots in a cut: holes larger than a screw's, smaller than the plunger's."""
    return [loop.centroid for loop in loops if loop.is_hole and 30 < -loop.area < 100]


def test_the_ribbon_has_an_open_way_from_the_camera_to_the_base(
    parts: dict[str, Mesh], level: dict[str, float]
) -> None:
    arm = slots(parts["camera_arm"].cut(level["arm underside"] + 1))
    cap = slots(parts["camera_cap"].cut(level["camera cap underside"] + 1))
    assert len(arm) == 2 and len(cap) == 1, (arm, cap)
    # up through the cap beside the camera and through the arm above it
    assert near(cap[0], arm, 0.5), (cap, arm)
    # down through the arm at the mast, down the mast's channel, through its tongue and the base's top
    at_mast = next(p for p in arm if not near(p, cap, 0.5))
    mast = parts["mast"]
    heights = [
        level["base top"] - 1.5,
        level["base top"] + 2,
        *np.linspace(level["base top"] + 10, level["arm underside"] - 1, 6),
    ]
    for z in heights:
        assert not material_at(mast.cut(z), *at_mast), f"the mast's channel is closed at z {z:.0f}"
    assert not material_at(parts["base"].cut(level["base top"] - 1.5), *at_mast), "the base's top is closed"
    assert material_at(mast.cut(level["base top"] + 50), at_mast[0], at_mast[1] + 6), (
        "no mast behind the channel"
    )
