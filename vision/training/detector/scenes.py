"""Rendered detector scenes: mixed dice drawn as solids over real backgrounds, with whole-die boxes.

Why: the detector learned dice from pip-d6 photos alone and splits a d20 or d10 into
face-sized pieces (each triangle looks like a small d6). Real d20 and d10 photos
(``rsandrini-d20``, ``lurig-kinds``) show one die each; these scenes add what they lack:
several dice of every kind (pip and numeral d6, d10, d10t, d20) in one frame, touching pairs,
any size from 18 to 120 px, over the datasets' own surfaces (:mod:`.backgrounds`).
"""

from __future__ import annotations

import math

import numpy as np

from ...kinds import DRAWN_KINDS, KINDS
from ...synth.die3d import Font
from ...synth.numerals import NumeralStyle
from ..backgrounds import BackgroundBank
from ..numerals.scenes import background, camera_look, drawn_die, place_die

__all__ = ["render_scene"]


def render_scene(
    seed: int, bank: BackgroundBank | None, fonts: tuple[Font, ...], size: int = 448
) -> tuple[np.ndarray, np.ndarray]:
    """A ``size``-px BGR frame of 1-8 dice and their boxes ``(n, 4)`` x, y, w, h."""
    rng = np.random.default_rng(seed)
    canvas = background(rng, size, bank)
    light = np.array([rng.uniform(-0.7, 0.7), rng.uniform(-0.7, 0.7), 1.0])
    shadow_dir = -light[:2] / (np.linalg.norm(light[:2]) + 1e-6) * np.array([1.0, -1.0])
    darkness = float(rng.uniform(0.2, 0.6))
    style = NumeralStyle(fonts=fonts, tilt=float(rng.choice([10.0, 25.0, 45.0])))
    typical = math.exp(rng.uniform(math.log(18), math.log(120)))
    n = int(rng.integers(1, 9))
    placed: list[tuple[float, float, float]] = []
    boxes = []
    for _ in range(n):
        px = typical * float(rng.uniform(0.8, 1.25))
        for _try in range(30):
            if placed and rng.random() < 0.3:  # touching the last die
                cx0, cy0, p0 = placed[-1]
                a = rng.uniform(0, 2 * math.pi)
                d = (p0 + px) / 2 * float(rng.uniform(0.9, 1.05))
                c = (cx0 + d * math.cos(a), cy0 + d * math.sin(a))
            else:
                lo, hi = 0.5 * px, size - 0.5 * px
                c = (float(rng.uniform(lo, hi)), float(rng.uniform(lo, hi)))
            if all(math.hypot(c[0] - x, c[1] - y) >= 0.85 * (px + p) / 2 for x, y, p in placed):
                break
        else:
            continue
        kind = str(rng.choice(DRAWN_KINDS))
        cocked = kind != "d6" and rng.random() < 0.05
        _d, patch, mask = drawn_die(rng, kind, int(rng.choice(KINDS[kind].faces)), px, style, cocked, light)
        boxes.append(place_die(canvas, patch, mask, c, tuple(shadow_dir * 0.1 * px), darkness))
        placed.append((c[0], c[1], px))
    frame = camera_look(canvas, rng, typical)
    return frame, np.array(boxes, np.float32).reshape(-1, 4)
