"""Draw one die as a lit, projected solid: every visible face with its own numeral or pips.

Why: a reader of real dice must know what the face on top looks like among its neighbours:
a d20 shows up to ten triangles, each numeral turned its own way and foreshortened; a d10's
top kite sits between steep neighbours. :mod:`.solids` gives the geometry; this module poses
the die so that the asked-for face is the one most squarely toward the camera (the face a
person reads and the datasets label), projects it orthographically, and draws it:

- each face flat-lit (ambient + diffuse + a specular share from one light), so faces differ in
  brightness as on a real die; a soft glossy highlight on some dice;
- edges rounded: the faces are inset and the band between them takes the bevel's own shade,
  the silhouette's corners are rounded;
- bodies ``solid``, ``speckled`` (flecks of a second colour, as many d20s are), ``marbled``
  (pale swirls) or ``translucent`` (the tray shows through the body, never through the ink);
- numerals in outline fonts (OpenCV's built-in sans at any weight, or a TrueType file);
  6 and 9 (and sometimes every numeral that could be misread) carry an
  underline or a dot.

Everything random comes from the caller's generator: the same seed draws the same die.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import cv2
import numpy as np

from ..kinds import KINDS
from .render import PIP_LAYOUT, swirls
from .solids import Solid, face_values, shape_of

__all__ = [
    "BUILTIN_FONTS",
    "MATERIALS",
    "DieLook",
    "Font",
    "Pose",
    "SolidDrawing",
    "body_image",
    "glyph",
    "max_tilt",
    "random_pose",
    "render_solid",
]

MATERIALS: tuple[str, ...] = ("solid", "speckled", "marbled", "translucent")
#: Glyphs are drawn once at this height (px) and warped onto faces from there.
_GLYPH_H = 64


@dataclass(frozen=True)
class Font:
    """A numeral font: ``face`` is ``"sans"`` (OpenCV's built-in font) or a TrueType file's path.

    ``weight`` (100-1000) applies to variable fonts such as the built-in one.
    """

    face: str = "sans"
    weight: int = 600


#: Fonts every OpenCV 5 has: its built-in sans at several weights. (OpenCV 5 draws its Hershey
#: font ids with this same font.) Training adds TrueType files (``numerals.data --fonts``).
BUILTIN_FONTS: tuple[Font, ...] = tuple(Font("sans", w) for w in (300, 400, 500, 600, 700, 800, 900))


@dataclass(frozen=True)
class DieLook:
    """How one die looks: colours, body material, font and finish."""

    body: tuple[int, int, int]  #: BGR
    ink: tuple[int, int, int]  #: BGR of numerals or pips
    material: str = "solid"  #: one of :data:`MATERIALS`
    second: tuple[int, int, int] | None = None  #: speckle or swirl colour (BGR)
    font: Font = BUILTIN_FONTS[3]
    mark: str = "bar"  #: how 6 and 9 are told apart: ``"bar"`` (underline) or ``"dot"``
    mark_all: bool = False  #: underline every numeral whose turned shape is another numeral
    gloss: float = 0.3  #: specular strength, 0 (matte) .. 1
    bevel: float = 0.06  #: share of each face's size given to its rounded edge
    opacity: float = 0.7  #: a translucent body's cover (ink is always opaque)


@dataclass(frozen=True)
class Pose:
    """How the die lies: ``rotation`` takes the solid's axes to the camera's.

    Camera axes: x right, y up, z toward the lens.
    """

    rotation: np.ndarray
    face_index: int  #: the face most squarely toward the camera
    tilt: float  #: degrees between that face's normal and the line to the lens


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    axis = axis / (np.linalg.norm(axis) + 1e-12)
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    k = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    return np.eye(3) * c + s * k + (1 - c) * np.outer(axis, axis)


def _align(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The rotation taking unit vector ``a`` to unit vector ``b``."""
    v = np.cross(a, b)
    c = float(a @ b)
    if np.linalg.norm(v) < 1e-9:
        if c > 0:
            return np.eye(3)
        perp = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(perp) < 1e-6:
            perp = np.cross(a, [0.0, 1.0, 0.0])
        return _rotation(perp, math.pi)
    return _rotation(v, math.acos(max(-1.0, min(1.0, c))))


def max_tilt(s: Solid) -> float:
    """Half the angle between neighbouring faces' normals (degrees): past it another face is on top."""
    dots = np.sort(s.normals @ s.normals[0])
    return math.degrees(math.acos(float(dots[-2]))) / 2


def random_pose(
    s: Solid, face_index: int, rng: np.random.Generator, tilt: float, *, cocked: bool = False
) -> Pose:
    """A pose with face ``face_index`` toward the camera, its normal up to ``tilt`` degrees off.

    The tilt is capped below :func:`max_tilt` (at 85 % of it) so the face is the most squarely
    toward the camera, with a margin. ``cocked``: the die leans halfway to a neighbour face, so
    no face is squarely toward the camera (the face given is only the nearer of two).
    """
    n = s.normals[face_index]
    if cocked:
        dots = s.normals @ n
        neighbours = np.flatnonzero(np.isclose(dots, np.sort(dots)[-2]))
        other = s.normals[int(rng.choice(neighbours))]
        axis = np.cross(n, other)
        half = math.radians(max_tilt(s)) * float(rng.uniform(0.8, 0.98))
        to_camera = _rotation(axis, half) @ n  # a little short of the bisector: face stays nearer
        r = _align(to_camera, np.array([0.0, 0.0, 1.0]))
    else:
        r = _align(n, np.array([0.0, 0.0, 1.0]))
        limit = min(float(tilt), 0.85 * max_tilt(s))
        delta = math.radians(float(rng.uniform(0.0, max(0.0, limit))))
        phi = float(rng.uniform(0, 2 * math.pi))
        r = _rotation(np.array([math.cos(phi), math.sin(phi), 0.0]), delta) @ r
    r = _rotation(np.array([0.0, 0.0, 1.0]), float(rng.uniform(0, 2 * math.pi))) @ r
    normals = s.normals @ r.T
    best = int(np.argmax(normals[:, 2]))
    tilt_deg = math.degrees(math.acos(max(-1.0, min(1.0, float(normals[best, 2])))))
    return Pose(r, face_index, tilt_deg)


@functools.cache
def _fontface(face: str) -> cv2.FontFace:
    return cv2.FontFace(face)


def _char_alpha(ch: str, font: Font) -> np.ndarray:
    """One character drawn at a fixed baseline (uint8, full canvas height, ink columns only)."""
    big = np.zeros((3 * _GLYPH_H, 3 * _GLYPH_H), np.uint8)
    org = (_GLYPH_H // 2, 2 * _GLYPH_H)
    cv2.putText(big, ch, org, 255, _fontface(font.face), int(_GLYPH_H * 1.4), font.weight)
    cols = np.flatnonzero(big.max(axis=0) > 32)
    if len(cols) == 0:
        return np.zeros((big.shape[0], _GLYPH_H // 2), np.uint8)
    return big[:, cols[0] : cols[-1] + 1]


def _text_alpha(text: str, font: Font) -> np.ndarray:
    """``text`` in white on black, tightly cropped, :data:`_GLYPH_H` px tall (uint8).

    Drawn a character at a time with even spacing. The built-in font's zero is slashed, which
    dice never are: there it is the letter O narrowed to the zero's width.
    """
    parts = []
    for ch in text:
        a = _char_alpha(ch, font)
        if ch == "0" and font.face == "sans":
            o = _char_alpha("O", font)
            a = cv2.resize(o, (a.shape[1], o.shape[0]), interpolation=cv2.INTER_AREA)
        parts.append(a)
    gap = np.zeros((parts[0].shape[0], max(1, round(0.1 * _GLYPH_H))), np.uint8)
    big = np.hstack([p for part in parts for p in (part, gap)][:-1])
    rows = np.flatnonzero(big.max(axis=1) > 32)
    if len(rows) == 0:
        return np.zeros((_GLYPH_H, _GLYPH_H // 2), np.uint8)
    crop = big[rows[0] : rows[-1] + 1]
    h, w = crop.shape
    return cv2.resize(crop, (max(1, round(w * _GLYPH_H / h)), _GLYPH_H), interpolation=cv2.INTER_AREA)


#: Numerals that always carry the die's mark (half-turned, each reads as the other).
_MARKED = frozenset({"6", "9"})
#: Numerals marked on dice that mark every numeral a half turn could confuse (``mark_all``).
_MARKED_ALL = frozenset({"6", "9", "60", "90"})


@functools.lru_cache(maxsize=4096)
def glyph(text: str, font: Font, mark: str | None) -> tuple[np.ndarray, float]:
    """The numeral's alpha (float32 0-1) with its mark, and the numeral's own height in its px.

    The mark (``"bar"``: an underline; ``"dot"``: a dot after the numeral's foot) is outside
    the numeral's height, so numerals with and without marks are drawn the same size.
    """
    a = _text_alpha(text, font).astype(np.float32) / 255.0
    h, w = a.shape
    if mark is None:
        return a, float(h)
    stroke = max(3, round(0.1 * h))
    if mark == "bar":
        out = np.zeros((h + 3 * stroke, w), np.float32)
        out[:h] = a
        out[h + stroke + stroke // 2 : h + 2 * stroke + stroke // 2, round(0.1 * w) : round(0.9 * w)] = 1.0
        return out, float(h)
    out = np.zeros((h, w + 3 * stroke), np.float32)
    out[:, :w] = a
    cv2.circle(out, (w + round(1.6 * stroke), h - stroke), stroke, 1.0, -1, cv2.LINE_AA)
    return out, float(h)


@functools.lru_cache(maxsize=16)
def _pips_alpha(face: int) -> np.ndarray:
    side = 2 * _GLYPH_H
    a = np.zeros((side, side), np.float32)
    for px, py in PIP_LAYOUT[face]:
        c = (round(side / 2 + px * side * 0.46), round(side / 2 + py * side * 0.46))
        cv2.circle(a, c, round(0.11 * side), 1.0, -1, cv2.LINE_AA)
    return a


def body_image(look: DieLook, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """The body's colour over the whole patch (float BGR): plain, speckled or marbled."""
    h, w = size
    img = np.empty((h, w, 3), np.float32)
    img[:] = look.body
    if look.material == "speckled":
        second = np.array(look.second or (20, 20, 20), np.float32)
        n = int(rng.integers(40, 160) * (h * w) / 200.0**2) + 5
        flecks = np.zeros((h, w), np.float32)
        xs, ys = rng.uniform(0, w, n), rng.uniform(0, h, n)
        rs = rng.uniform(0.004, 0.012, n) * max(h, w)
        for x, y, r in zip(xs, ys, rs, strict=True):
            cv2.circle(flecks, (round(x), round(y)), max(1, round(r)), float(rng.uniform(0.5, 1.0)), -1)
        flecks = cv2.GaussianBlur(flecks, (0, 0), 0.003 * max(h, w) + 0.3)[:, :, None]
        img = img * (1 - flecks) + second * flecks
    elif look.material == "marbled":
        swirls(img, look.second or (220, 220, 220), int(rng.integers(2**31)))
    # the body varies a little across the die (casting, wear)
    small = rng.normal(0, 1, (4, 4)).astype(np.float32)
    img *= (1 + 0.05 * cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC))[:, :, None]
    return img


@dataclass(frozen=True)
class SolidDrawing:
    """A drawn die: its patch and alpha, and which faces point most toward the camera."""

    patch: np.ndarray  #: BGR uint8
    mask: np.ndarray  #: alpha uint8
    face: int  #: the printed value of the face most squarely toward the camera
    next_face: int  #: the value of the next most squarely toward it (a cocked die's other face)
    tilt: float  #: degrees between ``face``'s normal and the line to the lens
    face_at: tuple[float, float]  #: ``face``'s numeral centre in patch px
    #: the turn (degrees, counter-clockwise as ``cv2.getRotationMatrix2D`` turns) that stands
    #: ``face``'s numeral upright: what the glyph reader searches for, known here for training
    upright: float


def render_solid(
    kind: str,
    face: int,
    side: int,
    look: DieLook,
    rng: np.random.Generator,
    *,
    tilt: float = 20.0,
    cocked: bool = False,
    light: np.ndarray | None = None,
    values: np.ndarray | None = None,
) -> SolidDrawing:
    """One die of ``kind`` with ``face`` toward the camera, and what was drawn.

    ``side`` is the silhouette's larger extent in px (the patch is a little larger);
    ``tilt`` the largest angle (degrees) between the face's normal and the line to the lens;
    ``light`` a unit vector toward the light in camera axes (x right, y up, z to the lens);
    ``values`` the printed value of each face (:func:`~.solids.face_values`): one physical die
    keeps its layout from throw to throw; drawn from ``rng`` when not given.
    """
    s = shape_of(kind)
    values = face_values(kind, rng) if values is None else values
    matches = np.flatnonzero(values == face)
    if len(matches) != 1:
        raise ValueError(f"a {kind} has no face {face}")
    pose = random_pose(s, int(matches[0]), rng, tilt, cocked=cocked)
    r = pose.rotation
    verts = s.vertices @ r.T
    normals = s.normals @ r.T
    xy = verts[:, :2] * np.array([1.0, -1.0])  # image y runs down
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    scale = side / float(max(hi - lo))
    patch = math.ceil(side * 1.15) + 4
    offset = np.array([patch / 2, patch / 2]) - scale * (lo + hi) / 2

    def to_px(p: np.ndarray) -> np.ndarray:
        return scale * (p[..., :2] * np.array([1.0, -1.0])) + offset

    px = to_px(verts)
    if light is None:
        light = np.array([rng.uniform(-0.6, 0.6), rng.uniform(-0.6, 0.6), 1.0])
    light = light / np.linalg.norm(light)
    halfway = light + np.array([0.0, 0.0, 1.0])
    halfway /= np.linalg.norm(halfway)
    ambient = float(rng.uniform(0.35, 0.6))
    diffuse = 1.0 - ambient + float(rng.uniform(-0.1, 0.15))
    shininess = float(rng.uniform(8, 40))

    hull = cv2.convexHull(px.astype(np.float32)).reshape(-1, 2)
    sil = np.zeros((patch, patch), np.float32)
    cv2.fillPoly(sil, [np.round(hull * 4).astype(np.int32)], 1.0, cv2.LINE_8, 2)
    round_sigma = 0.035 * side + 0.5
    sil = np.clip((cv2.GaussianBlur(sil, (0, 0), round_sigma) - 0.5) * 4 + 0.5, 0, 1)

    body = body_image(look, (patch, patch), rng)
    shade = np.full((patch, patch), ambient + 0.55 * diffuse * (1.0 + look.gloss), np.float32)
    spec = np.zeros((patch, patch), np.float32)
    ink = np.zeros((patch, patch), np.float32)
    visible = [i for i in range(s.n_faces) if normals[i, 2] > 0.02]
    numerals: dict[int, tuple[tuple[float, float], float]] = {}
    for i in visible:
        poly = px[list(s.faces[i])]
        centre = poly.mean(axis=0)
        inset = centre + (poly - centre) * (1.0 - 2.0 * look.bevel)
        n = normals[i]
        face_mask = np.zeros((patch, patch), np.float32)
        cv2.fillPoly(face_mask, [np.round(inset * 4).astype(np.int32)], 1.0, cv2.LINE_8, 2)
        lit = ambient + diffuse * max(0.0, float(n @ light))
        shade = np.where(face_mask > 0, lit, shade)
        spec += face_mask * look.gloss * max(0.0, float(n @ halfway)) ** shininess
        alpha_i, numerals[i] = _face_glyph(kind, int(values[i]), s, i, r, look, rng, to_px, patch)
        ink = np.maximum(ink, face_mask * alpha_i)
    if look.gloss > 0.15 and rng.random() < 0.6:
        # a soft highlight where the surface turns toward the light's mirror direction
        top = max(visible, key=lambda i: float(normals[i] @ halfway))
        c = px[list(s.faces[top])].mean(axis=0) + rng.normal(0, 0.08 * side, 2)
        blob = np.zeros((patch, patch), np.float32)
        cv2.circle(blob, (round(c[0]), round(c[1])), max(1, round(0.06 * side)), 1.0, -1)
        spec += look.gloss * 0.8 * cv2.GaussianBlur(blob, (0, 0), 0.06 * side + 0.5)
    shade = cv2.GaussianBlur(shade, (0, 0), 0.004 * side + 0.3)
    ink_colour = np.array(look.ink, np.float32)
    img = body * (1 - ink[:, :, None]) + ink_colour * ink[:, :, None]
    img = img * shade[:, :, None] + 255.0 * np.minimum(spec, 1.0)[:, :, None] * (1 - 0.5 * ink[:, :, None])
    alpha = sil
    if look.material == "translucent":
        img += 35.0 * (1 - ink[:, :, None])  # light passes through: the body glows
        alpha = sil * np.maximum(look.opacity, ink)
    order = np.argsort(-normals[:, 2])
    face_at, upright = numerals.get(int(order[0]), ((patch / 2, patch / 2), 0.0))
    return SolidDrawing(
        np.clip(img, 0, 255).astype(np.uint8),
        np.round(alpha * 255).astype(np.uint8),
        int(values[order[0]]),
        int(values[order[1]]),
        pose.tilt,
        face_at,
        upright,
    )


def _face_glyph(
    kind: str,
    value: int,
    s: Solid,
    i: int,
    r: np.ndarray,
    look: DieLook,
    rng: np.random.Generator,
    to_px,
    patch: int,
) -> tuple[np.ndarray, tuple[tuple[float, float], float]]:
    """Face ``i``'s numeral (or pips) warped into the patch: ``(alpha float32, (centre, upright))``.

    ``centre`` is the numeral's centre in patch px; ``upright`` the counter-clockwise turn in
    degrees that stands it upright (see :attr:`SolidDrawing.upright`).
    """
    n = s.normals[i]
    up = s.ups[i]
    if s.name == "cube":
        up = _rotation(n, math.pi / 2 * int(rng.integers(4))) @ up
    elif s.name == "icosahedron":
        up = _rotation(n, 2 * math.pi / 3 * int(rng.integers(3))) @ up
    right = np.cross(up, n)
    if KINDS[kind].pips:
        a = _pips_alpha(value)
        h_units = 1.15 * 0.92  # the pip square spans the face, inside its rounded edge
        kx = ky = h_units / a.shape[0]
        gh = a.shape[0] / 2
    else:
        text = KINDS[kind].text(value)
        marked = text in (_MARKED_ALL if look.mark_all else _MARKED)
        a, numeral_h = glyph(text, look.font, look.mark if marked else None)
        ky = s.numeral_height * (0.88 if len(text) > 1 else 1.0) / numeral_h
        kx = min(ky, s.numeral_width / a.shape[1])
        gh = numeral_h / 2
    gw = a.shape[1] / 2
    c3 = s.centres[i]
    src = np.float32([[gw, gh], [gw + 1, gh], [gw, gh - 1]])
    dst = np.float32([to_px(r @ c3), to_px(r @ (c3 + kx * right)), to_px(r @ (c3 + ky * up))])
    m = cv2.getAffineTransform(src, dst)
    alpha = cv2.warpAffine(a, m, (patch, patch), flags=cv2.INTER_LINEAR, borderValue=0.0)
    ux, uy = (float(v) for v in dst[2] - dst[0])  # the numeral's up, image y down
    upright = (90.0 - math.degrees(math.atan2(-uy, ux))) % 360.0
    return alpha, ((float(dst[0][0]), float(dst[0][1])), upright)
