"""Render trays of mixed dice: pip d6, numeral d6, d10 (0-9), percentile d10 (00-90) and d20.

Why: the real photos here hold no d10 or percentile d10 with its face labelled and no d20 photo
of faces 4, 6, 16 and 19 (``../shared/datasets/README.md``), yet the tower must read them and the
simulated camera must draw them. This module lays out trays of dice drawn as lit solids by
:mod:`.die3d`, with the same tray, light, shadow, placement and noise as :mod:`.render`'s d6
scenes. The face a die is labelled with is the one most squarely toward the camera; its
neighbours show around it, foreshortened, their numerals turned their own ways.

Varied from the seed: fonts (OpenCV's built-in sans at several weights, plus any TrueType
files in :attr:`NumeralStyle.fonts`), ink and body colours, solid / speckled / marbled /
translucent bodies, gloss, rounded edges, any rotation, the face tilted from the lens up to
:attr:`NumeralStyle.tilt` degrees (a fixed camera sees dice near the tray's edge at an angle),
a slight perspective of the whole tray, touching pairs and cocked dice (leaning halfway to a
neighbouring face: no face squarely up). Labels use the manifest's kinds (``d6`` for both d6
styles, ``d10``, ``d10t`` with faces 0, 10, ..., 90, ``d20``).

Deterministic from ``seed`` (numpy's generator; OpenCV's drawing is deterministic) and the
fonts given. Never evidence of accuracy on real dice: real photos are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np

from ..kinds import DRAWN_KINDS, KINDS, label_of
from ..manifest import LabelledDie
from .die3d import BUILTIN_FONTS, DieLook, Font, render_solid
from .render import (
    MARBLED_COLOURS,
    SS,
    TRAY_COLOURS,
    SynthError,
    homography,
    light_field,
    paste_die,
    place_dice,
    to_uint8,
    tray_background,
)
from .tray import TowerTray

__all__ = [
    "MATERIALS",
    "NUMERAL_COLOURS",
    "NumeralStyle",
    "TopFace",
    "TrayDie",
    "random_look",
    "render_crop",
    "render_crop_top",
    "render_tray",
    "render_tray_tops",
]

MATERIALS: tuple[str, ...] = ("solid", "speckled", "marbled", "translucent")

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
#: Speckle colours: dark, white and gold flecks.
_FLECKS = ((20, 20, 20), (235, 235, 235), (60, 180, 220))

#: Largest number of dice in one tray (bounds the work).
MAX_DICE = 40


@dataclass(frozen=True)
class TrayDie:
    """One die to draw: a drawn ``kind`` (:mod:`~dicetower.vision.kinds`), its printed ``face``, a
    :data:`NUMERAL_COLOURS` name.

    A physical die looks the same on every throw: ``look`` (colours, font, finish), ``values``
    (which face bears which value, :func:`~.solids.face_values`) and ``side`` (its outline in
    px at 640 px, one camera height) fix it; each is drawn from the seed when not given.
    """

    kind: str
    face: int
    colour: str | None = None  #: None: drawn from the seed
    material: str | None = None  #: one of :data:`MATERIALS`, None: drawn from the seed
    cocked: bool = False
    look: DieLook | None = None
    values: tuple[int, ...] | None = None
    side: float | None = None


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
    tilt: float = 25.0  #: largest angle between the read face and the line to the lens, degrees
    marbled: float = 0.15  #: share of bodies drawn marbled, when a die's material is not given
    translucent: float = 0.2  #: share of bodies drawn translucent, likewise
    speckled: float = 0.25  #: share of bodies drawn speckled, likewise
    fonts: tuple[Font, ...] = BUILTIN_FONTS  #: numeral fonts drawn from
    tower: TowerTray | None = None  #: the tower's own tray (:class:`.render.SceneStyle`'s ``tower``)


def _check(kind: str, face: int) -> None:
    if kind not in DRAWN_KINDS:
        raise SynthError(f"kind must be one of {', '.join(DRAWN_KINDS)}, got {kind!r}")
    if face not in KINDS[kind].faces:
        raise SynthError(f"a {kind} has no face {face}")


def random_look(
    rng: np.random.Generator,
    colour: str | None = None,
    material: str | None = None,
    style: NumeralStyle | None = None,
) -> DieLook:
    """A die's look drawn from ``rng``: a :data:`NUMERAL_COLOURS` body (``colour``, or any), its ink."""
    style = style or NumeralStyle()
    name = colour or str(rng.choice(list(NUMERAL_COLOURS)))
    if name not in NUMERAL_COLOURS:
        raise SynthError(f"colour must be one of {', '.join(NUMERAL_COLOURS)}, got {name!r}")
    body, inks = NUMERAL_COLOURS[name]
    if material is None:
        u = float(rng.random())
        shares = (style.marbled, style.translucent, style.speckled)
        material = (
            "marbled"
            if u < shares[0]
            else "translucent"
            if u < sum(shares[:2])
            else ("speckled" if u < sum(shares) else "solid")
        )
    if material not in MATERIALS:
        raise SynthError(f"material must be one of {', '.join(MATERIALS)}, got {material!r}")
    ink = inks[int(rng.integers(len(inks)))]
    second: tuple[int, int, int] | None = None
    if material == "marbled":
        swirl = MARBLED_COLOURS[str(rng.choice(list(MARBLED_COLOURS)))][2]
        second = tuple(int(0.5 * a + 0.5 * b) for a, b in zip(swirl, body, strict=True))  # type: ignore[assignment]
    elif material == "speckled":
        second = _FLECKS[int(rng.integers(len(_FLECKS)))]
    # a body varies a little from die to die of one colour name
    jitter = rng.uniform(0.88, 1.08, 3)
    body = tuple(int(min(255, v * j)) for v, j in zip(body, jitter, strict=True))  # type: ignore[assignment]
    if not style.fonts:
        raise SynthError("NumeralStyle.fonts must name at least one font")
    return DieLook(
        body=body,
        ink=ink,
        material=material,
        second=second,
        font=style.fonts[int(rng.integers(len(style.fonts)))],
        mark="bar" if rng.random() < 0.7 else "dot",
        mark_all=bool(rng.random() < 0.2),
        gloss=float(rng.uniform(0.0, 0.6)),
        bevel=float(rng.uniform(0.03, 0.08)),
        opacity=float(rng.uniform(0.55, 0.85)),
    )


def _outline(mask: np.ndarray, centre: tuple[float, float], angle: float) -> np.ndarray:
    """The die's silhouette hull in canvas px, placed as :func:`.render.paste_die` places the patch.

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


def _as_spec(d: TrayDie | tuple) -> TrayDie:
    return d if isinstance(d, TrayDie) else TrayDie(*d)


@dataclass(frozen=True)
class TopFace:
    """Where a drawn die's top numeral lies, for training readers that turn numerals upright.

    Why not in the label: a manifest records what a photo shows (kind, face, box); the turn of
    the numeral is known only for renders.
    """

    centre: tuple[float, float]  #: the numeral's centre, frame px
    upright: float  #: the counter-clockwise turn (degrees) that stands it upright


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
    frame, ref, labels, _tops = render_tray_tops(seed, dice, size, style=style, touching=touching)
    return frame, ref, labels


def render_tray_tops(
    seed: int,
    dice: Sequence[TrayDie | tuple],
    size: tuple[int, int] = (640, 640),
    *,
    style: NumeralStyle | None = None,
    touching: bool = False,
) -> tuple[np.ndarray, np.ndarray, list[LabelledDie], list[TopFace]]:
    """:func:`render_tray`, and each die's :class:`TopFace` (the same picture for the same seed)."""
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
    tray = style.tray or TRAY_COLOURS[int(rng.integers(len(TRAY_COLOURS)))]
    light, towards = light_field(
        rng, W, H, style.light if style.light is not None else float(rng.uniform(0, 0.5))
    )
    tower = style.tower
    if tower is not None:
        light = tower.light(W, H)
    lo, hi = style.die_size
    sides = [(float(rng.uniform(lo, hi)) if s.side is None else s.side) * unit for s in specs]
    centres = place_dice(rng, sides, W, H, touching and len(specs) >= 2, tower)
    background = tower.draw(W, H) if tower is not None else tray_background(rng, W, H, tray, style.grain)
    reference = background.copy()
    canvas = background.copy()
    shade = np.ones((H, W), np.float32)
    polys = []
    tops: list[tuple[tuple[float, float], float]] = []
    # the light stands opposite the shadows: camera axes, y up
    light_dir = np.array([-towards[0], towards[1], 1.2]) if tower is None else tower.light_direction(towards)
    for spec, s, c in zip(specs, sides, centres, strict=True):
        look = spec.look if spec.look is not None else random_look(rng, spec.colour, spec.material, style)
        if tower is not None:  # the diffuser spreads the ring's highlight broad and faint
            look = replace(look, gloss=look.gloss * tower.highlight)
        side = max(8, round(s))
        values = None if spec.values is None else np.asarray(spec.values, np.int64)
        drawn = render_solid(
            spec.kind,
            spec.face,
            side,
            look,
            rng,
            tilt=style.tilt,
            cocked=spec.cocked,
            light=light_dir,
            values=values,
        )
        patch, mask = drawn.patch, drawn.mask
        ph, pw = mask.shape
        tops.append(((c[0] + drawn.face_at[0] - pw / 2, c[1] + drawn.face_at[1] - ph / 2), drawn.upright))
        angle = 0.0  # the pose already turns the die every way
        shadow = (towards[0] * s * 0.12, towards[1] * s * 0.12) if style.shadows else None
        if tower is not None and style.shadows:
            shadow = tower.shadow(W, H, c[0], c[1], s)
        paste_die(canvas, shade, patch, mask, c, angle, shadow)
        polys.append(_outline(mask, c, angle))
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
    sigma = style.blur if style.blur is not None else float(rng.choice([0.0, 0.0, 0.5, 1.0]))
    if sigma > 0:
        frame = cv2.GaussianBlur(frame, (0, 0), sigma)
        ref = cv2.GaussianBlur(ref, (0, 0), sigma)
    noise = style.noise if style.noise is not None else float(rng.uniform(1.0, 5.0))
    if noise > 0:
        frame = frame + noise * rng.standard_normal(frame.shape, dtype=np.float32)
        ref = ref + noise * rng.standard_normal(ref.shape, dtype=np.float32)
    labels, top_faces = [], []
    for (at, upright), poly, spec in zip(tops, polys, specs, strict=True):
        at_px = np.float32([[at]])
        if hom is not None:
            at_px = cv2.perspectiveTransform(at_px, hom)  # a turn this slight keeps ``upright``
        top_faces.append(TopFace((float(at_px[0, 0, 0]) / SS, float(at_px[0, 0, 1]) / SS), upright))
        pts = poly.astype(np.float32).reshape(-1, 1, 2)
        if hom is not None:
            pts = cv2.perspectiveTransform(pts, hom)
        pts = pts.reshape(-1, 2) / SS
        x0, y0 = np.clip(pts.min(axis=0), 0, [w, h])
        x1, y1 = np.clip(pts.max(axis=0), 0, [w, h])
        box = (round(float(x0), 1), round(float(y0), 1), round(float(x1 - x0), 1), round(float(y1 - y0), 1))
        labels.append(LabelledDie(label_of(spec.kind), spec.face, box, cocked=spec.cocked))
    return to_uint8(frame), to_uint8(ref), labels, top_faces


def render_crop(
    seed: int, kind: str, face: int, *, colour: str | None = None, neighbour: bool | None = None
) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """One die on a small tray, maybe with a neighbour touching it: ``(frame, box of the die)``.

    Why: training and the tests read one die at a time, cut from its box the way the runtime
    reader cuts it; a 192 px tray renders ~20x faster than a 640 px one.
    """
    frame, box, _top = render_crop_top(seed, kind, face, colour=colour, neighbour=neighbour)
    return frame, box


def render_crop_top(
    seed: int, kind: str, face: int, *, colour: str | None = None, neighbour: bool | None = None
) -> tuple[np.ndarray, tuple[float, float, float, float], TopFace]:
    """:func:`render_crop`, and where the die's top numeral lies and which turn stands it upright."""
    rng = np.random.default_rng(seed)
    dice: list[TrayDie] = [TrayDie(kind, face, colour)]
    with_neighbour = bool(rng.random() < 0.3) if neighbour is None else neighbour
    if with_neighbour:
        k = str(rng.choice(DRAWN_KINDS))
        dice.append(TrayDie(k, int(rng.choice(KINDS[k].faces))))
    style = NumeralStyle(die_size=(130.0, 200.0), perspective=0.0)
    scene = int(rng.integers(2**31))
    try:
        frame, _ref, labels, tops = render_tray_tops(
            scene, dice, (240, 240), style=style, touching=with_neighbour
        )
    except SynthError:  # no room for the neighbour at these sizes: the die alone
        frame, _ref, labels, tops = render_tray_tops(scene, dice[:1], (240, 240), style=style)
    box = labels[0].box
    assert box is not None
    return frame, box, tops[0]
