"""Render trays of mixed dice: pip d6, numeral d6, d10 (0-9), percentile d10 (00-90) and d20.

Why: the real photos here hold no d10 or percentile d10 with its face labelled and no d20 photo
of faces 4, 6, 16 and 19 (``../shared/datasets/README.md``), yet the tower must read them and the
simulated camera must draw them. This module draws every kind the reader knows, from a seed,
with the same tray, light, shadow, placement and noise as :mod:`.render`'s d6 scenes.

Each die is seen from above, lying on a face (or *cocked*, leaning: no face up):

- ``d6n``: a square face with one numeral; 6 and 9 carry an underline or a dot.
- ``d10`` / ``d10t``: the kite on top with its numeral (``0``-``9``, or ``00``-``90`` on the
  tens die), inside the die's outline, with two neighbouring kites darker, their numerals
  smaller and turned: the face read is the upper kite, never a neighbour.
- ``d20``: the triangle on top with its numeral inside a hexagonal outline; the three faces
  sharing its edges show their own (smaller, darker, turned) numerals.
- ``d6``: the pip d6 of :func:`.render.draw_face`.

Varied from the seed: Hershey fonts (plain, simplex, duplex, complex, triplex, italic or not)
and stroke weight, ink and body colours, solid / marbled / translucent bodies, any rotation,
a slight tilt (the die foreshortened up to ~25 degrees, as near a wide lens's edge), a slight
perspective of the whole tray, touching pairs and cocked dice. Labels use the manifest's kinds
(``d6`` for both d6 styles, ``d10``, ``d10t`` with faces 0, 10, ..., 90, ``d20``).

Deterministic from ``seed`` (numpy's generator; OpenCV's drawing is deterministic). Never
evidence of accuracy on real dice: real photos are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from ..manifest import LabelledDie
from .render import (
    _TRAYS,
    MARBLED_COLOURS,
    SS,
    SynthError,
    _homography,
    _light,
    _paste,
    _place,
    _rounded_mask,
    _swirls,
    _to8,
    _tray,
    draw_face,
)

__all__ = [
    "FACES",
    "FONTS",
    "KINDS",
    "MATERIALS",
    "NUMERAL_COLOURS",
    "NumeralStyle",
    "TrayDie",
    "draw_die",
    "label_kind",
    "render_crop",
    "render_tray",
]

#: The kinds drawn: pip d6, numeral d6, units d10, tens d10, d20.
KINDS: tuple[str, ...] = ("d6", "d6n", "d10", "d10t", "d20")
#: Printed faces per kind (the manifest's convention: a d10t's faces are 0, 10, ..., 90).
FACES: dict[str, tuple[int, ...]] = {
    "d6": tuple(range(1, 7)),
    "d6n": tuple(range(1, 7)),
    "d10": tuple(range(10)),
    "d10t": tuple(range(0, 100, 10)),
    "d20": tuple(range(1, 21)),
}
#: cv2's Hershey fonts that print readable numerals (the script fonts do not).
FONTS: tuple[int, ...] = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
)
MATERIALS: tuple[str, ...] = ("solid", "marbled", "translucent")

_LIGHT_INK = ((245, 245, 245), (60, 200, 235), (90, 190, 215))  # white, yellow, gold
_DARK_INK = ((20, 20, 20), (30, 30, 120), (90, 40, 20))
#: name -> (body BGR, ink BGR choices); names are :mod:`dicetower.vision.colour`'s.
NUMERAL_COLOURS: dict[str, tuple[tuple[int, int, int], tuple[tuple[int, int, int], ...]]] = {
    "red": ((40, 35, 200), _LIGHT_INK[:2] + _DARK_INK[:1]),
    "orange": ((30, 110, 235), _DARK_INK[:1] + _LIGHT_INK[:1]),
    "yellow": ((40, 205, 235), _DARK_INK[:2]),
    "green": ((60, 150, 40), _LIGHT_INK + _DARK_INK[:1]),
    "blue": ((170, 80, 30), _LIGHT_INK),
    "purple": ((140, 50, 110), _LIGHT_INK),
    "pink": ((170, 120, 240), _DARK_INK[:1] + _LIGHT_INK[:1]),
    "white": ((235, 235, 232), _DARK_INK),
    "grey": ((130, 128, 125), _LIGHT_INK[:1] + _DARK_INK[:1]),
    "black": ((32, 30, 30), _LIGHT_INK),
}

#: Largest number of dice in one tray (bounds the work).
MAX_DICE = 40


@dataclass(frozen=True)
class TrayDie:
    """One die to draw: ``kind`` of :data:`KINDS`, its printed ``face``, a :data:`NUMERAL_COLOURS` name."""

    kind: str
    face: int
    colour: str | None = None  #: None: drawn from the seed
    material: str | None = None  #: one of :data:`MATERIALS`, None: drawn from the seed
    cocked: bool = False


@dataclass(frozen=True)
class NumeralStyle:
    """Knobs for :func:`render_tray`; ``None`` means drawn from the seed."""

    die_size: tuple[float, float] = (40.0, 72.0)  #: die outline range in pixels at 640 px
    tray: tuple[int, int, int] | None = None
    blur: float | None = None
    noise: float | None = None
    perspective: float | None = None
    light: float | None = None
    shadows: bool = True
    grain: float = 5.0
    tilt: float = 25.0  #: largest foreshortening of one die, degrees (0: square-on)
    marbled: float = 0.2  #: share of bodies drawn marbled, when a die's material is not given
    translucent: float = 0.2  #: share of bodies drawn translucent, likewise


def label_kind(kind: str) -> str:
    """The manifest kind of a drawn kind: a numeral d6 is a ``d6``."""
    return "d6" if kind == "d6n" else kind


def _check(kind: str, face: int) -> None:
    if kind not in FACES:
        raise SynthError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if face not in FACES[kind]:
        raise SynthError(f"a {kind} has no face {face}")


def _text_of(kind: str, face: int) -> str:
    return f"{face:02d}" if kind == "d10t" else str(face)


def _draw_text(
    img: np.ndarray,
    text: str,
    centre: tuple[float, float],
    height: float,
    angle: float,
    ink: tuple[int, int, int],
    font: int,
    weight: float,
    *,
    mark: str | None = None,
    alpha: float = 1.0,
) -> None:
    """Composite ``text`` into float BGR ``img`` (in place), ``height`` px tall, turned ``angle`` deg.

    ``mark`` ``"bar"`` / ``"dot"`` adds the underline or the dot that tells 6 from 9.
    """
    side = img.shape[0]
    big = int(max(8, 4 * height))
    canvas = np.zeros((big, big), np.uint8)
    scale1 = cv2.getTextSize(text, font, 1.0, 1)[0][1] or 1
    scale = height / scale1
    thick = max(1, round(weight * height))
    (tw, th), _ = cv2.getTextSize(text, font, scale, thick)
    org = (round(big / 2 - tw / 2), round(big / 2 + th / 2))
    cv2.putText(canvas, text, org, font, scale, 255, thick, cv2.LINE_AA)
    if mark == "bar":
        y = round(big / 2 + th / 2 + max(2, 0.18 * th))
        cv2.line(canvas, (round(big / 2 - tw / 2), y), (round(big / 2 + tw / 2), y), 255, thick, cv2.LINE_AA)
    elif mark == "dot":
        cv2.circle(canvas, (round(big / 2 + tw / 2 + thick * 1.5), org[1]), thick, 255, -1, cv2.LINE_AA)
    m = cv2.getRotationMatrix2D((big / 2, big / 2), angle, 1.0)
    m[0, 2] += centre[0] - big / 2
    m[1, 2] += centre[1] - big / 2
    a = cv2.warpAffine(canvas, m, (side, side), flags=cv2.INTER_LINEAR, borderValue=0).astype(np.float32)
    a *= alpha / 255.0
    img[:] = img * (1 - a[:, :, None]) + np.array(ink, np.float32) * a[:, :, None]


def _poly(points: Sequence[tuple[float, float]], side: int) -> np.ndarray:
    half = side / 2
    return np.array([[half + x * half, half + y * half] for x, y in points], np.float32)


def _fill(mask_shape: tuple[int, int], poly: np.ndarray) -> np.ndarray:
    m = np.zeros(mask_shape, np.uint8)
    cv2.fillPoly(m, [np.round(poly).astype(np.int32)], 255, cv2.LINE_AA)
    return m


#: d20 seen face-on: hexagon outline, the top triangle, and each edge's neighbour apex.
_HEX = [(0.95 * math.cos(math.radians(a)), 0.95 * math.sin(math.radians(a))) for a in range(-90, 270, 60)]
_TRI = [(0.62 * math.cos(math.radians(a)), 0.62 * math.sin(math.radians(a))) for a in (-90, 30, 150)]
#: d10 seen face-on: the outline and the top kite (point up: the numeral's top).
_D10_OUTLINE = [(0.0, -0.97), (0.82, -0.38), (0.78, 0.42), (0.0, 0.97), (-0.78, 0.42), (-0.82, -0.38)]
_KITE = [(0.0, -0.72), (0.56, -0.12), (0.0, 0.66), (-0.56, -0.12)]


def _neighbour_numbers(rng: np.random.Generator, kind: str, face: int, n: int) -> list[str]:
    others = [f for f in FACES[kind] if f != face]
    picks = rng.choice(len(others), size=n, replace=False)
    return [_text_of(kind, others[int(i)]) for i in picks]


def draw_die(
    kind: str,
    face: int,
    side: int,
    body: tuple[int, int, int],
    ink: tuple[int, int, int],
    rng: np.random.Generator,
    *,
    material: str = "solid",
    swirl: tuple[int, int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One die of ``kind`` face-up, seen square-on, numeral upright: (BGR patch, alpha mask).

    ``rng`` draws the font, weight, 6/9 mark, neighbour numerals and marbling; ``material``
    ``"translucent"`` returns a mask below 255 inside the die (the tray shows through).
    """
    _check(kind, face)
    if kind == "d6":
        shape = str(rng.choice(["round", "round", "square"]))
        img8, mask = draw_face(face, side, body, ink, shape, swirl=swirl, swirl_seed=int(rng.integers(2**31)))
        return img8, mask
    font = int(rng.choice(FONTS)) | (cv2.FONT_ITALIC if rng.random() < 0.25 else 0)
    weight = float(rng.uniform(0.07, 0.16))
    mark_style = "bar" if rng.random() < 0.7 else "dot"
    img = np.empty((side, side, 3), np.float32)
    img[:] = body
    if swirl is not None:
        _swirls(img, swirl, int(rng.integers(2**31)))
    text = _text_of(kind, face)
    mark = mark_style if text in ("6", "9") else None
    if kind == "d6n":
        mask = _rounded_mask(side, side, 0.18 * side)
        dist = cv2.distanceTransform(mask, cv2.DIST_L2, 3)
        img *= (0.72 + 0.28 * np.clip(dist / max(1.0, 0.1 * side), 0, 1))[:, :, None]
        _draw_text(img, text, (side / 2, side / 2), 0.5 * side, 0.0, ink, font, weight, mark=mark)
    else:
        outline, top = (_HEX, _TRI) if kind == "d20" else (_D10_OUTLINE, _KITE)
        mask = _fill((side, side), _poly(outline, side))
        top_mask = _fill((side, side), _poly(top, side)).astype(np.float32) / 255
        shade = 0.62 + 0.12 * float(rng.random())
        img *= (shade + (1 - shade) * cv2.GaussianBlur(top_mask, (0, 0), 0.01 * side + 0.5))[:, :, None]
        edges = cv2.Canny(_fill((side, side), _poly(top, side)), 50, 150).astype(np.float32) / 255
        img *= (1 - 0.25 * edges)[:, :, None]
        if kind == "d20":
            # neighbours across each edge of the top triangle: numerals turned to point outward
            texts = _neighbour_numbers(rng, kind, face, 3)
            for k, t in enumerate(texts):
                a, b = _TRI[(k + 1) % 3], _TRI[(k + 2) % 3]
                mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
                out = math.atan2(mid[1], mid[0])
                pos = (mid[0] + 0.17 * math.cos(out), mid[1] + 0.17 * math.sin(out))
                c = (side / 2 + pos[0] * side / 2, side / 2 + pos[1] * side / 2)
                ang = -math.degrees(out) - 90.0 + 180.0
                _draw_text(img, t, c, 0.13 * side, ang, ink, font, weight, alpha=0.8)
            height = 0.24 * side if len(text) == 2 else 0.27 * side
            _draw_text(img, text, (side / 2, side * 0.53), height, 0.0, ink, font, weight, mark=mark)
        else:
            texts = _neighbour_numbers(rng, kind, face, 2)
            for t, (x, y, ang) in zip(texts, ((0.62, 0.3, 55.0), (-0.62, 0.3, -55.0)), strict=True):
                c = (side / 2 + x * side / 2, side / 2 + y * side / 2)
                _draw_text(img, t, c, 0.13 * side, ang, ink, font, weight, alpha=0.8)
            height = 0.22 * side if len(text) == 2 else 0.26 * side
            _draw_text(img, text, (side / 2, side * 0.47), height, 0.0, ink, font, weight, mark=mark)
    if material == "translucent":
        # light passes through the body: weaker cover at the middle, a bright rim highlight
        dist = cv2.distanceTransform(mask, cv2.DIST_L2, 3)
        rim = np.clip(dist / max(1.0, 0.25 * side), 0, 1)
        ink_px = np.abs(img - np.array(body, np.float32)).sum(axis=2) > 60
        cover = np.where(ink_px, 1.0, 0.9 - 0.25 * rim) * (mask.astype(np.float32) / 255)
        img += (40.0 * (1 - rim))[:, :, None]
        mask = np.round(cover * 255).astype(np.uint8)
    return np.clip(img, 0, 255).astype(np.uint8), mask


def _cocked(patch: np.ndarray, mask: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray]:
    """A leaning die: its top foreshortened over a darker, foreshortened side (no face up)."""
    h_top, h_low = max(4, round(side * 0.7)), max(4, round(side * 0.6))
    top = cv2.resize(patch, (side, h_top), interpolation=cv2.INTER_AREA)
    low = (cv2.resize(cv2.flip(patch, 0), (side, h_low), interpolation=cv2.INTER_AREA) * 0.55).astype(
        np.uint8
    )
    tm = cv2.resize(mask, (side, h_top), interpolation=cv2.INTER_AREA)
    lm = cv2.resize(cv2.flip(mask, 0), (side, h_low), interpolation=cv2.INTER_AREA)
    return np.vstack([top, low]), np.vstack([tm, lm])


def _tilted(patch: np.ndarray, mask: np.ndarray, tilt: float, axis: float) -> tuple[np.ndarray, np.ndarray]:
    """Foreshorten by ``cos(tilt)`` along direction ``axis`` (degrees): a die seen slightly obliquely."""
    s = mask.shape[0]
    c = s / 2
    r3 = np.vstack([cv2.getRotationMatrix2D((c, c), axis, 1.0), [0.0, 0.0, 1.0]])
    k = math.cos(math.radians(tilt))
    squash = np.array([[1.0, 0.0, 0.0], [0.0, k, c * (1 - k)], [0.0, 0.0, 1.0]])
    m = np.linalg.inv(r3) @ squash @ r3
    m2 = m[:2]
    return (
        cv2.warpAffine(patch, m2, (s, s), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0)),
        cv2.warpAffine(mask, m2, (s, s), flags=cv2.INTER_LINEAR, borderValue=0),
    )


def _outline(mask: np.ndarray, centre: tuple[float, float], angle: float) -> np.ndarray:
    """The die's silhouette hull in canvas px, placed as :func:`.render._paste` places the patch.

    Why not the patch's corners: a d10's or d20's outline fills less of its square patch than a
    d6's, and the label box is the die's, not the patch's.
    """
    ph, pw = mask.shape
    ys, xs = np.nonzero(mask > 127)
    if len(xs) == 0:
        ys, xs = np.array([0, ph - 1]), np.array([0, pw - 1])
    pts = np.stack([xs, ys], axis=1).astype(np.float32)
    hull = cv2.convexHull(pts).reshape(-1, 2).astype(np.float64)
    m = cv2.getRotationMatrix2D((pw / 2, ph / 2), angle, 1.0)
    placed = np.hstack([hull + 0.5, np.ones((len(hull), 1))]) @ m.T
    return placed + np.array(centre) - np.array([pw / 2, ph / 2])


def _die_colours(
    rng: np.random.Generator, spec: TrayDie, style: NumeralStyle
) -> tuple[tuple[int, int, int], tuple[int, int, int], str, tuple[int, int, int] | None]:
    name = spec.colour or str(rng.choice(list(NUMERAL_COLOURS)))
    if name not in NUMERAL_COLOURS:
        raise SynthError(f"colour must be one of {', '.join(NUMERAL_COLOURS)}, got {name!r}")
    body, inks = NUMERAL_COLOURS[name]
    material = spec.material
    if material is None:
        u = float(rng.random())
        material = (
            "marbled"
            if u < style.marbled
            else "translucent"
            if u < style.marbled + style.translucent
            else "solid"
        )
    if material not in MATERIALS:
        raise SynthError(f"material must be one of {', '.join(MATERIALS)}, got {material!r}")
    ink = inks[int(rng.integers(len(inks)))]
    swirl = None
    if material == "marbled":
        swirl = MARBLED_COLOURS[str(rng.choice(list(MARBLED_COLOURS)))][2]
        swirl = tuple(int(0.5 * a + 0.5 * b) for a, b in zip(swirl, body, strict=True))  # type: ignore[assignment]
    # a body varies a little from die to die of one colour name
    jitter = rng.uniform(0.88, 1.08, 3)
    body = tuple(int(min(255, v * j)) for v, j in zip(body, jitter, strict=True))  # type: ignore[assignment]
    return body, ink, material, swirl


def _as_spec(d: TrayDie | tuple) -> TrayDie:
    return d if isinstance(d, TrayDie) else TrayDie(*d)


def render_tray(
    seed: int,
    dice: Sequence[TrayDie | tuple],
    size: tuple[int, int] = (640, 640),
    *,
    style: NumeralStyle | None = None,
    touching: bool = False,
) -> tuple[np.ndarray, np.ndarray, list[LabelledDie]]:
    """Draw ``dice`` on a tray: ``(frame, reference, labels)``, BGR ``uint8``, labels in ``dice`` order.

    ``dice`` are :class:`TrayDie` or ``(kind, face, colour[, material[, cocked]])`` tuples, the
    shape :func:`.render.render_scene`'s callers use for d6. ``touching`` puts the second die
    flush against the first. Boxes are whole-die ``[x, y, w, h]`` in frame pixels.
    """
    style = style or NumeralStyle()
    specs = [_as_spec(d) for d in dice]
    w, h = int(size[0]), int(size[1])
    if not (32 <= w <= 4096 and 32 <= h <= 4096):
        raise SynthError(f"size must be 32..4096 px a side, got {w}x{h}")
    if len(specs) > MAX_DICE:
        raise SynthError(f"at most {MAX_DICE} dice a tray, got {len(specs)}")
    for s in specs:
        _check(s.kind, s.face)
    rng = np.random.default_rng(seed)
    W, H = w * SS, h * SS
    unit = min(w, h) / 640 * SS
    tray = style.tray or _TRAYS[int(rng.integers(len(_TRAYS)))]
    light, towards = _light(rng, W, H, style.light if style.light is not None else float(rng.uniform(0, 0.5)))
    lo, hi = style.die_size
    sides = [float(rng.uniform(lo, hi)) * unit for _ in specs]
    centres = _place(rng, sides, W, H, touching and len(specs) >= 2)
    background = _tray(rng, W, H, tray, style.grain)
    reference = background.copy()
    canvas = background.copy()
    shade = np.ones((H, W), np.float32)
    polys = []
    for spec, s, c in zip(specs, sides, centres, strict=True):
        body, ink, material, swirl = _die_colours(rng, spec, style)
        side = max(8, round(s))
        patch, mask = draw_die(spec.kind, spec.face, side, body, ink, rng, material=material, swirl=swirl)
        tilt = float(rng.uniform(0, style.tilt)) if style.tilt > 0 else 0.0
        axis = float(rng.uniform(0, 180))
        if spec.cocked:
            patch, mask = _cocked(patch, mask, side)
        elif tilt > 1.0:
            patch, mask = _tilted(patch, mask, tilt, axis)
        angle = float(rng.uniform(0, 360))
        shadow = (towards[0] * s * 0.12, towards[1] * s * 0.12) if style.shadows else None
        _paste(canvas, shade, patch, mask, c, angle, shadow)
        polys.append(_outline(mask, c, angle))
    canvas *= (shade * light)[:, :, None]
    reference *= light[:, :, None]
    amount = style.perspective if style.perspective is not None else float(rng.uniform(0, 0.03))
    hom = _homography(rng, W, H, amount) if amount > 0 else None
    frames = []
    for img in (canvas, reference):
        if hom is not None:
            img = cv2.warpPerspective(img, hom, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        frames.append(cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA))
    frame, ref = frames
    sigma = style.blur if style.blur is not None else float(rng.choice([0.0, 0.0, 0.5, 1.0]))
    if sigma > 0:
        frame = cv2.GaussianBlur(frame, (0, 0), sigma)
        ref = cv2.GaussianBlur(ref, (0, 0), sigma)
    noise = style.noise if style.noise is not None else float(rng.uniform(1.0, 5.0))
    if noise > 0:
        frame = frame + noise * rng.standard_normal(frame.shape, dtype=np.float32)
        ref = ref + noise * rng.standard_normal(ref.shape, dtype=np.float32)
    labels = []
    for poly, spec in zip(polys, specs, strict=True):
        pts = poly.astype(np.float32).reshape(-1, 1, 2)
        if hom is not None:
            pts = cv2.perspectiveTransform(pts, hom)
        pts = pts.reshape(-1, 2) / SS
        x0, y0 = np.clip(pts.min(axis=0), 0, [w, h])
        x1, y1 = np.clip(pts.max(axis=0), 0, [w, h])
        box = (round(float(x0), 1), round(float(y0), 1), round(float(x1 - x0), 1), round(float(y1 - y0), 1))
        labels.append(LabelledDie(label_kind(spec.kind), spec.face, box, cocked=spec.cocked))
    return _to8(frame), _to8(ref), labels


def render_crop(
    seed: int, kind: str, face: int, *, colour: str | None = None, neighbour: bool | None = None
) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """One die on a small tray, maybe with a neighbour touching it: ``(frame, box of the die)``.

    Why: training and the tests read one die at a time, cut from its box the way the runtime
    reader cuts it; a 192 px tray renders ~20x faster than a 640 px one.
    """
    rng = np.random.default_rng(seed)
    dice: list[TrayDie] = [TrayDie(kind, face, colour)]
    with_neighbour = bool(rng.random() < 0.3) if neighbour is None else neighbour
    if with_neighbour:
        k = str(rng.choice(KINDS))
        dice.append(TrayDie(k, int(rng.choice(FACES[k]))))
    style = NumeralStyle(die_size=(130.0, 200.0), perspective=0.0)
    scene = int(rng.integers(2**31))
    try:
        frame, _ref, labels = render_tray(scene, dice, (240, 240), style=style, touching=with_neighbour)
    except SynthError:  # no room for the neighbour at these sizes: the die alone
        frame, _ref, labels = render_tray(scene, dice[:1], (240, 240), style=style)
    box = labels[0].box
    assert box is not None
    return frame, box
