"""Training crops for the upright-numeral reader: one numeral, upright, in the middle of a die face.

Why upright: a network that must read a numeral at every angle spends its few weights on
rotation; the runtime turns the crop instead (:mod:`dicetower.vision.faces.glyphs` tries every
15 degrees and keeps the surest upright reading), so the network learns numeral shapes only.
Why flat 2-D drawings, not whole dice: what has to transfer to real dice is the shape of
the numeral in the middle of the face, in any font, ink and body; the face around it (facet
edges, shading, neighbour numerals cut by the crop's edge) is drawn only so the network learns
to ignore it.

Each crop: a body (plain, speckled or marbled colours of :mod:`dicetower.vision.synth`), the
top face as a triangle (d20), kite or square of its own shade with the numeral upright
(+-12 degrees, foreshortened up to 45 % in any direction as a tilted face is, 6/9 marked by bar
or dot), two to four neighbour numerals towards the edges (a third of them upright too, so the
middle, not uprightness, decides), light fall-off, a highlight, blur, made grey as the runtime
makes it (:func:`~dicetower.vision.faces.glyphs.ink_grey`), noise and JPEG. Class ``none`` is a face
with no numeral in the middle, pips, or a numeral lying 90-270 degrees off upright (so the
search does not take a turned 6 for a 9).
"""

from __future__ import annotations

import argparse
import math
from multiprocessing import Pool
from pathlib import Path

import cv2
import numpy as np

from ...faces.glyphs import GLYPH_INPUT, TEXTS, ink_grey
from ...synth.die3d import BUILTIN_FONTS, Font, body_image, glyph
from ...synth.numerals import NumeralStyle, random_look
from ..numerals.data import training_fonts

__all__ = ["HALF_TURN_ALIKE", "draw_glyph_crop", "glyph_samples", "main"]

#: Drawn at this side, then shrunk to GLYPH_INPUT (anti-aliasing, and blur that scales).
_DRAW = 2 * GLYPH_INPUT
#: Numerals that look the same (near enough) half turned: never taught as ``none`` when turned.
HALF_TURN_ALIKE = frozenset({"0", "1", "8", "00", "11", "69", "96"})
_MARKED = frozenset({"6", "9"})
_FONTS: tuple[Font, ...] = BUILTIN_FONTS
#: Largest turn off upright a numeral is drawn at: over half the reader's 15-degree step.
TILT = 12.0


def _paste_text(
    img: np.ndarray,
    text: str,
    font: Font,
    mark: str | None,
    ink: np.ndarray,
    centre: tuple[float, float],
    height: float,
    angle: float,
    squeeze: float,
    squeeze_dir: float = 0.0,
) -> None:
    """Ink ``text`` centred at ``centre``, ``height`` px tall, turned ``angle`` degrees (ccw).

    ``squeeze`` (<= 1) shortens it along ``squeeze_dir`` (degrees, canvas axes), as a face
    tilted away from the lens is foreshortened in the direction of its tilt.
    """
    alpha, numeral_h = glyph(text, font, mark)
    k = height / numeral_h
    gw = alpha.shape[1]
    a = math.radians(angle)
    turn = np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])
    d = math.radians(squeeze_dir)
    u = np.array([math.cos(d), -math.sin(d)])
    foreshorten = np.eye(2) - (1.0 - squeeze) * np.outer(u, u)
    lin = (foreshorten @ turn * k).astype(np.float32)
    m = np.zeros((2, 3), np.float32)
    m[:, :2] = lin
    m[:, 2] = np.array(centre, np.float32) - lin @ np.array([gw / 2, numeral_h / 2], np.float32)
    warped = cv2.warpAffine(alpha, m, (img.shape[1], img.shape[0]), flags=cv2.INTER_LINEAR, borderValue=0.0)
    img *= 1 - warped[:, :, None]
    img += ink * warped[:, :, None]


def _face_polygon(rng: np.random.Generator, centre: np.ndarray, up: float, r: float) -> np.ndarray:
    """The top face round the numeral: a triangle (apex up or down), a kite or a square."""
    shape = rng.choice(["tri", "tri", "kite", "square"])
    if shape == "tri":
        start = up + (90.0 if rng.random() < 0.5 else -90.0)
        angles = [start + 120.0 * i for i in range(3)]
        radii = [r] * 3
    elif shape == "kite":
        angles = [up + 90.0, up, up - 90.0, up + 180.0]
        radii = [1.25 * r, 0.7 * r, 0.5 * r, 0.7 * r]
    else:
        angles = [up + 45.0 + 90.0 * i for i in range(4)]
        radii = [r] * 4
    pts = [
        centre + rad * np.array([math.cos(math.radians(a)), -math.sin(math.radians(a))])
        for a, rad in zip(angles, radii, strict=True)
    ]
    return np.array(pts, np.float32)


def draw_glyph_crop(seed: int, fonts: tuple[Font, ...] = BUILTIN_FONTS) -> tuple[np.ndarray, int]:
    """One grey crop (GLYPH_INPUT square, uint8) and its class (index into ``("none", *TEXTS)``)."""
    rng = np.random.default_rng(seed)
    look = random_look(rng, style=NumeralStyle(fonts=fonts))
    n = _DRAW
    img = body_image(look, (n, n), rng)
    centre = np.array([n / 2, n / 2]) + rng.normal(0, 0.04 * n, 2)
    height = float(rng.uniform(0.24, 0.5)) * n
    tilt = float(rng.uniform(-TILT, TILT))  # the numeral (and its face) off upright
    # the top face, shaded apart from the facets around it
    face = _face_polygon(rng, centre, 90.0 + tilt, float(rng.uniform(0.55, 0.8)) * n)
    shade = np.full((n, n), float(rng.uniform(0.55, 1.05)), np.float32)
    for _ in range(int(rng.integers(0, 4))):  # facet edges outside the face
        a = rng.uniform(0, 2 * math.pi)
        p0 = centre + 0.5 * n * np.array([math.cos(a), math.sin(a)])
        d = np.array([-math.sin(a), math.cos(a)])
        poly = np.array(
            [
                p0 - 2 * n * d,
                p0 + 2 * n * d,
                p0 + 2 * n * d + 2 * n * (p0 - centre) / np.linalg.norm(p0 - centre),
                p0 - 2 * n * d + 2 * n * (p0 - centre) / np.linalg.norm(p0 - centre),
            ]
        )
        cv2.fillPoly(shade, [np.round(poly).astype(np.int32)], float(rng.uniform(0.5, 1.1)))
    cv2.fillPoly(shade, [np.round(face).astype(np.int32)], float(rng.uniform(0.85, 1.2)))
    ink = np.array(look.ink, np.float32)
    label = 0
    u = rng.random()
    if u < 0.86:
        text = str(rng.choice(TEXTS))
        mark = look.mark if (text in _MARKED or (look.mark_all and text in ("60", "90"))) else None
        angle = tilt
        turned = u >= 0.78 and text not in HALF_TURN_ALIKE
        if turned:
            angle += float(rng.uniform(90, 270))
        else:
            label = 1 + TEXTS.index(text)
        font = fonts[int(rng.integers(len(fonts)))]
        squeeze = float(rng.uniform(0.55, 1.0)) if rng.random() < 0.6 else 1.0
        _paste_text(
            img, text, font, mark, ink, tuple(centre), height, angle, squeeze, float(rng.uniform(0, 180))
        )
    elif u < 0.93:  # pips
        for _ in range(int(rng.integers(1, 7))):
            p = centre + rng.uniform(-0.25, 0.25, 2) * n
            cv2.circle(
                img,
                (round(p[0]), round(p[1])),
                max(2, round(0.06 * n)),
                tuple(float(v) for v in ink),
                -1,
                cv2.LINE_AA,
            )
    # neighbours toward the edges, each at its own angle; some stand upright too, so the middle,
    # not uprightness, is what the class follows
    for _ in range(int(rng.integers(2, 5))):
        a = rng.uniform(0, 2 * math.pi)
        t = str(rng.choice(TEXTS))
        font = fonts[int(rng.integers(len(fonts)))]
        turn = float(rng.uniform(-15, 15)) if rng.random() < 0.35 else float(rng.uniform(0, 360))
        size = height * float(rng.uniform(0.6, 1.1))
        reach = max(
            float(rng.uniform(0.4, 0.62)) * n, 0.95 * (height + size) / 2 + 0.05 * n
        )  # clear of the middle
        p = centre + reach * np.array([math.cos(a), math.sin(a)])
        _paste_text(
            img,
            t,
            font,
            None,
            ink,
            tuple(p),
            size,
            turn,
            float(rng.uniform(0.4, 0.95)),
            float(rng.uniform(0, 180)),
        )
    shade = cv2.GaussianBlur(shade, (0, 0), 0.01 * n + 0.5)
    xs = np.linspace(-0.5, 0.5, n, dtype=np.float32)
    g = rng.normal(0, 0.25, 2)
    light = 1 + g[0] * xs[None, :] + g[1] * xs[:, None]
    img = img * (shade * light)[:, :, None]
    if rng.random() < 0.4:
        blob = np.zeros((n, n), np.float32)
        p = centre + rng.normal(0, 0.2 * n, 2)
        cv2.circle(blob, (round(p[0]), round(p[1])), max(1, round(rng.uniform(0.03, 0.1) * n)), 1.0, -1)
        img += 200.0 * float(rng.uniform(0.2, 0.9)) * cv2.GaussianBlur(blob, (0, 0), 0.05 * n)[:, :, None]
    img = np.clip(img, 0, 255).astype(np.uint8)
    sigma = float(rng.choice([0.0, 0.6, 1.0, 1.6, 2.2]))
    if sigma:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    grey = ink_grey(cv2.resize(img, (GLYPH_INPUT, GLYPH_INPUT), interpolation=cv2.INTER_AREA))
    grey = np.clip(
        grey.astype(np.float32) + rng.normal(0, float(rng.uniform(0, 6)), grey.shape), 0, 255
    ).astype(np.uint8)
    q = int(rng.integers(40, 96))
    ok, enc = cv2.imencode(".jpg", grey, [cv2.IMWRITE_JPEG_QUALITY, q])
    return (cv2.imdecode(enc, cv2.IMREAD_GRAYSCALE) if ok else grey), label


def _init(fonts: tuple[Font, ...]) -> None:
    global _FONTS
    _FONTS = fonts
    cv2.setNumThreads(1)


def _one(seed: int) -> tuple[np.ndarray, int]:
    return draw_glyph_crop(seed, _FONTS)


def glyph_samples(
    seed0: int, n: int, fonts: tuple[Font, ...], workers: int = 2
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` crops of seeds ``seed0 .. seed0 + n - 1``: ``(x uint8 (n, S, S), y int16 (n,))``."""
    seeds = range(seed0, seed0 + n)
    if workers > 1:
        with Pool(workers, initializer=_init, initargs=(fonts,)) as pool:
            out = pool.map(_one, seeds, chunksize=256)
    else:
        _init(fonts)
        out = [_one(s) for s in seeds]
    return np.stack([o[0] for o in out]), np.array([o[1] for o in out], np.int16)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--out", type=Path, default=Path("runs/glyphs"))
    p.add_argument("--train", type=int, default=80000)
    p.add_argument("--val", type=int, default=4000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument(
        "--fonts",
        type=Path,
        default=None,
        help="a folder of TrueType fonts drawn beside the built-in sans (default: matplotlib's)",
    )
    a = p.parse_args(argv)
    cv2.setNumThreads(1)
    fonts = training_fonts(a.fonts)
    a.out.mkdir(parents=True, exist_ok=True)
    for name, seed0, n in (("train", 10_000_000, a.train), ("val", 20_000_000, a.val)):
        x, y = glyph_samples(seed0, n, fonts, a.workers)
        np.savez(a.out / f"{name}.npz", x=x, y=y)
        print(f"{name}: {len(y)} crops, {int((y == 0).sum())} none", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
