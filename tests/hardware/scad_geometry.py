"""Reading the tower's exported STLs back: triangles, closedness, and horizontal cuts with their holes.

The fit tests measure the parts as OpenSCAD exported them, so a hole that moved in ``tower.scad`` and not in
the part it holds is caught where a copy of the numbers would agree with itself. A cut at height ``z`` chains
the triangles' crossings into closed loops; each loop is oriented by the triangles' outward normals, so
material lies to its left: outlines run anticlockwise (positive area) and holes clockwise (negative area).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Loop", "Mesh", "read_stl"]

_VERTEX = re.compile(r"vertex\s+(\S+)\s+(\S+)\s+(\S+)")
#: A cut never meets a vertex: a level that does is moved up by this much.
_NUDGE = 1e-4


@dataclass(frozen=True)
class Loop:
    """One closed loop of a cut: its points in order, signed area (negative for a hole) and centroid."""

    points: np.ndarray
    area: float
    centroid: tuple[float, float]

    @property
    def diameter(self) -> float:
        """The diameter of the circle of the same area: a round hole's, a little under for a polygon."""
        return 2 * math.sqrt(abs(self.area) / math.pi)

    @property
    def is_hole(self) -> bool:
        return self.area < 0

    def radii(self, centre: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
        return np.hypot(self.points[:, 0] - centre[0], self.points[:, 1] - centre[1])

    def contains(self, x: float, y: float) -> bool:
        """Even-odd rule: whether ``(x, y)`` lies inside the loop's polygon."""
        px, py = self.points[:, 0], self.points[:, 1]
        qx, qy = np.roll(px, -1), np.roll(py, -1)
        crosses = (py > y) != (qy > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = px + (y - py) * (qx - px) / (qy - py)
        return bool(np.count_nonzero(crosses & (x < at)) % 2)


class Mesh:
    """An STL's triangles, ``(n, 3, 3)``, in the order and winding OpenSCAD wrote them."""

    def __init__(self, triangles: np.ndarray) -> None:
        self.triangles = triangles

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        flat = self.triangles.reshape(-1, 3)
        return flat.min(axis=0), flat.max(axis=0)

    def volume(self) -> float:
        a, b, c = self.triangles[:, 0], self.triangles[:, 1], self.triangles[:, 2]
        return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6)

    def open_edges(self) -> int:
        """Directed edges without their reverse: 0 for a closed, consistently wound surface."""
        keys = np.round(self.triangles, 5)
        edges: Counter[tuple[tuple[float, ...], tuple[float, ...]]] = Counter()
        for tri in keys:
            pts = [tuple(p) for p in tri]
            for i in range(3):
                edges[(pts[i], pts[(i + 1) % 3])] += 1
        return sum(abs(n - edges.get((b, a), 0)) for (a, b), n in edges.items())

    def cut(self, z: float) -> list[Loop]:
        """The loops where the plane at height ``z`` meets the surface."""
        zs = self.triangles[:, :, 2]
        while np.any(np.abs(zs - z) < _NUDGE / 2):
            z += _NUDGE
        above = zs > z
        crossing = above.any(axis=1) & ~above.all(axis=1)
        nxt: dict[tuple[float, float], tuple[tuple[float, float], np.ndarray]] = {}
        for tri, up in zip(self.triangles[crossing], above[crossing], strict=True):
            points = []
            for i in range(3):
                a, b = tri[i], tri[(i + 1) % 3]
                if up[i] != up[(i + 1) % 3]:
                    lo, hi = (a, b) if tuple(a) < tuple(b) else (b, a)  # the same point from both triangles
                    t = (z - lo[2]) / (hi[2] - lo[2])
                    points.append(lo[:2] + t * (hi[:2] - lo[:2]))
            p, q = points
            normal = np.cross(tri[1] - tri[0], tri[2] - tri[0])
            if np.dot(q - p, (-normal[1], normal[0])) < 0:  # material on the left
                p, q = q, p
            nxt[_key(p)] = (_key(q), q)
        loops = []
        while nxt:
            start = next(iter(nxt))
            key, chain = start, []
            for _ in range(len(nxt) + 1):
                if key not in nxt:
                    break
                key, point = nxt.pop(key)
                chain.append(point)
                if key == start:
                    break
            if len(chain) >= 3 and key == start:
                loops.append(_loop(np.array(chain)))
        return loops

    def holes(self, z: float, diameter: float, tol: float = 0.3) -> list[tuple[float, float]]:
        """Centres of the round holes of about ``diameter`` that the cut at ``z`` meets."""
        return [h.centroid for h in self.cut(z) if h.is_hole and abs(h.diameter - diameter) <= tol]


def _key(p: np.ndarray) -> tuple[float, float]:
    return (round(float(p[0]), 5), round(float(p[1]), 5))


def _loop(points: np.ndarray) -> Loop:
    x, y = points[:, 0], points[:, 1]
    xn, yn = np.roll(x, -1), np.roll(y, -1)
    cross = x * yn - xn * y
    area = float(cross.sum() / 2)
    cx = float(((x + xn) * cross).sum() / (6 * area))
    cy = float(((y + yn) * cross).sum() / (6 * area))
    return Loop(points, area, (cx, cy))


def read_stl(path: Path) -> Mesh:
    """An ASCII STL, as OpenSCAD writes it; raises ``ValueError`` for anything else."""
    text = path.read_text(encoding="ascii")
    if not text.startswith("solid"):
        raise ValueError(f"{path.name}: not an ASCII STL")
    values = np.array(_VERTEX.findall(text), dtype=float)
    if len(values) == 0 or len(values) % 3:
        raise ValueError(f"{path.name}: {len(values)} vertices, not whole triangles")
    if text.count("facet normal") != len(values) // 3 or "endsolid" not in text:
        raise ValueError(f"{path.name}: facets and vertices disagree, or the file is cut short")
    return Mesh(values.reshape(-1, 3, 3))
