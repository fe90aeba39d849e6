"""Render one d6 lying flat, photographed at an angle: a cube in perspective, top face labelled.

Why: phone and webcam photos (``epanemu-dice3``, ``matteop65-d6-wood``) see dice from the
side. The top face, the one the label names, is then foreshortened into the upper part of the
die's outline, while a side face turned to the camera is larger and nearer square-on. A reader
that has seen few such dice reads the big front face (a 1 on top read as the 2 facing the
camera: BENCHMARKS.md). :mod:`.render` draws dice from above only; this draws the
whole cube, so training can show the top face in every foreshortening with side faces that
are a real die's neighbours of it (opposite faces sum to seven).

The geometry is a pinhole camera looking down at ``elevation`` degrees above the table (90:
straight down), the die turned by ``azimuth`` about the vertical. Each visible face is a
:func:`~.render.draw_face` patch warped onto its projected quadrilateral and shaded by a
Lambert term; the body's rounded edges are a darker fill of the die's silhouette. Neighbour
dice, drawn the same way further back or nearer, crowd the picture as real heaps do.

Deterministic from ``seed`` (numpy's generator; OpenCV's warps are deterministic). Never
evidence of accuracy: real photos are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from ..manifest import LabelledDie
from .render import BODY_COLOURS, MARBLED_COLOURS, SynthError, draw_face

__all__ = ["ObliqueStyle", "check_style", "cube_faces", "render_oblique"]

#: Supersampling factor (draw at SS x, area-downsample).
_SS = 2
#: Texture side (px) of each face before it is warped.
_TEX = 96
#: Largest number of neighbour dice (bounds the work per picture).
MAX_NEIGHBOURS = 4

#: Table colours (BGR): grey and white paper, purple and blue cloth, wood, green felt.
_TABLES: tuple[tuple[int, int, int], ...] = (
    (200, 200, 200),
    (150, 150, 150),
    (150, 95, 110),
    (120, 70, 60),
    (60, 100, 150),
    (40, 80, 32),
    (225, 225, 225),
)
#: Extra body colours seen on phone photos of dice heaps: pink, orange, cream, gold, dark red.
_EXTRA_BODIES: tuple[tuple[tuple[int, int, int], tuple[tuple[int, int, int], ...]], ...] = (
    ((120, 90, 235), ((245, 245, 245),)),
    ((40, 110, 230), ((245, 245, 245), (30, 30, 30))),
    ((170, 225, 240), ((30, 30, 30), (120, 40, 80), (40, 90, 230))),
    ((60, 150, 190), ((245, 245, 245), (30, 30, 30))),
    ((30, 30, 130), ((235, 235, 235),)),
)


@dataclass(frozen=True)
class ObliqueStyle:
    """Ranges drawn from for one picture (``(lo, hi)`` pairs, uniform)."""

    elevation: tuple[float, float] = (25.0, 75.0)  #: camera above the table, degrees (90 = top-down)
    distance: tuple[float, float] = (4.0, 14.0)  #: camera distance in die sides (perspective strength)
    die_px: tuple[float, float] = (30.0, 90.0)  #: the die's outline, longer side, in output px
    neighbours: tuple[int, int] = (0, MAX_NEIGHBOURS)
    blur: tuple[float, float] = (0.0, 1.4)
    noise: tuple[float, float] = (1.0, 6.0)
    marbled: float = 0.15  #: share of dice drawn with a marbled body
    speckle: float = 0.3  #: share of pictures with salt-and-pepper pixels


def cube_faces(top: int, rng: np.random.Generator) -> dict[str, int]:
    """Face values for a die lying with ``top`` up: a real die's layout (opposites sum to 7).

    Keys: ``"+z"`` (top), ``"-z"``, ``"+x"``, ``"-x"``, ``"+y"``, ``"-y"``. Either handedness
    is drawn: the photos hold dice of both.
    """
    if not 1 <= top <= 6:
        raise SynthError(f"a d6 has faces 1-6, not {top}")
    sides = [f for f in range(1, 7) if f not in (top, 7 - top)]
    a = int(rng.choice(sides))
    b = int(rng.choice([f for f in sides if f not in (a, 7 - a)]))
    return {"+z": top, "-z": 7 - top, "+x": a, "-x": 7 - a, "+y": b, "-y": 7 - b}


_NORMALS = {
    "+z": np.array([0.0, 0.0, 1.0]),
    "-z": np.array([0.0, 0.0, -1.0]),
    "+x": np.array([1.0, 0.0, 0.0]),
    "-x": np.array([-1.0, 0.0, 0.0]),
    "+y": np.array([0.0, 1.0, 0.0]),
    "-y": np.array([0.0, -1.0, 0.0]),
}


def _face_corners(key: str) -> np.ndarray:
    """The face's corners (4 x 3, unit cube at the origin) in texture order TL, TR, BR, BL."""
    n = _NORMALS[key]
    up = np.array([0.0, 1.0, 0.0]) if abs(n[2]) > 0.5 else np.array([0.0, 0.0, 1.0])
    right = np.cross(up, n)
    c = n * 0.5
    return np.array(
        [c + (-right + up) * 0.5, c + (right + up) * 0.5, c + (right - up) * 0.5, c + (-right - up) * 0.5]
    )


class _Camera:
    """Pinhole camera at ``distance`` die sides, ``elevation`` degrees above the table plane."""

    def __init__(self, elevation: float, distance: float, focal: float, centre: tuple[float, float]) -> None:
        e = math.radians(elevation)
        self.pos = distance * np.array([0.0, -math.cos(e), math.sin(e)])
        f = -self.pos / np.linalg.norm(self.pos)
        world_up = np.array([0.0, 0.0, 1.0])
        r = np.cross(f, world_up)
        if np.linalg.norm(r) < 1e-6:  # straight down: any right will do
            r = np.array([1.0, 0.0, 0.0])
        self.right = r / np.linalg.norm(r)
        self.up = np.cross(self.right, f)
        self.fwd = f
        self.focal = focal
        self.centre = np.array(centre)

    def project(self, pts: np.ndarray) -> np.ndarray:
        d = pts - self.pos
        z = d @ self.fwd
        x = d @ self.right
        y = d @ self.up
        return np.stack([x / z, -y / z], axis=1) * self.focal + self.centre

    def sees(self, centre: np.ndarray, normal: np.ndarray) -> bool:
        return float(normal @ (self.pos - centre)) > 1e-6


def _turn(points: np.ndarray, azimuth: float, at: np.ndarray) -> np.ndarray:
    c, s = math.cos(azimuth), math.sin(azimuth)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return points @ rot.T + at


def _pick_colours(rng: np.random.Generator, marbled: float):
    if rng.random() < marbled:
        body, pips, swirl = MARBLED_COLOURS[str(rng.choice(list(MARBLED_COLOURS)))]
    else:
        choices = [*BODY_COLOURS.values(), *_EXTRA_BODIES]
        body, pips = choices[int(rng.integers(len(choices)))]
        swirl = None
    jitter = rng.uniform(0.8, 1.15, 3)
    body = tuple(int(np.clip(v * j, 0, 255)) for v, j in zip(body, jitter, strict=True))
    return body, pips[int(rng.integers(len(pips)))], swirl


def _draw_die(
    canvas: np.ndarray,
    cam: _Camera,
    at: np.ndarray,
    azimuth: float,
    top: int,
    rng: np.random.Generator,
    light: np.ndarray,
    marbled: float,
    shape: str,
) -> np.ndarray:
    """Draw one die (unit cube standing on the table at ``at``); returns its silhouette's points."""
    faces = cube_faces(top, rng)
    body, pip, swirl = _pick_colours(rng, marbled)
    visible = []
    for key, n in _NORMALS.items():
        corners = _turn(_face_corners(key), azimuth, at)
        normal = _turn(n[None, :], azimuth, np.zeros(3))[0]
        if cam.sees(corners.mean(axis=0), normal):
            visible.append((key, cam.project(corners), normal))
    outline = np.vstack([q for _k, q, _n in visible])
    # The shadow: the footprint pushed away from the light, soft, under everything of this die.
    shift = -light[:2] / max(1e-6, light[2]) * 0.5
    foot = _turn(
        np.array([[-0.5, -0.5, -0.5], [0.5, -0.5, -0.5], [0.5, 0.5, -0.5], [-0.5, 0.5, -0.5]]), azimuth, at
    )
    shadow_pts = cam.project(np.vstack([foot, foot + np.array([shift[0], shift[1], 0.0])]))
    # Everything of this die is drawn in its own window of the canvas: warping whole canvases
    # cost 0.1 s a picture.
    everything = np.vstack([outline, shadow_pts])
    pad = 0.2 * float(np.ptp(everything[:, 0])) + 4
    h, w = canvas.shape[:2]
    x0 = int(max(0, math.floor(everything[:, 0].min() - pad)))
    y0 = int(max(0, math.floor(everything[:, 1].min() - pad)))
    x1 = int(min(w, math.ceil(everything[:, 0].max() + pad)))
    y1 = int(min(h, math.ceil(everything[:, 1].max() + pad)))
    if x1 - x0 < 2 or y1 - y0 < 2:
        return outline
    roi = canvas[y0:y1, x0:x1]
    size = (x1 - x0, y1 - y0)
    origin = np.array([x0, y0], np.float64)
    hull = cv2.convexHull((shadow_pts - origin).astype(np.float32)).reshape(-1, 2)
    sh = np.zeros((size[1], size[0]), np.float32)
    cv2.fillConvexPoly(sh, np.round(hull * 16).astype(np.int32), 1.0, cv2.LINE_AA, shift=4)
    k = max(3, int(0.25 * float(np.ptp(hull[:, 0]))) | 1)
    sh = cv2.GaussianBlur(sh, (k, k), 0)
    roi *= (1.0 - 0.45 * sh)[:, :, None]
    # The rounded edges between faces: the silhouette filled with the body, darker.
    hull = cv2.convexHull((outline - origin).astype(np.float32)).reshape(-1, 2)
    edge = np.zeros((size[1], size[0]), np.float32)
    cv2.fillConvexPoly(edge, np.round(hull * 16).astype(np.int32), 1.0, cv2.LINE_AA, shift=4)
    dark = np.array(body, np.float32) * 0.45
    roi[:] = roi * (1 - edge[:, :, None]) + dark * edge[:, :, None]
    src = np.float32([[0, 0], [_TEX, 0], [_TEX, _TEX], [0, _TEX]])
    for key, quad, normal in visible:
        seed = int(rng.integers(0, 2**31))
        tex, mask = draw_face(faces[key], _TEX, body, pip, shape, corner=0.22, swirl=swirl, swirl_seed=seed)
        turns = int(rng.integers(4))  # which way the face's pips run on the cube
        tex, mask = np.rot90(tex, turns).copy(), np.rot90(mask, turns).copy()
        m = cv2.getPerspectiveTransform(src, (quad - origin).astype(np.float32))
        warped = cv2.warpPerspective(tex, m, size, flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))
        alpha = cv2.warpPerspective(mask, m, size, flags=cv2.INTER_LINEAR, borderValue=0)
        alpha = alpha.astype(np.float32)[:, :, None] / 255.0
        lit = 0.35 + 0.75 * max(0.0, float(normal @ light))
        roi[:] = roi * (1 - alpha) + np.clip(warped.astype(np.float32) * lit, 0, 255) * alpha
    return outline


def check_style(style: ObliqueStyle) -> None:
    """Refuse ranges that draw nonsense: a camera under the table or inside the die, a die
    larger than the picture, more neighbours than the bounded loop draws."""
    ranges = {
        "elevation": (style.elevation, 5.0, 90.0),
        "distance": (style.distance, 2.0, 1000.0),
        "die_px": (style.die_px, 8.0, 120.0),
        "blur": (style.blur, 0.0, 10.0),
        "noise": (style.noise, 0.0, 50.0),
        "neighbours": (style.neighbours, 0, MAX_NEIGHBOURS),
    }
    for name, ((lo, hi), least, most) in ranges.items():
        if not least <= lo <= hi <= most:
            raise SynthError(f"ObliqueStyle.{name}: need LO <= HI within [{least}, {most}], got ({lo}, {hi})")
    for name, share in (("marbled", style.marbled), ("speckle", style.speckle)):
        if not 0.0 <= share <= 1.0:
            raise SynthError(f"ObliqueStyle.{name} is a share in [0, 1], got {share}")


def render_oblique(
    seed: int, face: int | None = None, size: int = 256, *, style: ObliqueStyle | None = None
) -> tuple[np.ndarray, LabelledDie]:
    """One die photographed at an angle, in the middle of a ``size`` x ``size`` BGR picture.

    Returns ``(image, label)``: ``label.face`` is the top face and ``label.box`` the die's
    whole outline ``[x, y, w, h]`` (what the datasets box), neighbours excluded.
    """
    style = style or ObliqueStyle()
    if not 64 <= size <= 2048:
        raise SynthError(f"size must be 64..2048 px, got {size}")
    check_style(style)
    rng = np.random.default_rng(seed)
    top = int(rng.integers(1, 7)) if face is None else int(face)
    if not 1 <= top <= 6:
        raise SynthError(f"a d6 has faces 1-6, not {top}")
    S = size * _SS
    table = np.array(_TABLES[int(rng.integers(len(_TABLES)))], np.float32) * rng.uniform(0.8, 1.15, 3)
    canvas = np.empty((S, S, 3), np.float32)
    canvas[:] = table
    grain = cv2.resize(
        rng.normal(0, 1, (max(2, S // 24),) * 2).astype(np.float32), (S, S), interpolation=cv2.INTER_CUBIC
    )
    canvas += (grain * rng.uniform(2, 10))[:, :, None]
    elevation = float(rng.uniform(*style.elevation))
    distance = float(rng.uniform(*style.distance))
    die_px = float(rng.uniform(*style.die_px)) * _SS * size / 256
    cam = _Camera(elevation, distance, focal=1.0, centre=(0.0, 0.0))
    # Scale the camera so the die's outline has the drawn size, centred with a little jitter.
    probe = cam.project(
        _turn(
            np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]),
            0.0,
            np.zeros(3),
        )
    )
    span = float(max(np.ptp(probe[:, 0]), np.ptp(probe[:, 1])))
    jitter = rng.uniform(-0.04, 0.04, 2) * S
    cam = _Camera(elevation, distance, focal=die_px / span, centre=(S / 2 + jitter[0], S / 2 + jitter[1]))
    az = math.radians(float(rng.uniform(0, 360)))
    light = np.array([*rng.uniform(-0.6, 0.6, 2), 1.0])
    light /= np.linalg.norm(light)
    shape = str(rng.choice(["round", "round", "round", "round", "square"]))
    # Neighbours on the table around the die; the painter's order is by distance to the camera.
    dice = [(np.zeros(3), az, top, True)]
    for _ in range(int(rng.integers(style.neighbours[0], style.neighbours[1] + 1))):
        ang = rng.uniform(0, 2 * math.pi)
        d = rng.uniform(1.25, 2.4)
        at = np.array([d * math.cos(ang), d * math.sin(ang), 0.0])
        dice.append((at, math.radians(float(rng.uniform(0, 360))), int(rng.integers(1, 7)), False))
    dice.sort(key=lambda t: -float(np.linalg.norm(t[0] - cam.pos)))
    outline = None
    for at, a, f, main in dice:  # a nearer neighbour may hide part of the die, as in real heaps
        pts = _draw_die(canvas, cam, at, a, f, rng, light, style.marbled, shape)
        if main:
            outline = pts
    assert outline is not None
    gx = np.linspace(-0.5, 0.5, S, dtype=np.float32)
    grad = 1.0 + rng.uniform(0, 0.35) * (gx[None, :] * light[0] + gx[:, None] * light[1])
    canvas *= grad[:, :, None]
    img = cv2.resize(canvas, (size, size), interpolation=cv2.INTER_AREA)
    sigma = float(rng.uniform(*style.blur))
    if sigma > 0.15:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    img = img + float(rng.uniform(*style.noise)) * rng.standard_normal(img.shape, dtype=np.float32)
    img = np.clip(img, 0, 255).round().astype(np.uint8)
    if rng.random() < style.speckle:  # single dark or light pixels: some photo sets carry them
        n = int(rng.integers(size * size // 400, size * size // 60))
        ys, xs = rng.integers(0, size, n), rng.integers(0, size, n)
        img[ys, xs] = np.where(rng.random(n) < 0.8, 0, 255)[:, None]
    if rng.random() < 0.5:  # phone photos are JPEGs
        q = int(rng.integers(35, 95))
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
        if ok:
            img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    pts = outline / _SS
    x0, y0 = np.clip(pts.min(axis=0), 0, size)
    x1, y1 = np.clip(pts.max(axis=0), 0, size)
    box = (round(float(x0), 1), round(float(y0), 1), round(float(x1 - x0), 1), round(float(y1 - y0), 1))
    return img, LabelledDie("d6", top, box)
