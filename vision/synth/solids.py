"""The solids the renderer draws: the cube (d6), the pentagonal trapezohedron (d10) and the icosahedron (d20).

Why real solids: a die seen at an angle, or not quite square-on, shows its neighbouring faces
foreshortened around the one on top, each with its own numeral turned its own way. A flat
drawing of the top face teaches a reader nothing of that; a projected solid does, and the
same geometry says which face is the one most squarely toward the camera (the face read).

Each :class:`Solid` is centred on the origin with its vertices at most 1 from it. Faces list
their vertex indices counter-clockwise seen from outside; ``normals`` point outward. Every
face has a parallel opposite face (all three solids are centrally symmetric), which is how
the printed values are laid out (:func:`face_values`). A face's *frame* is where its numeral
goes: ``centre`` and ``up`` (the direction the numeral's top points, in the face's plane).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..kinds import DRAWN_KINDS, KINDS

__all__ = ["Solid", "face_values", "shape_of", "solid"]

#: Half the height of the d10's equator zig-zag over its ring radius: real d10s stand about
#: 1.15 times as tall, apex to apex, as they are wide.
_D10_RING_Z = 0.105


@dataclass(frozen=True)
class Solid:
    """A convex, centrally symmetric polyhedron with one numeral frame per face."""

    name: str
    vertices: np.ndarray  #: (V, 3)
    faces: tuple[tuple[int, ...], ...]  #: vertex indices, counter-clockwise from outside
    normals: np.ndarray  #: (F, 3) unit, outward
    centres: np.ndarray  #: (F, 3) where each face's numeral is centred
    ups: np.ndarray  #: (F, 3) unit, in the face's plane: the numeral's top points this way
    opposite: tuple[int, ...]  #: index of the face parallel to each face
    numeral_height: float  #: a one-digit numeral's height, in the solid's units
    numeral_width: float  #: the widest a numeral may be (two digits are shrunk to fit)

    @property
    def n_faces(self) -> int:
        return len(self.faces)


def _orient(vertices: np.ndarray, face: tuple[int, ...]) -> tuple[tuple[int, ...], np.ndarray]:
    """``face`` ordered counter-clockwise from outside, and its outward unit normal."""
    pts = vertices[list(face)]
    centre = pts.mean(axis=0)
    # order by angle around the centre within the face's plane
    n = np.cross(pts[1] - pts[0], pts[2] - pts[0])
    n /= np.linalg.norm(n)
    if float(n @ centre) < 0:
        n = -n
    e1 = pts[0] - centre
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    angles = [math.atan2(float((p - centre) @ e2), float((p - centre) @ e1)) for p in pts]
    order = tuple(face[i] for i in np.argsort(angles))
    return order, n


def _opposites(normals: np.ndarray) -> tuple[int, ...]:
    dots = normals @ normals.T
    return tuple(int(np.argmin(row)) for row in dots)


def _cube() -> Solid:
    v = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
    faces, normals = [], []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            f = tuple(i for i in range(8) if v[i, axis] == sign)
            order, n = _orient(v, f)
            faces.append(order)
            normals.append(n)
    v = v / math.sqrt(3.0)
    nrm = np.array(normals)
    centres = np.array([v[list(f)].mean(axis=0) for f in faces])
    # up: toward the middle of the face's first edge (the renderer turns it by quarter turns)
    ups = []
    for f, c in zip(faces, centres, strict=True):
        mid = (v[f[0]] + v[f[1]]) / 2 - c
        ups.append(mid / np.linalg.norm(mid))
    return Solid("cube", v, tuple(faces), nrm, centres, np.array(ups), _opposites(nrm), 0.55, 0.85)


def _trapezohedron() -> Solid:
    """Ten kites: top apex, two upper-ring vertices and the lower-ring vertex between them."""
    a = _D10_RING_Z
    upper = [(math.cos(math.radians(72 * k)), math.sin(math.radians(72 * k)), a) for k in range(5)]
    lower = [(math.cos(math.radians(72 * k + 36)), math.sin(math.radians(72 * k + 36)), -a) for k in range(5)]
    u0, u1, l0 = np.array(upper[0]), np.array(upper[1]), np.array(lower[0])
    n = np.cross(l0 - u0, u1 - u0)
    h = float(n @ u0) / float(n[2])  # where the kite's plane meets the axis: the apex
    v = np.array([(0.0, 0.0, h), (0.0, 0.0, -h), *upper, *lower])
    top, bottom = 0, 1
    up_i = [2 + k for k in range(5)]
    lo_i = [7 + k for k in range(5)]
    raw = [(top, up_i[k], lo_i[k], up_i[(k + 1) % 5]) for k in range(5)]
    raw += [(bottom, lo_i[k], up_i[(k + 1) % 5], lo_i[(k + 1) % 5]) for k in range(5)]
    scale = float(np.linalg.norm(v, axis=1).max())
    faces, normals, centres, ups = [], [], [], []
    for f in raw:
        order, nrm = _orient(v, f)
        faces.append(order)
        normals.append(nrm)
        apex, far = v[f[0]], v[f[2]]
        side_mid = (v[f[1]] + v[f[3]]) / 2
        # the numeral sits in the kite's wide part, its top toward the apex (five kites meet)
        centres.append(side_mid + 0.2 * (apex - side_mid))
        d = apex - far
        ups.append(d / np.linalg.norm(d))
    return Solid(
        "trapezohedron",
        v / scale,
        tuple(faces),
        np.array(normals),
        np.array(centres) / scale,
        np.array(ups),
        _opposites(np.array(normals)),
        0.42,
        0.72,
    )


def _icosahedron() -> Solid:
    phi = (1 + math.sqrt(5)) / 2
    pts = []
    for a, b in itertools.product((-1.0, 1.0), repeat=2):
        pts += [(0.0, a, b * phi), (a, b * phi, 0.0), (b * phi, 0.0, a)]
    v = np.array(pts)
    d = np.linalg.norm(v[:, None] - v[None], axis=2)
    edge = np.isclose(d, 2.0)
    faces, normals = [], []
    for i, j, k in itertools.combinations(range(12), 3):
        if edge[i, j] and edge[j, k] and edge[i, k]:
            order, n = _orient(v, (i, j, k))
            faces.append(order)
            normals.append(n)
    v = v / float(np.linalg.norm(v[0]))
    centres = np.array([v[list(f)].mean(axis=0) for f in faces])
    ups = []
    for f, c in zip(faces, centres, strict=True):
        toward = v[f[0]] - c  # toward one corner; the renderer picks which
        ups.append(toward / np.linalg.norm(toward))
    nrm = np.array(normals)
    return Solid("icosahedron", v, tuple(faces), nrm, centres, np.array(ups), _opposites(nrm), 0.32, 0.5)


@functools.cache
def solid(name: str) -> Solid:
    """The solid ``"cube"``, ``"trapezohedron"`` or ``"icosahedron"`` (built once)."""
    builders = {"cube": _cube, "trapezohedron": _trapezohedron, "icosahedron": _icosahedron}
    if name not in builders:
        raise ValueError(f"solid must be one of {', '.join(builders)}, got {name!r}")
    return builders[name]()


def shape_of(kind: str) -> Solid:
    """The solid a die of ``kind`` is (its ``shape`` in :data:`~dicetower.vision.kinds.KINDS`)."""
    shape = KINDS[kind].shape if kind in KINDS else None
    if shape is None:
        raise ValueError(f"kind must be one of {', '.join(DRAWN_KINDS)}, got {kind!r}")
    return solid(shape.value)


def face_values(kind: str, rng: np.random.Generator) -> np.ndarray:
    """The printed value of each face of one die of ``kind``, as dice are laid out.

    Opposite faces sum to one more than the die's highest value (d6: 7, d20: 21); a d10's
    opposite faces sum to 9 (``d10t``: 90), odd values round one apex and even round the
    other; on a d10 a value indexes the kind's printed faces (``d10t``: 1 is 10). Which face
    gets which value beyond that is drawn from ``rng``: makers differ, and a reader must read
    the face, not recognise a maker's layout.
    """
    s = shape_of(kind)
    values = np.full(s.n_faces, -1, np.int64)
    if s.name == "trapezohedron":
        ring = [i for i in range(s.n_faces) if s.normals[i, 2] > 0]
        odd = rng.permutation([1, 3, 5, 7, 9])
        for i, value in zip(ring, odd, strict=True):
            values[i] = value
            values[s.opposite[i]] = 9 - value
        if rng.random() < 0.5:  # which apex holds the odd values
            values = 9 - values
        return np.asarray(KINDS[kind].faces, np.int64)[values]
    top = s.n_faces if s.name == "icosahedron" else 6
    done: set[int] = set()
    low = list(rng.permutation(np.arange(1, top // 2 + 1)))
    for i in rng.permutation(s.n_faces):
        i = int(i)
        if i in done:
            continue
        value = int(low.pop())
        if rng.random() < 0.5:
            value = top + 1 - value
        values[i] = value
        values[s.opposite[i]] = top + 1 - value
        done.update((i, s.opposite[i]))
    return values
