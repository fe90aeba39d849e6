"""The tower's own tray, drawn as ``hardware/tower.scad`` builds it and ``hardware/lighting.md`` lights it.

Why: the simulated camera stands in for the tower's camera, so its photo should look like the
tower's, not like a sheet of grey paper. The tray is round (``tray_d`` 105 mm inner diameter,
``tray_wall`` 3 mm thick, ``tray_wall_h`` 35 mm high), its floor lined with matte dark-grey
neoprene (lighting.md: matte, one even colour, contrasting with white and red dice), and the
camera looks straight down over its centre at one height. The tray's size and the scale come
from :mod:`dicetower.vision.tower_scale` (hardware/spec.toml's figures): a millimetre at the
dice's tops is :attr:`TowerTray.px_per_mm` pixels of a 640-pixel-wide frame, so every die of a
kind is the same size in every photo. The floor is drawn at that scale too (a die's top face and
the floor's edge under it stay in one plane), so a die against the wall is inside the outline
``tower calibrate --tray`` is given. Seen from the lens, the walls' inner faces lean outward from the
floor's edge (their top rim is nearer the lens, so it projects farther out) and the rim sits
beyond them; past the rim is the tower's base.

The light is the ring around the lens (lighting.md): diffuse and from above, so the floor is
evenly lit but for a slight fall-off toward the walls, and each die casts a short, soft shadow
straight away from the tray's centre (the light stands over the centre), not the long sideways
shadow of a lamp.

The empty tray and its light are drawn once per frame size and kept (read-only): the liner is
the same liner on every throw, and drawing it is most of a small scene's time.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import cv2
import numpy as np

from ..tower_scale import DIE_TOP_MM, LENS_HEIGHT_MM, PX_PER_MM, TRAY_D_MM

__all__ = ["LINER_SEED", "TowerTray"]

#: The liner's texture is drawn from this seed: the same liner in every photo.
LINER_SEED = 20261205


@dataclass(frozen=True)
class TowerTray:
    """The tray's build and the camera's height, in the sizes ``hardware/tower.scad`` uses."""

    tray_d_mm: float = TRAY_D_MM  #: inner diameter of the floor (tower.scad ``tray_d``)
    wall_mm: float = 3.0  #: wall thickness (``tray_wall``)
    wall_h_mm: float = 35.0  #: wall height above the floor (``tray_wall_h``)
    #: pixels per millimetre at the dice's tops in a 640-pixel-wide frame: the camera's height
    px_per_mm: float = PX_PER_MM
    #: the lens above the plane drawn at ``px_per_mm`` (the dice's tops): where the walls lean out from
    lens_h_mm: float = LENS_HEIGHT_MM - DIE_TOP_MM
    floor: tuple[int, int, int] = (74, 74, 77)  #: matte dark-grey neoprene liner, BGR
    wall: tuple[int, int, int] = (96, 96, 100)  #: the printed walls, BGR
    base: tuple[int, int, int] = (40, 40, 42)  #: the base beyond the rim, in the tower's shade
    grain: float = 3.0  #: the liner's fine texture, grey levels
    falloff: float = 0.12  #: the ring light's fall-off from the centre to the floor's edge
    #: the ring's angle from the lens's axis, seen from the floor (40 mm radius, about 120 mm up)
    ring_angle: float = 18.0
    #: how much of a glossy die's mirror highlight is left behind the diffuser (lighting.md)
    highlight: float = 0.25

    def scale(self, width: int) -> float:
        """Pixels per millimetre in a frame ``width`` pixels wide (the same camera at another resolution)."""
        return self.px_per_mm * width / 640.0

    def floor_radius(self, width: int) -> float:
        """The floor's radius in frame pixels."""
        return self.tray_d_mm / 2 * self.scale(width)

    def _projected(self, r_mm: float, height_mm: float) -> float:
        """Where a point ``r_mm`` from the axis and ``height_mm`` above the floor lands, in floor mm."""
        return r_mm * self.lens_h_mm / max(1.0, self.lens_h_mm - height_mm)

    def fits(self, width: int, height: int, x: float, y: float, reach: float) -> bool:
        """Does a die reaching ``reach`` px from its centre at (x, y) lie on the floor, in frame?"""
        r = self.floor_radius(width)
        inside = math.hypot(x - width / 2, y - height / 2) <= r - reach
        return inside and reach <= x <= width - reach and reach <= y <= height - reach

    def draw(self, width: int, height: int) -> np.ndarray:
        """The empty tray, unlit (float BGR, read-only): floor, the walls' inner faces, the rim, the base."""
        return _drawn(self, width, height)

    def light(self, width: int, height: int) -> np.ndarray:
        """The ring light's gain per pixel (read-only): 1 at the centre, ``1 - falloff`` at the edge."""
        return _lit(self, width, height)

    def _draw(self, width: int, height: int) -> np.ndarray:
        # worked one colour plane at a time: a frame-sized float image is 15 MB at 1280 x 960, and
        # memory the allocator took stays the process's
        s = self.scale(width)
        r_px = _radius(width, height)
        r_floor = self.tray_d_mm / 2 * s
        r_top = self._projected(self.tray_d_mm / 2, self.wall_h_mm) * s
        r_rim = self._projected(self.tray_d_mm / 2 + self.wall_mm, self.wall_h_mm) * s
        # the inner face: darker down at the floor, where the ring light reaches it least
        shade = 0.55 + 0.35 * np.clip((r_px - r_floor) / max(1.0, r_top - r_floor), 0.0, 1.0)
        floor = r_px < r_floor
        rim = (r_px >= r_top) & (r_px < r_rim)
        beyond = r_px >= r_rim
        # one liner, one texture: from a fixed seed, whatever the scene's
        grain = np.random.default_rng(LINER_SEED).normal(0.0, 1.0, (height, width)).astype(np.float32)
        grain = cv2.GaussianBlur(grain, (0, 0), 0.8 * max(1.0, width / 640.0))
        grain *= self.grain / max(1e-6, float(grain.std()))
        # the liner's edge is soft: blend a pixel or two across it
        edge = cv2.GaussianBlur(floor.astype(np.float32), (0, 0), 0.7)
        img = np.empty((height, width, 3), np.float32)
        for c in range(3):
            wall = np.float32(self.wall[c]) * shade  # the inner face, and under the liner's edge
            wall[rim] = np.float32(self.wall[c]) * np.float32(1.05)
            wall[beyond] = self.base[c]
            liner = np.where(floor, np.float32(self.floor[c]) + grain, wall)
            img[:, :, c] = liner * edge + wall * (1 - edge)
        return img

    def _light(self, width: int, height: int) -> np.ndarray:
        r = _radius(width, height) / max(1.0, self.floor_radius(width))
        return (1.0 - self.falloff * np.clip(r, 0.0, 1.4) ** 2).astype(np.float32)

    def light_direction(self, towards: tuple[float, float]) -> np.ndarray:
        """Toward the light from a die (camera axes, y up): the side of the ring opposite ``towards``.

        Why one side of the ring and not straight down: the diffuser spreads each LED into a broad
        source, so a die's faces are lit mostly by the ring's arc on the far side of the lens from
        it; a single light on the lens's axis would put a mirror highlight on every top face that
        no diffused ring makes.
        """
        elevation = math.radians(90.0 - self.ring_angle)
        h = math.cos(elevation)
        return np.array([-towards[0] * h, towards[1] * h, math.sin(elevation)])

    def shadow(self, width: int, height: int, x: float, y: float, side: float) -> tuple[float, float]:
        """A die's shadow offset (px): short, straight away from the centre, longer toward the walls."""
        dx, dy = x - width / 2, y - height / 2
        r = math.hypot(dx, dy)
        if r < 1e-6:
            return (0.0, 0.0)
        length = 0.06 * side * min(1.0, r / max(1.0, self.floor_radius(width)))
        return (dx / r * length, dy / r * length)


def _radius(width: int, height: int) -> np.ndarray:
    """Each pixel's distance from the frame's centre (float32)."""
    xs = np.arange(width, dtype=np.float32) - np.float32(width / 2)
    ys = np.arange(height, dtype=np.float32) - np.float32(height / 2)
    return np.hypot(xs[None, :], ys[:, None])


@functools.lru_cache(maxsize=8)
def _drawn(tray: TowerTray, width: int, height: int) -> np.ndarray:
    img = tray._draw(width, height)
    img.setflags(write=False)
    return img


@functools.lru_cache(maxsize=8)
def _lit(tray: TowerTray, width: int, height: int) -> np.ndarray:
    img = tray._light(width, height)
    img.setflags(write=False)
    return img
