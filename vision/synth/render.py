"""Render top-down photos of d6 in a tray, with their labels and an empty-tray reference.

Everything is drawn from one ``numpy`` generator seeded by ``seed``, so a scene is the same
on every run and machine (OpenCV's drawing and warping are deterministic). The renderer is
for tests, the simulated camera and stress cases the datasets lack (cocked and touching
dice, the red wild die, blur); it never stands in for real photos in an accuracy claim.

What is varied: tray colour and texture, die body colour (white, ivory, red wild die, green,
blue, black, yellow, purple), pip colour and shape (round, square, ring), die size,
rounded corners, rotation, light direction and strength (a gradient on the frame and the
reference alike), drop shadows, Gaussian or motion blur, sensor noise and a slight
perspective (the same homography for frame and reference).

*Marbled* dice (``SceneStyle.marbled``, off by default): a dark smoke-grey, blue or teal body
streaked with pale swirls, under red or white pips: the dice the reader misses most on real
photos (``byler-d6``, BENCHMARKS.md), where a swirl crossing the face looks like a pip to it.
A swirl is a smooth stroke under the pips, so it can touch a pip but never cover one.

A *cocked* die leans on the tray wall or another die: it is drawn as two foreshortened
faces (the one more toward the camera, then a darker side face). Its label carries
``cocked=True`` and ``face`` = the face more toward the camera; eval expects the reader to
call it unreadable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from ..errors import VisionError
from ..manifest import LabelledDie
from .tray import TowerTray

__all__ = [
    "BODY_COLOURS",
    "MARBLED_COLOURS",
    "PIP_LAYOUT",
    "TRAY_COLOURS",
    "SceneStyle",
    "SynthError",
    "draw_face",
    "homography",
    "light_field",
    "paste_die",
    "place_dice",
    "render_scene",
    "swirls",
    "to_uint8",
    "tray_background",
]

#: Pip centres per face in the face's unit square [-1, 1]^2 (standard Western layout).
PIP_LAYOUT: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.0, 0.0),),
    2: ((-0.5, -0.5), (0.5, 0.5)),
    3: ((-0.5, -0.5), (0.0, 0.0), (0.5, 0.5)),
    4: ((-0.5, -0.5), (0.5, -0.5), (-0.5, 0.5), (0.5, 0.5)),
    5: ((-0.5, -0.5), (0.5, -0.5), (0.0, 0.0), (-0.5, 0.5), (0.5, 0.5)),
    6: ((-0.5, -0.55), (0.5, -0.55), (-0.5, 0.0), (0.5, 0.0), (-0.5, 0.55), (0.5, 0.55)),
}

#: name -> (body BGR, pip BGR choices)
BODY_COLOURS: dict[str, tuple[tuple[int, int, int], tuple[tuple[int, int, int], ...]]] = {
    "white": ((235, 235, 232), ((20, 20, 20), (120, 40, 20), (30, 30, 160))),
    "ivory": ((190, 222, 235), ((25, 25, 25),)),
    "red": ((40, 35, 200), ((245, 245, 245), (40, 200, 230))),  # the wild die
    "green": ((60, 150, 40), ((245, 245, 245), (20, 20, 20))),
    "blue": ((170, 80, 30), ((245, 245, 245), (40, 200, 230))),
    "black": ((32, 30, 30), ((245, 245, 245), (40, 180, 220))),
    "yellow": ((40, 200, 235), ((20, 20, 20),)),
    "purple": ((140, 50, 110), ((245, 245, 245),)),
}

#: name -> (body BGR, pip BGR choices, swirl BGR): bodies drawn with pale swirls (``marbled``).
MARBLED_COLOURS: dict[
    str, tuple[tuple[int, int, int], tuple[tuple[int, int, int], ...], tuple[int, int, int]]
] = {
    "smoke": ((58, 56, 60), ((45, 40, 165), (35, 30, 125), (60, 60, 205)), (190, 190, 195)),
    "smoke-white": ((58, 56, 60), ((235, 235, 235),), (150, 150, 155)),
    "blue-marble": ((160, 95, 30), ((50, 45, 190), (240, 240, 240)), (225, 215, 205)),
    "teal-marble": ((120, 125, 25), ((40, 200, 230), (240, 240, 240)), (210, 225, 215)),
    "red-marble": ((45, 40, 150), ((240, 240, 240),), (200, 200, 225)),
}

#: Tray colours (BGR under neutral light) a scene draws from when its style names none.
TRAY_COLOURS: tuple[tuple[int, int, int], ...] = (
    (118, 118, 118),  # grey tray
    (40, 80, 32),  # green felt
    (60, 100, 150),  # wood
    (222, 222, 222),  # white paper
    (70, 40, 40),  # dark blue cloth
)

#: Supersampling factor: draw at SS x size, then area-downsample (anti-aliasing).
SS = 2
#: Placement attempts per die before giving up (bounds the work for crowded trays).
MAX_TRIES = 400
#: Whole layouts tried before a tray is said not to fit its dice (:func:`place_dice`).
MAX_LAYOUTS = 20


class SynthError(VisionError, ValueError):
    """A scene that cannot be drawn as asked (e.g. more dice than fit the tray)."""


@dataclass(frozen=True)
class SceneStyle:
    """Knobs for :func:`render_scene`; ``None`` means drawn at random from the seed."""

    die_size: tuple[float, float] = (36.0, 60.0)  #: die side range in pixels at 640 px
    body: str | None = None  #: a key of BODY_COLOURS, or None for random (per die)
    wild_die: bool = False  #: make the first die the red wild die
    pip_shape: str | None = None  #: "round", "square", "ring" or None
    tray: tuple[int, int, int] | None = None
    blur: float | None = None  #: Gaussian sigma in px (0 = sharp)
    motion_blur: int = 0  #: motion-blur length in px (0 = none)
    noise: float | None = None  #: sensor noise sigma (grey levels)
    perspective: float | None = None  #: corner jitter as a fraction of the size
    parallax: float | None = None  #: how much of the sides shows at the frame's edge (die heights)
    light: float | None = None  #: light gradient strength (0 = flat)
    shadows: bool = True
    grain: float = 5.0  #: tray texture amplitude (grey levels)
    marbled: float = 0.0  #: share of dice drawn with a marbled body (MARBLED_COLOURS)
    #: draw the tower's own tray (walls, liner, ring light; :mod:`.tray`) instead of a flat field:
    #: ``tray``, ``grain`` and ``light`` then have no say, and dice land on its floor only
    tower: TowerTray | None = None


def _rounded_mask(w: int, h: int, radius: float) -> np.ndarray:
    mask = np.zeros((h, w), np.uint8)
    r = max(1, min(int(radius), w // 2 - 1, h // 2 - 1))
    cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


def swirls(img: np.ndarray, colour: tuple[int, int, int], seed: int) -> None:
    """Paint 1-4 pale, soft-edged strokes across ``img`` (float BGR, in place): marbling."""
    rng = np.random.default_rng(seed)
    side = img.shape[0]
    alpha = np.zeros(img.shape[:2], np.float32)
    t = np.linspace(0.0, 1.0, 24)[:, None]
    for _ in range(int(rng.integers(1, 5))):
        p0, p1, p2 = rng.uniform(-0.1, 1.1, (3, 2)) * side  # a quadratic Bezier across the face
        curve = (1 - t) ** 2 * p0 + 2 * (1 - t) * t * p1 + t**2 * p2
        width = max(1, round(float(rng.uniform(0.05, 0.14)) * side))
        cv2.polylines(alpha, [curve.round().astype(np.int32)], False, float(rng.uniform(0.6, 1.0)), width)
    alpha = cv2.GaussianBlur(alpha, (0, 0), max(0.5, 0.02 * side))[:, :, None]
    img[:] = img * (1 - alpha) + np.array(colour, np.float32) * alpha


def draw_face(
    face: int,
    side: int,
    body: tuple[int, int, int],
    pip: tuple[int, int, int],
    pip_shape: str = "round",
    corner: float = 0.18,
    *,
    swirl: tuple[int, int, int] | None = None,
    swirl_seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """One die face seen square-on: (BGR patch, alpha mask), ``side`` x ``side`` px.

    ``swirl`` marbles the body with strokes of that colour (drawn from ``swirl_seed``).
    """
    if face not in PIP_LAYOUT:
        raise SynthError(f"a d6 has faces 1-6, not {face}")
    img = np.empty((side, side, 3), np.float32)
    img[:] = body
    if swirl is not None:
        swirls(img, swirl, swirl_seed)
    mask = _rounded_mask(side, side, corner * side)
    # bevel: the rounded edge catches less light than the flat face
    dist = cv2.distanceTransform(mask, cv2.DIST_L2, 3)
    bevel = 0.72 + 0.28 * np.clip(dist / max(1.0, 0.1 * side), 0, 1)
    img *= bevel[:, :, None]
    half = side / 2
    r = 0.11 * side
    for px, py in PIP_LAYOUT[face]:
        cx, cy = half + px * half * 0.95, half + py * half * 0.95
        if pip_shape == "square":
            q = r * 0.8  # same area as the round pip, and clear of its diagonal neighbours
            p0 = (round(cx - q), round(cy - q))
            p1 = (round(cx + q), round(cy + q))
            cv2.rectangle(img, p0, p1, pip, -1, cv2.LINE_AA)
        elif pip_shape == "ring":
            t = max(1, round(r * 0.4))  # the stroke is centred on the radius: keep the outside at r
            cv2.circle(img, (round(cx), round(cy)), max(1, round(r - t / 2)), pip, t, cv2.LINE_AA)
        else:
            cv2.circle(img, (round(cx), round(cy)), round(r), pip, -1, cv2.LINE_AA)
    return np.clip(img, 0, 255).astype(np.uint8), mask


def _cocked_patch(
    rng: np.random.Generator,
    face: int,
    side: int,
    body: tuple[int, int, int],
    pip: tuple[int, int, int],
    shape: str,
    swirl: tuple[int, int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """A die leaning ~40 degrees: the face toward the camera above a darker side face."""
    others = [f for f in range(1, 7) if f not in (face, 7 - face)]
    side_face = int(rng.choice(others))
    seeds = rng.integers(0, 2**31, 2) if swirl is not None else (0, 0)
    top, top_mask = draw_face(face, side, body, pip, shape, swirl=swirl, swirl_seed=int(seeds[0]))
    low, low_mask = draw_face(side_face, side, body, pip, shape, swirl=swirl, swirl_seed=int(seeds[1]))
    h_top = max(4, round(side * 0.76))
    h_low = max(4, round(side * 0.62))
    top = cv2.resize(top, (side, h_top), interpolation=cv2.INTER_AREA)
    low = (cv2.resize(low, (side, h_low), interpolation=cv2.INTER_AREA) * 0.6).astype(np.uint8)
    top_mask = cv2.resize(top_mask, (side, h_top), interpolation=cv2.INTER_AREA)
    low_mask = cv2.resize(low_mask, (side, h_low), interpolation=cv2.INTER_AREA)
    patch = np.vstack([top, low])
    mask = np.vstack([top_mask, low_mask])
    return patch, mask, side_face


def paste_die(
    canvas: np.ndarray,
    shade: np.ndarray,
    patch: np.ndarray,
    mask: np.ndarray,
    centre: tuple[float, float],
    angle: float,
    shadow: tuple[float, float] | None,
) -> np.ndarray:
    """Rotate ``patch`` about its centre, place it at ``centre`` (canvas px); return its corners."""
    ph, pw = mask.shape
    m = cv2.getRotationMatrix2D((pw / 2, ph / 2), angle, 1.0)
    corners = np.array([[0, 0, 1], [pw, 0, 1], [pw, ph, 1], [0, ph, 1]], np.float64) @ m.T
    corners += np.array(centre) - np.array([pw / 2, ph / 2])
    ch, cw = canvas.shape[:2]
    pad = max(pw, ph) * 0.4
    x0 = max(0, math.floor(corners[:, 0].min() - pad))
    y0 = max(0, math.floor(corners[:, 1].min() - pad))
    x1 = min(cw, math.ceil(corners[:, 0].max() + pad))
    y1 = min(ch, math.ceil(corners[:, 1].max() + pad))
    if x1 <= x0 or y1 <= y0:
        return corners
    m_roi = m.copy()
    m_roi[:, 2] += np.array(centre) - np.array([pw / 2, ph / 2]) - np.array([x0, y0])
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpAffine(patch, m_roi, size, flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))
    alpha = cv2.warpAffine(mask, m_roi, size, flags=cv2.INTER_LINEAR, borderValue=0).astype(np.float32) / 255
    if shadow is not None:
        dx, dy = shadow
        sm = np.float32([[1, 0, dx], [0, 1, dy]])
        sh = cv2.warpAffine(alpha, sm, size, borderValue=0)
        k = max(3, int(max(pw, ph) * 0.25) | 1)
        sh = cv2.GaussianBlur(sh, (k, k), 0)
        shade[y0:y1, x0:x1] *= 1 - 0.5 * sh
    roi = canvas[y0:y1, x0:x1]
    roi[:] = roi * (1 - alpha[:, :, None]) + warped.astype(np.float32) * alpha[:, :, None]
    # the die is lit, not in its own shadow
    shade[y0:y1, x0:x1] = shade[y0:y1, x0:x1] * (1 - alpha) + alpha
    return corners


def tray_background(
    rng: np.random.Generator, w: int, h: int, colour: tuple[int, int, int], amount: float
) -> np.ndarray:
    base = np.empty((h, w, 3), np.float32)
    base[:] = colour
    grain = rng.normal(0, 1, (max(2, h // 16), max(2, w // 16))).astype(np.float32)
    grain = cv2.resize(grain, (w, h), interpolation=cv2.INTER_CUBIC)
    base += (grain * amount)[:, :, None]
    return base


def light_field(
    rng: np.random.Generator, w: int, h: int, strength: float
) -> tuple[np.ndarray, tuple[float, float]]:
    theta = rng.uniform(0, 2 * math.pi)
    ux, uy = math.cos(theta), math.sin(theta)
    xs = (np.arange(w, dtype=np.float32) / w - 0.5)[None, :]
    ys = (np.arange(h, dtype=np.float32) / h - 0.5)[:, None]
    grad = 1.0 + strength * (xs * ux + ys * uy)
    return grad.astype(np.float32), (-ux, -uy)


def place_dice(
    rng: np.random.Generator,
    sides: list[float],
    w: int,
    h: int,
    touching: bool,
    tower: TowerTray | None = None,
) -> list[tuple[float, float]]:
    """Centres for ``sides`` px dice, apart (or the second flush against the first), on ``tower``'s floor.

    Dice are placed one after another at random; when a die finds no room, the whole tray is laid out
    again (up to :data:`MAX_LAYOUTS` times): a full tower tray has room for its dice, but not after
    every first few places. A layout that fits at once draws the same numbers as it always did.
    """
    for _ in range(MAX_LAYOUTS):
        centres = _lay_out(rng, sides, w, h, touching, tower)
        if centres is not None:
            return centres
    raise SynthError(f"cannot fit {len(sides)} dice of up to {max(sides):.0f} px in {w}x{h}")


def _lay_out(
    rng: np.random.Generator,
    sides: list[float],
    w: int,
    h: int,
    touching: bool,
    tower: TowerTray | None,
) -> list[tuple[float, float]] | None:
    """One try at :func:`place_dice`: None when a die finds no room."""
    centres: list[tuple[float, float]] = []
    margin = 0.04 * min(w, h)
    for i, s in enumerate(sides):
        reach = s * 0.75  # half the diagonal of a rotated square, plus a little
        lo, hi_x, hi_y = margin + reach, w - margin - reach, h - margin - reach
        if hi_x < lo or hi_y < lo:
            raise SynthError(f"a {s:.0f} px die does not fit in {w}x{h}")
        for _ in range(MAX_TRIES):
            if touching and i == 1 and centres:
                # lean the second die against the first: centres one side apart
                a = rng.uniform(0, 2 * math.pi)
                d = (sides[0] + s) / 2 * 1.02
                c = (centres[0][0] + d * math.cos(a), centres[0][1] + d * math.sin(a))
            else:
                c = (rng.uniform(lo, hi_x), rng.uniform(lo, hi_y))
            if not (lo <= c[0] <= hi_x and lo <= c[1] <= hi_y):
                continue
            if tower is not None and not tower.fits(w, h, c[0], c[1], reach):
                continue
            gap = 1.02 if touching and i == 1 else 1.5
            near = zip(centres, sides[: len(centres)], strict=True)
            if all(math.hypot(c[0] - o[0], c[1] - o[1]) >= gap * (s + so) / 2 for o, so in near):
                centres.append(c)
                break
        else:
            return None
    return centres


def homography(rng: np.random.Generator, w: int, h: int, amount: float) -> np.ndarray:
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    jitter = rng.uniform(-amount, amount, (4, 2)) * np.float32([w, h])
    return cv2.getPerspectiveTransform(src, (src + jitter).astype(np.float32))


def render_scene(
    seed: int,
    n_dice: int,
    size: tuple[int, int] = (640, 640),
    *,
    style: SceneStyle | None = None,
    faces: list[int] | None = None,
    cocked: int = 0,
    touching: bool = False,
    pip_colours: Sequence[tuple[int, int, int]] | None = None,
) -> tuple[np.ndarray, np.ndarray, list[LabelledDie]]:
    """Draw ``n_dice`` d6 on a tray: ``(frame, reference, labels)``, both images BGR ``uint8``.

    ``size`` is ``(width, height)``. ``faces`` fixes the faces (else random); the last
    ``cocked`` dice lean (see module docstring); ``touching`` puts the second die flush
    against the first; ``pip_colours`` fixes each die's pip colour, BGR (else drawn from its
    body's choices: a set of physical dice keeps its pips from throw to throw, a dataset need
    not). ``labels`` boxes are whole-die ``[x, y, w, h]`` in frame pixels.
    """
    style = style or SceneStyle()
    w, h = int(size[0]), int(size[1])
    if not (32 <= w <= 4096 and 32 <= h <= 4096):
        raise SynthError(f"size must be 32..4096 px a side, got {w}x{h}")
    if not 0 <= n_dice <= 60:
        raise SynthError(f"n_dice must be 0..60, got {n_dice}")
    if not 0 <= cocked <= n_dice:
        raise SynthError(f"cocked must be 0..n_dice, got {cocked}")
    if not 0.0 <= style.marbled <= 1.0:
        raise SynthError(f"marbled is a share of the dice, 0..1, got {style.marbled}")
    if faces is not None and (len(faces) != n_dice or any(f not in PIP_LAYOUT for f in faces)):
        raise SynthError("faces must list one face 1-6 per die")
    if pip_colours is not None and len(pip_colours) != n_dice:
        raise SynthError(f"pip_colours must list one colour per die: {n_dice}, got {len(pip_colours)}")
    rng = np.random.default_rng(seed)
    W, H = w * SS, h * SS
    unit = min(w, h) / 640 * SS
    tray = style.tray or TRAY_COLOURS[int(rng.integers(len(TRAY_COLOURS)))]
    light_strength = style.light if style.light is not None else float(rng.uniform(0.0, 0.5))
    light, towards = light_field(rng, W, H, light_strength)
    tower = style.tower
    if tower is not None:
        light = tower.light(W, H)
    parallax = style.parallax if style.parallax is not None else float(rng.uniform(0.0, 0.2))
    shape = style.pip_shape or str(rng.choice(["round", "round", "round", "square", "ring"]))
    lo, hi = style.die_size
    sides = [float(rng.uniform(lo, hi)) * unit for _ in range(n_dice)]
    faces = list(faces) if faces is not None else [int(rng.integers(1, 7)) for _ in range(n_dice)]
    centres = place_dice(rng, sides, W, H, touching and n_dice >= 2, tower)
    background = tower.draw(W, H) if tower is not None else tray_background(rng, W, H, tray, style.grain)
    reference = background.copy()
    canvas = background.copy()
    shade = np.ones((H, W), np.float32)
    polys: list[np.ndarray] = []
    labels_meta: list[tuple[int, bool]] = []
    names = list(BODY_COLOURS)
    body_name = style.body
    for i, (s, c, f) in enumerate(zip(sides, centres, faces, strict=True)):
        name = "red" if style.wild_die and i == 0 else body_name or str(rng.choice(names))
        body, pips = BODY_COLOURS[name]
        swirl: tuple[int, int, int] | None = None
        # Only drawn from the generator when asked for, so scenes without marbling stay as they were.
        if style.marbled > 0 and not (style.wild_die and i == 0) and rng.random() < style.marbled:
            body, pips, swirl = MARBLED_COLOURS[str(rng.choice(list(MARBLED_COLOURS)))]
        pip = pips[int(rng.integers(len(pips)))]  # drawn either way: the scene's other numbers stay
        if pip_colours is not None:
            r, g, b = pip_colours[i]
            pip = (int(r), int(g), int(b))
        side = max(8, round(s))
        angle = float(rng.uniform(0, 360))
        is_cocked = i >= n_dice - cocked
        if is_cocked:
            patch, mask, _ = _cocked_patch(rng, f, side, body, pip, shape, swirl)
        else:
            seed_swirl = int(rng.integers(0, 2**31)) if swirl is not None else 0
            patch, mask = draw_face(f, side, body, pip, shape, swirl=swirl, swirl_seed=seed_swirl)
        shadow = (towards[0] * s * 0.12, towards[1] * s * 0.12) if style.shadows else None
        if tower is not None and style.shadows:
            shadow = tower.shadow(W, H, c[0], c[1], s)
        corners = []
        # a camera above the tray centre sees the side of a die that faces the centre: draw
        # the body's footprint, darker, stepped from the base to under the top face
        offset = (np.array(c) - (W / 2, H / 2)) / (0.5 * min(W, H)) * s * parallax
        if not is_cocked and float(np.hypot(*offset)) >= 1.0:
            wall = np.empty_like(patch)
            wall[:] = (np.array(body, np.float32) * 0.55).astype(np.uint8)
            steps = max(2, int(np.hypot(*offset) / 2))
            for k in range(steps, 0, -1):
                at = (c[0] - offset[0] * k / steps, c[1] - offset[1] * k / steps)
                corners.append(
                    paste_die(canvas, shade, wall, mask, at, angle, shadow if k == steps else None)
                )
                shadow = None
        corners.append(paste_die(canvas, shade, patch, mask, c, angle, shadow))
        polys.append(np.vstack(corners))
        labels_meta.append((f, is_cocked))
    canvas *= (shade * light)[:, :, None]
    reference *= light[:, :, None]
    amount = style.perspective if style.perspective is not None else float(rng.uniform(0, 0.03))
    hom = homography(rng, W, H, amount) if amount > 0 else None
    frames = []
    for img in (canvas, reference):
        if hom is not None:
            img = cv2.warpPerspective(img, hom, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        frames.append(cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA))
    frame, ref = frames
    sigma = style.blur if style.blur is not None else float(rng.choice([0.0, 0.0, 0.6, 1.2]))
    if sigma > 0:
        frame = cv2.GaussianBlur(frame, (0, 0), sigma)
        ref = cv2.GaussianBlur(ref, (0, 0), sigma)
    if style.motion_blur > 1:
        k = np.zeros((style.motion_blur, style.motion_blur), np.float32)
        k[style.motion_blur // 2, :] = 1.0 / style.motion_blur
        frame = cv2.filter2D(frame, -1, k)
    noise = style.noise if style.noise is not None else float(rng.uniform(1.0, 5.0))
    if noise > 0:
        frame = frame + noise * rng.standard_normal(frame.shape, dtype=np.float32)
        ref = ref + noise * rng.standard_normal(ref.shape, dtype=np.float32)
    labels = []
    for poly, (f, is_cocked) in zip(polys, labels_meta, strict=True):
        pts = poly.astype(np.float32).reshape(-1, 1, 2)
        if hom is not None:
            pts = cv2.perspectiveTransform(pts, hom)
        pts = pts.reshape(-1, 2) / SS
        x0, y0 = np.clip(pts.min(axis=0), 0, [w, h])
        x1, y1 = np.clip(pts.max(axis=0), 0, [w, h])
        box = (round(float(x0), 1), round(float(y0), 1), round(float(x1 - x0), 1), round(float(y1 - y0), 1))
        labels.append(LabelledDie("d6", f, box, cocked=is_cocked))
    return to_uint8(frame), to_uint8(ref), labels


def to_uint8(img: np.ndarray) -> np.ndarray:
    return np.clip(img, 0, 255).round().astype(np.uint8)
