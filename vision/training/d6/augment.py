"""Random training crops of the cached contexts (:mod:`.data`), and the calibration crops.

Training crops are made a batch at a time (:func:`augment_batch`, torch ``grid_sample``): at any
rotation (a die seen from above has no up), unless its dataset is photographed at an angle
(:func:`turn_limits`), with the distortions :class:`Augment` names. Calibration crops
(:func:`jitter_crop`) are cut as the runtime cuts them, with a detector's imprecision in the box.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...faces.pips import CROP_MARGIN, INPUT, contrast_grey, crop_die, standardise
from .data import CTX, CTX_FACTOR, D6_DATASETS, OBLIQUE_GROUP

__all__ = ["Augment", "augment_batch", "jitter_crop", "motion_kernels", "parse_augment", "turn_limits"]


def _gauss_blur(x: Any, sigma: np.ndarray) -> Any:
    """Per-sample Gaussian blur of ``(N, C, H, W)`` (sigma 0: unchanged), one grouped conv per axis."""
    import torch
    import torch.nn.functional as F

    n, c = x.shape[:2]
    rad = max(1, math.ceil(3 * float(sigma.max())))
    t = torch.arange(-rad, rad + 1, dtype=torch.float32)
    s = torch.from_numpy(np.repeat(np.maximum(sigma, 1e-3), c).astype(np.float32))[:, None]
    k = torch.exp(-0.5 * (t[None] / s) ** 2)
    k = k / k.sum(1, keepdim=True)
    y = F.pad(x.reshape(1, n * c, *x.shape[2:]), (rad, rad, rad, rad), mode="reflect")
    y = F.conv2d(y, k[:, None, None, :], groups=n * c)
    y = F.conv2d(y, k[:, None, :, None], groups=n * c)
    return y.reshape(x.shape)


def motion_kernels(lengths: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Line kernels ``(N, K, K)``, each summing to 1: a smear ``lengths`` pixels long at ``angles``.

    Why: a die photographed while it still rocks, or by a webcam with a long exposure, is
    smeared along one direction, not blurred evenly; matteop65's rejected train dice are mostly
    such smears of faces a person reads at once. Isotropic blur
    alone teaches the reader nothing about them. The line is drawn by splatting points every
    tenth of a pixel bilinearly, so a short or slanted smear keeps its length and weight.
    """
    lengths = np.asarray(lengths, np.float64)
    angles = np.asarray(angles, np.float64)
    k = 2 * math.ceil(float(lengths.max(initial=1.0)) / 2) + 3  # odd, with a pixel to spare
    out = np.zeros((len(lengths), k, k), np.float64)
    c = k // 2
    for i, (length, a) in enumerate(zip(lengths, angles, strict=True)):
        t = np.linspace(-length / 2, length / 2, max(2, int(length * 10) + 1))
        x, y = c + t * math.cos(a), c + t * math.sin(a)
        x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
        fx, fy = x - x0, y - y0
        corners = ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy), (1, 1, fx * fy))
        for dx, dy, w in corners:
            np.add.at(out[i], (y0 + dy, x0 + dx), w)
        out[i] /= out[i].sum()
    return out.astype(np.float32)


def _motion_blur(x: Any, kernels: np.ndarray) -> Any:
    """Each sample of ``(N, C, H, W)`` convolved with its own kernel (all channels alike)."""
    import torch
    import torch.nn.functional as F

    n, c = x.shape[:2]
    k = kernels.shape[-1]
    w = torch.from_numpy(np.repeat(kernels, c, axis=0))[:, None]  # (N*C, 1, K, K)
    y = F.pad(x.reshape(1, n * c, *x.shape[2:]), (k // 2,) * 4, mode="reflect")
    return F.conv2d(y, w, groups=n * c).reshape(x.shape)


@dataclass(frozen=True)
class Augment:
    """How hard :func:`augment_batch` distorts: probabilities and ranges, one place to tune."""

    scale: tuple[float, float] = (0.85, 1.3)  #: crop side / (CROP_MARGIN x die side)
    shift: float = 0.15  #: centre error, in die sides
    p_cut: float = 0.12  #: die mostly outside the crop -> class 0
    p_perm: float = 0.3  #: colour channels swapped
    p_mono: float = 0.1  #: colour planes made grey
    p_small: float = 0.25  #: down- and up-sampled
    small: tuple[int, int] = (22, 40)  #: side it is down-sampled to
    p_heavy: float = 0.05  #: blurred beyond reading -> class 0
    p_light: float = 0.3  #: mildly blurred
    p_invert: float = 0.3  #: negative (white-on-red ~ black-on-white)
    p_noise: float = 0.5  #: sensor noise
    #: Smeared along a line (a die still moving, or the camera: see :func:`motion_kernels`),
    #: label kept. Off by default, so a recipe without it draws no random numbers for it.
    p_motion: float = 0.0
    motion: tuple[float, float] = (2.0, 10.0)  #: smear length, input pixels


def parse_augment(items: list[str]) -> Augment:
    """``Augment`` with ``FIELD=VALUE`` overrides (``VALUE`` a number, or ``LO,HI`` for a range).

    Why a parser of its own: a run that changes how hard training distorts must say so on
    its command line and in its model card, and a typo must stop it before an hour of work.
    """
    fields = {f.name: f for f in dataclasses.fields(Augment)}
    changes: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in fields:
            raise ValueError(f"want FIELD=VALUE with FIELD one of {sorted(fields)}, got {item!r}")
        default = getattr(Augment(), name)
        try:
            parts = tuple(float(v) for v in value.split(","))
        except ValueError:
            raise ValueError(f"{item!r}: not a number") from None
        if isinstance(default, tuple):
            if len(parts) != 2 or parts[0] > parts[1]:
                raise ValueError(f"{item!r}: {name} wants LO,HI with LO <= HI")
            if name == "small":
                if not (parts[0] >= 4 and parts[1] <= INPUT):
                    raise ValueError(f"{item!r}: small wants sides in 4..{INPUT}")
                # rng.integers excludes its upper end: keep the range non-empty
                parts = (int(parts[0]), max(int(parts[1]), int(parts[0]) + 1))
            elif parts[0] <= 0:
                raise ValueError(f"{item!r}: {name} must be positive")
            elif name == "motion" and parts[1] > INPUT / 2:
                raise ValueError(f"{item!r}: a smear over {INPUT // 2} px hides any face")
            changes[name] = parts
        else:
            if len(parts) != 1:
                raise ValueError(f"{item!r}: {name} wants one number")
            lo, hi = (0.0, 0.5) if name == "shift" else (0.0, 1.0)
            if not lo <= parts[0] <= hi:
                raise ValueError(f"{item!r}: {name} must lie in [{lo}, {hi}]")
            changes[name] = parts[0]
    return dataclasses.replace(Augment(), **changes)


def augment_batch(
    ctx: np.ndarray,
    labels: np.ndarray,
    rng: np.random.Generator,
    aug: Augment = Augment(),
    *,
    max_turn: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Random training crops of contexts ``ctx``: standardised ``(N, CHANNELS, INPUT, INPUT)``, labels.

    Each crop is what an imprecise detector and a varied camera might give the runtime: any
    rotation, flips, box shift and scale (the detector is imprecise), swapped colour channels and
    white balance, sometimes grey, down-sampled, smeared, blurred, inverted (white-on-red is
    black-on-white inverted), noisy (the fields of ``aug``). A die cut badly or blurred beyond
    reading becomes class 0. ``max_turn`` (radians, one per crop; ``None``: any turn) bounds how
    far each crop is turned: a die photographed at an angle by an upright camera shows its top face
    as the upper face of the picture, which a crop turned upside down would hide (:func:`turn_limits`).

    Vectorised (one ``grid_sample`` for shift/scale/rotation, array ops for colour, grouped
    convolutions for blur), so a batch costs a few array passes instead of a Python loop of small
    OpenCV calls.
    """
    import torch
    import torch.nn.functional as F

    n = len(labels)
    lab = labels.astype(np.int64).copy()
    die_side = CTX / CTX_FACTOR
    side = rng.uniform(*aug.scale, n) * CROP_MARGIN * die_side
    shift = rng.uniform(-aug.shift, aug.shift, (n, 2)) * die_side
    cut = (lab > 0) & (rng.random(n) < aug.p_cut)  # badly cut die -> "not a readable die"
    ang = rng.uniform(0, 2 * math.pi, n)
    rad = die_side * rng.uniform(0.75, 1.0, n)
    shift[cut] = (np.stack([np.cos(ang), np.sin(ang)], 1) * rad[:, None])[cut]
    lab[cut] = 0
    rot = rng.uniform(0, 2 * math.pi, n)
    if max_turn is not None:
        bounded = np.asarray(max_turn, np.float64) < math.pi
        rot = np.where(bounded, rng.uniform(-1.0, 1.0, n) * max_turn, rot)
    x = torch.from_numpy(np.ascontiguousarray(ctx)).permute(0, 3, 1, 2).float()

    def sample(rot: np.ndarray, side: np.ndarray) -> Any:
        sc = side / CTX
        theta = np.zeros((n, 2, 3), np.float32)
        theta[:, 0, 0] = np.cos(rot) * sc
        theta[:, 0, 1] = -np.sin(rot) * sc
        theta[:, 1, 0] = np.sin(rot) * sc
        theta[:, 1, 1] = np.cos(rot) * sc
        theta[:, :, 2] = shift / (CTX / 2)
        grid = F.affine_grid(torch.from_numpy(theta), [n, 3, INPUT, INPUT], align_corners=False)
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)

    bgr = sample(rot, side)
    # Colour: swapped channels sometimes (new die colours), white balance / exposure jitter.
    perm = np.argsort(rng.random((n, 3)), axis=1)
    perm[rng.random(n) >= aug.p_perm] = [0, 1, 2]
    bgr = torch.gather(bgr, 1, torch.from_numpy(perm)[:, :, None, None].expand(-1, -1, INPUT, INPUT))
    gain = torch.from_numpy(rng.uniform(0.75, 1.25, (n, 3, 1, 1)).astype(np.float32))
    bias = torch.from_numpy(rng.uniform(-20, 20, (n, 3, 1, 1)).astype(np.float32))
    bgr = (bgr * gain + bias).clamp(0, 255)
    g = torch.from_numpy(contrast_grey(bgr.permute(0, 2, 3, 1).numpy()))[:, None]
    # Sometimes a grey photo (tomitomi3's kind, or a camera in mono mode): colour must help,
    # never be required.
    mono = torch.from_numpy(rng.random(n) < aug.p_mono)[:, None, None, None]
    luma = (bgr * torch.tensor([0.114, 0.587, 0.299])[None, :, None, None]).sum(1, keepdim=True)
    bgr = torch.where(mono, luma.expand(-1, 3, -1, -1), bgr)
    g = torch.cat([g, bgr], 1)
    flip = torch.from_numpy(rng.random(n) < 0.5)[:, None, None, None]
    g = torch.where(flip, g.flip(-1), g)
    small = rng.integers(*aug.small, n)
    small[rng.random(n) >= aug.p_small] = 0
    for sz in np.unique(small[small > 0]):  # at most 18 sizes
        sel = torch.from_numpy(np.flatnonzero(small == sz))
        lo = F.interpolate(g[sel], size=(int(sz), int(sz)), mode="area")
        g[sel] = F.interpolate(lo, size=(INPUT, INPUT), mode="bilinear", align_corners=False)
    if aug.p_motion > 0:  # only then: a recipe without smears keeps its random stream
        moving = np.flatnonzero(rng.random(n) < aug.p_motion)
        lengths = rng.uniform(*aug.motion, len(moving))
        angles = rng.uniform(0, math.pi, len(moving))
        if len(moving):
            sel = torch.from_numpy(moving)
            g[sel] = _motion_blur(g[sel], motion_kernels(lengths, angles))
    heavy = (lab > 0) & (rng.random(n) < aug.p_heavy)
    light = ~heavy & (rng.random(n) < aug.p_light)
    for mask, lo_s, hi_s in ((heavy, 4.0, 6.0), (light, 0.3, 1.4)):
        if mask.any():
            sel = torch.from_numpy(np.flatnonzero(mask))
            g[sel] = _gauss_blur(g[sel], rng.uniform(lo_s, hi_s, int(mask.sum())))
    lab[heavy] = 0
    inv = torch.from_numpy(rng.random(n) < aug.p_invert)[:, None, None, None]
    g = torch.where(inv, 255.0 - g, g)
    g = g * torch.from_numpy(rng.uniform(0.6, 1.3, (n, 1, 1, 1)).astype(np.float32))
    g = g + torch.from_numpy(rng.uniform(-30, 30, (n, 1, 1, 1)).astype(np.float32))
    noisy = (rng.random(n) < aug.p_noise) * rng.uniform(1, 8, n)
    c = g.shape[1]
    noise = rng.standard_normal((n, c, INPUT, INPUT)).astype(np.float32) * noisy[:, None, None, None]
    g = g + torch.from_numpy(noise.astype(np.float32))
    return standardise(g.numpy()), lab


def jitter_crop(
    ctx: np.ndarray,
    rng: np.random.Generator,
    *,
    max_turn: float = 180.0,
) -> np.ndarray:
    """A BGR crop of a context as an imprecise detector would frame it (geometry only).

    Calibration uses these next to the exact labelled crops, so the thresholds hold for
    detector boxes, not just for perfect ones. ``max_turn`` (degrees) bounds the turn as
    training bounded it for the crop's dataset (:func:`turn_limits`).
    """
    die_side = CTX / CTX_FACTOR
    side = die_side * rng.uniform(0.9, 1.2) * CROP_MARGIN
    c = (CTX / 2 + rng.uniform(-0.1, 0.1) * die_side, CTX / 2 + rng.uniform(-0.1, 0.1) * die_side)
    angle = float(rng.uniform(0, 360)) if max_turn >= 180.0 else float(rng.uniform(-max_turn, max_turn))
    die = side / CROP_MARGIN  # the box whose crop_die square is `side` across
    box = (c[0] - die / 2, c[1] - die / 2, die, die)
    return crop_die(ctx, box, angle=angle)


def turn_limits(ds: np.ndarray, oblique: dict[str, float] | None) -> np.ndarray:
    """The largest turn (degrees) for crops of dataset indices ``ds``: 180 (any) unless oblique.

    Why: seen from above a die has no up, so training turns its crops every way. Seen at an
    angle (``epanemu-dice3``'s phone shots, ``matteop65-d6-wood``'s webcam) it shows its top
    face *and* a side face, and the label is the top one: the face in the upper part of the
    picture, because cameras are held upright. A crop turned upside down makes that a coin toss.
    """
    limits = np.full(len(ds), 180.0)
    for name, deg in (oblique or {}).items():
        limits[ds == D6_DATASETS.index(name)] = deg
    if oblique:  # rendered oblique dice have an up too: the most careful of the datasets' turns
        limits[ds == OBLIQUE_GROUP] = min(oblique.values())
    return limits
