"""One rendered training crop for the numeral reader: a die as a camera gives it, cut as the runtime cuts.

Why not a whole rendered tray per crop: a tray costs ~0.3 s, a crop here ~10 ms, and the
reader sees one die at a time anyway. What the crop must carry is what real photos carry:

- the die at its *source* size (28-200 px across, log-uniform): a tower's 40 px die is cut
  and enlarged to the reader's input, blur and all; a phone photo's 150 px die is shrunk;
- a background from real photos (:class:`~.backgrounds.BackgroundBank`: trays, paper, wood,
  card, cloth) or a plain synthetic tray, the die's soft shadow on it, and sometimes a
  neighbouring die touching or near it (any kind);
- the camera: white balance, exposure, gamma, blur, sensor noise and JPEG compression;
- the locator's box, not the true one: centre and size jittered as detector boxes are;
- a cocked die (leaning halfway to a neighbour face) carries both faces as its label, half
  each, so the reader learns to be unsure of it.

``none`` crops are bare background, a piece of a die off-centre, or a die cut far too large.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from ...faces.numerals import INPUT
from ...faces.pips import crop_die
from ...kinds import DRAWN_KINDS, KINDS
from ...synth.die3d import Font, render_solid
from ...synth.numerals import NumeralStyle, random_look
from ...synth.render import TRAY_COLOURS, tray_background
from ..backgrounds import BackgroundBank

__all__ = ["SceneCrop", "background", "camera_look", "drawn_die", "place_die", "render_crop", "render_none"]

#: Source die sizes (px across), sampled log-uniform.
SOURCE_SIZES = (28.0, 200.0)


@dataclass(frozen=True)
class SceneCrop:
    """A crop (BGR, :data:`INPUT` px) and its label: kind, face, and a second face when cocked."""

    crop: np.ndarray
    kind: str
    face: int
    second: int | None = None  #: a cocked die's other face (half the label each)


def background(rng: np.random.Generator, side: int, bank: BackgroundBank | None) -> np.ndarray:
    if bank is not None and len(bank) and rng.random() < 0.75:
        return bank.patch(rng, side).astype(np.float32)
    colour = TRAY_COLOURS[int(rng.integers(len(TRAY_COLOURS)))]
    colour = tuple(int(np.clip(c * rng.uniform(0.6, 1.3), 0, 255)) for c in colour)
    return tray_background(rng, side, side, colour, float(rng.uniform(2, 9)))  # type: ignore[arg-type]


def place_die(
    canvas: np.ndarray,
    patch: np.ndarray,
    mask: np.ndarray,
    centre: tuple[float, float],
    shadow: tuple[float, float],
    darkness: float,
) -> tuple[float, float, float, float]:
    """Paste ``patch`` centred at ``centre`` with a soft shadow; the die's box (mask > half)."""
    side = canvas.shape[0]
    ph, pw = mask.shape
    m = np.float32([[1, 0, centre[0] - pw / 2], [0, 1, centre[1] - ph / 2]])
    alpha = cv2.warpAffine(mask, m, (side, side), flags=cv2.INTER_LINEAR).astype(np.float32) / 255
    body = cv2.warpAffine(patch, m, (side, side), flags=cv2.INTER_LINEAR).astype(np.float32)
    ms = m.copy()
    ms[:, 2] += shadow
    sh = cv2.warpAffine(mask, ms, (side, side), flags=cv2.INTER_LINEAR).astype(np.float32) / 255
    sh = cv2.GaussianBlur(sh, (0, 0), 0.12 * max(pw, ph) + 0.5)
    canvas *= (1 - darkness * sh)[:, :, None]
    canvas[:] = canvas * (1 - alpha[:, :, None]) + body * alpha[:, :, None]
    ys, xs = np.nonzero(alpha > 0.5)
    if len(xs) == 0:
        return (centre[0] - 1, centre[1] - 1, 2.0, 2.0)
    return (float(xs.min()), float(ys.min()), float(xs.max() - xs.min() + 1), float(ys.max() - ys.min() + 1))


def camera_look(img: np.ndarray, rng: np.random.Generator, die_px: float) -> np.ndarray:
    """White balance, exposure, gamma, blur, noise and JPEG: a camera's marks on the frame."""
    img = img * rng.uniform(0.8, 1.2, 3)[None, None, :] * rng.uniform(0.6, 1.3) + rng.uniform(-20, 20)
    img = np.clip(img, 0, 255)
    if rng.random() < 0.5:
        img = 255.0 * (img / 255.0) ** rng.uniform(0.7, 1.4)
    # blur in the frame's px, larger for larger dice: what the crop sees is about the same
    sigma = float(rng.choice([0.0, 0.3, 0.6, 1.0, 1.4])) * max(0.6, die_px / 120)
    if sigma > 0.2:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    img = img + rng.normal(0, rng.uniform(0.5, 7.0), img.shape)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.7:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 96))])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def _jitter(rng: np.random.Generator, box: tuple[float, float, float, float]) -> tuple[float, ...]:
    """A locator's box for the die: centre off by ~5 %, size 0.9-1.2x, aspect a little off."""
    x, y, w, h = box
    s = max(w, h)
    dx, dy = rng.normal(0, 0.05 * s, 2)
    kw, kh = rng.uniform(0.9, 1.2) * rng.uniform(0.95, 1.05, 2)
    cx, cy = x + w / 2 + dx, y + h / 2 + dy
    return (cx - w * kw / 2, cy - h * kh / 2, w * kw, h * kh)


def drawn_die(
    rng: np.random.Generator, kind: str, face: int, px: float, style: NumeralStyle, cocked: bool, light
):
    look = random_look(rng, None, None, style)
    side = max(8, round(2 * px))
    d = render_solid(kind, face, side, look, rng, tilt=style.tilt, cocked=cocked, light=light)
    h, w = d.mask.shape
    half = (max(1, w // 2), max(1, h // 2))
    patch = cv2.resize(d.patch, half, interpolation=cv2.INTER_AREA)
    mask = cv2.resize(d.mask, half, interpolation=cv2.INTER_AREA)
    return d, patch, mask


def _scene(
    rng: np.random.Generator,
    kind: str,
    face: int,
    bank: BackgroundBank | None,
    fonts: tuple[Font, ...],
    cocked: bool,
) -> tuple[np.ndarray, tuple[float, float, float, float], float, int]:
    """The camera frame around one die: (BGR frame, die box, die px, next face)."""
    lo, hi = SOURCE_SIZES
    px = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    style = NumeralStyle(fonts=fonts, tilt=float(rng.choice([8.0, 20.0, 45.0])))
    side = math.ceil(px * 2.6)
    canvas = background(rng, side, bank)
    light = np.array([rng.uniform(-0.7, 0.7), rng.uniform(-0.7, 0.7), 1.0])
    shadow_dir = -light[:2] / (np.linalg.norm(light[:2]) + 1e-6) * np.array([1.0, -1.0])
    darkness = float(rng.uniform(0.2, 0.6))
    centre = (side / 2 + rng.normal(0, 0.05 * px), side / 2 + rng.normal(0, 0.05 * px))
    if rng.random() < 0.35:  # a neighbour, touching or near
        k2 = str(rng.choice(DRAWN_KINDS))
        px2 = px * float(rng.uniform(0.7, 1.3))
        _d2, p2, m2 = drawn_die(rng, k2, int(rng.choice(KINDS[k2].faces)), px2, style, False, light)
        a = rng.uniform(0, 2 * math.pi)
        dist = (px + px2) / 2 * float(rng.uniform(0.85, 1.3))
        c2 = (centre[0] + dist * math.cos(a), centre[1] + dist * math.sin(a))
        place_die(canvas, p2, m2, c2, tuple(shadow_dir * 0.1 * px2), darkness)
    d, patch, mask = drawn_die(rng, kind, face, px, style, cocked, light)
    box = place_die(canvas, patch, mask, centre, tuple(shadow_dir * 0.1 * px), darkness)
    return camera_look(canvas, rng, px), box, px, d.next_face


def render_crop(
    seed: int,
    kind: str,
    face: int,
    *,
    bank: BackgroundBank | None = None,
    fonts: tuple[Font, ...] = NumeralStyle().fonts,
    cocked_share: float = 0.04,
) -> SceneCrop:
    """One labelled crop of a die of ``kind`` showing ``face`` (module docstring)."""
    rng = np.random.default_rng(seed)
    cocked = kind != "d6" and bool(rng.random() < cocked_share)
    frame, box, _px, next_face = _scene(rng, kind, face, bank, fonts, cocked)
    crop = crop_die(frame, _jitter(rng, box), size=INPUT, angle=float(rng.uniform(0, 360)))
    return SceneCrop(crop, kind, face, next_face if cocked else None)


def render_none(
    seed: int, *, bank: BackgroundBank | None = None, fonts: tuple[Font, ...] = NumeralStyle().fonts
) -> SceneCrop:
    """A crop that holds no die: the background, or a piece of a die at a box's edge."""
    rng = np.random.default_rng(seed)
    kind = str(rng.choice(DRAWN_KINDS))
    frame, box, px, _ = _scene(rng, kind, int(rng.choice(KINDS[kind].faces)), bank, fonts, False)
    x, y, w, h = box
    if rng.random() < 0.5:  # a piece: a small box at the die's edge
        a = rng.uniform(0, 2 * math.pi)
        cx, cy = x + w / 2 + 0.5 * w * math.cos(a), y + h / 2 + 0.5 * h * math.sin(a)
        s = w * float(rng.uniform(0.25, 0.45))
    else:  # the background beside it
        side = frame.shape[0]
        s = px * float(rng.uniform(0.4, 1.0))
        cx, cy = (float(v) for v in rng.uniform(s / 2, side - s / 2, 2))
        if abs(cx - (x + w / 2)) < w * 0.8 and abs(cy - (y + h / 2)) < h * 0.8:
            cx = (cx + side / 2) % side
    crop = crop_die(frame, (cx - s / 2, cy - s / 2, s, s), size=INPUT, angle=float(rng.uniform(0, 360)))
    return SceneCrop(crop, "none", -1)
