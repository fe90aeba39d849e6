"""Train a taught die's fitted face reader (:mod:`.fitted`) with torch, and write it as ONNX.

Why these choices:

- **Small.** Four 3 x 3 convolutions (16, 24, 48, 64 channels, the first at stride 2), an average
  over the last map and one linear layer: about 44,000 weights (under 200 KB), a
  :data:`~.fitted.FITTED_INPUT`-pixel crop read in well under a millisecond on one core. A die
  has a few hundred named crops; a larger network only learns them by heart.
- **Varied as it trains.** Each crop is drawn anew at every step: turned any way (a die lands at
  any turn), scaled and shifted a little (the locator's box wanders), its light bent (a gamma, a
  colour cast, a gradient across the die), blurred now and then and given sensor noise. The crops
  are kept :data:`PAD` times wider than the die, so a turned crop has no empty corners.
- **Bounded.** :data:`STEPS_PER_CROP` steps of :data:`BATCH` per crop (about 190 passes over each
  crop, each drawn anew), at least :data:`MIN_STEPS` and at most :data:`MAX_STEPS`, and
  :data:`TIME_CAP_S` seconds whatever the steps (a slow machine stops early and the card says so).
  Fewer steps left the network unsure: on byler-d6's held-back dice, 600 steps were sure (0.95)
  of 37 of 223, 1,500 steps of 88, none wrong either way.
- **The same model from the same folder.** Seeded, on one thread, with torch's deterministic
  algorithms; the crops are drawn from a seeded generator. A fit stopped by the time cap is the
  one exception, and says so.

torch is an optional extra (``pip install 'dicetower[teach-net]'``): :func:`missing` says why a
fit cannot train one, and the fit then keeps the head alone. Reading never needs torch: the
network is exported to ONNX (``torch.onnx.export(..., dynamo=True)``, opset 18), checked to read
the same through ``cv2.dnn``, and read with it.
"""

from __future__ import annotations

import contextlib
import io
import logging
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..dnn import load_onnx
from ..faces.pips import crop_transform
from .features import TaughtModelError
from .fitted import FITTED_INPUT, fitted_blob

__all__ = [
    "BATCH",
    "MAX_STEPS",
    "MIN_STEPS",
    "PAD",
    "STEPS_PER_CROP",
    "TIME_CAP_S",
    "Trained",
    "augment",
    "missing",
    "padded_crop",
    "train_reader",
]

#: The stored crop is this many times the die's crop side, so a turned crop keeps its corners.
PAD = 1.5
#: Optimiser steps per fitted crop.
STEPS_PER_CROP = 3
#: Fewest and most optimiser steps of one die's training.
MIN_STEPS = 200
MAX_STEPS = 1200
#: Crops per step.
BATCH = 64
#: Seconds one die's training may take; a slower machine stops there (and the card says so).
TIME_CAP_S = 300.0
#: Adam's step size at its peak (a one-cycle schedule), and the weight decay.
LEARNING_RATE = 3e-3
WEIGHT_DECAY = 1e-4
#: The stored crop's side, in pixels.
STORED = round(FITTED_INPUT * PAD)


def missing() -> str | None:
    """Why a fitted reader cannot be trained here (a package missing), or None when it can."""
    for name in ("torch", "onnxscript"):
        try:
            __import__(name)
        except ImportError:
            return f"{name} is not installed (pip install 'dicetower[teach-net]')"
    return None


def padded_crop(frame: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray:
    """The die at ``box`` as :func:`~.fitted.fitted_crops` cuts it, :data:`PAD` times wider around it.

    Its middle :data:`~.fitted.FITTED_INPUT` pixels are the reading crop at turn 0.
    """
    m = crop_transform(box, FITTED_INPUT, 0.0)
    m[:, 2] += (STORED - FITTED_INPUT) / 2.0
    return cv2.warpAffine(frame, m, (STORED, STORED), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


def augment(crops: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Reading crops (``(N, FITTED_INPUT, FITTED_INPUT, 3)`` uint8) drawn from padded ``crops``.

    Turned anywhere, scaled by 0.9-1.12, shifted up to 2.5 px; light bent by a gamma of 0.7-1.4,
    a colour cast of up to 10 % a channel and a gradient of up to 25 % across the die; blurred
    (sigma 0.3-1.5) a third of the time; sensor noise up to 6 levels.
    """
    n = len(crops)
    out = np.empty((n, FITTED_INPUT, FITTED_INPUT, 3), np.uint8)
    centre = STORED / 2.0
    yy, xx = np.mgrid[0:FITTED_INPUT, 0:FITTED_INPUT].astype(np.float32) / FITTED_INPUT - 0.5
    for i in range(n):
        angle = float(rng.uniform(0.0, 360.0))
        scale = float(rng.uniform(0.9, 1.12))
        m = cv2.getRotationMatrix2D((centre, centre), angle, scale)
        m[:, 2] += FITTED_INPUT / 2.0 - centre + rng.uniform(-2.5, 2.5, 2)
        crop = cv2.warpAffine(
            crops[i], m, (FITTED_INPUT, FITTED_INPUT), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        ).astype(np.float32)
        if rng.random() < 1 / 3:
            crop = cv2.GaussianBlur(crop, (0, 0), float(rng.uniform(0.3, 1.5)))
        crop = 255.0 * (crop / 255.0) ** float(rng.uniform(0.7, 1.4))
        crop *= rng.uniform(0.9, 1.1, 3).astype(np.float32)
        gx, gy = rng.uniform(-0.25, 0.25, 2)
        crop *= (1.0 + gx * xx + gy * yy)[..., None]
        crop += rng.normal(0.0, float(rng.uniform(0.0, 6.0)), crop.shape).astype(np.float32)
        out[i] = np.clip(crop, 0, 255).astype(np.uint8)
    return out


def _network(classes: int) -> Any:
    import torch.nn as nn

    def block(i: int, o: int, stride: int = 1) -> list[Any]:
        return [nn.Conv2d(i, o, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]

    return nn.Sequential(
        *block(3, 16, 2),
        *block(16, 24),
        nn.MaxPool2d(2),
        *block(24, 48),
        nn.MaxPool2d(2),
        *block(48, 64),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Dropout(0.1),
        nn.Linear(64, classes),
    )


@dataclass
class Trained:
    """One die's fitted reader: the ONNX file's bytes, and what its training took."""

    onnx: bytes
    crops: int
    steps: int
    seconds: float
    capped: bool  #: stopped by :data:`TIME_CAP_S` before its steps were done

    def to_json(self) -> dict[str, Any]:
        return {
            "crops": self.crops,
            "steps": self.steps,
            "seconds": round(self.seconds, 1),
            "stopped_by_time_cap": self.capped,
        }


@contextlib.contextmanager
def _one_thread(seed: int) -> Any:
    """torch on one thread, seeded, deterministic; the previous settings restored after."""
    import torch

    threads = torch.get_num_threads()
    deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)
    try:
        yield torch
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)


def _export(net: Any, classes: int) -> bytes:
    """``net`` as ONNX (opset 18, any batch), checked to read the same through ``cv2.dnn``."""
    import torch

    probe = torch.from_numpy(fitted_blob(np.full((2, FITTED_INPUT, FITTED_INPUT, 3), 128, np.uint8)))
    probe = probe + torch.linspace(-1.0, 1.0, probe.numel()).reshape(probe.shape)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fitted.onnx"
        # the exporter reports its progress on stdout and warns of its own deprecations
        quiet = logging.getLogger("torch.onnx")
        level = quiet.level
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            quiet.setLevel(logging.ERROR)
            program = torch.onnx.export(
                net,
                (probe,),
                dynamo=True,
                opset_version=18,
                input_names=["crop"],
                output_names=["logits"],
                dynamic_shapes=({0: torch.export.Dim("batch", max=4096)},),
                verbose=False,
            )
            program.save(str(path))
            quiet.setLevel(level)
        data = path.read_bytes()
    with torch.no_grad():
        expected = net(probe).numpy()
    got = load_onnx(data)
    got.setInput(probe.numpy())
    out = np.asarray(got.forward(), np.float32).reshape(len(expected), classes)
    if not np.allclose(out, expected, atol=1e-3):
        raise TaughtModelError("the fitted reader reads differently through cv2.dnn than it was trained")
    return data


def background_boxes(
    frame_shape: tuple[int, ...],
    dice: list[tuple[float, float, float, float]],
    side: float,
    rng: np.random.Generator,
    count: int = 1,
) -> list[tuple[float, float, float, float]]:
    """Up to ``count`` squares of ``side`` inside the frame whose crops hold no die of ``dice``
    (each centre more than a die's reach from every die's centre): *not a die* examples."""
    h, w = frame_shape[:2]
    out: list[tuple[float, float, float, float]] = []
    if w <= side or h <= side:
        return out
    centres = [(x + bw / 2.0, y + bh / 2.0, max(bw, bh)) for x, y, bw, bh in dice]
    for _try in range(20 * count):
        x, y = float(rng.uniform(0, w - side)), float(rng.uniform(0, h - side))
        cx, cy = x + side / 2.0, y + side / 2.0
        if all(np.hypot(cx - dx, cy - dy) > 0.9 * (side + ds) for dx, dy, ds in centres):
            out.append((x, y, side, side))
            if len(out) == count:
                break
    return out


def train_reader(
    crops: np.ndarray,
    labels: np.ndarray,
    classes: int,
    *,
    seed: int = 0,
    log: Callable[[str], None] = lambda _msg: None,
    time_cap: float = TIME_CAP_S,
) -> Trained:
    """A fitted reader over ``classes`` rows from padded crops ``(N, STORED, STORED, 3)`` and their
    class indices ``labels`` (``(N,)``, each in ``range(classes)``; the die's faces, then *not a die*)."""
    if len(crops) == 0 or len(crops) != len(labels):
        raise ValueError(f"crops and labels must be alike and not empty, got {len(crops)} and {len(labels)}")
    t0 = time.perf_counter()
    steps = int(np.clip(STEPS_PER_CROP * len(crops), MIN_STEPS, MAX_STEPS))
    rng = np.random.default_rng(seed)
    with _one_thread(seed) as torch:
        net = _network(classes)
        optimiser = torch.optim.AdamW(net.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, LEARNING_RATE, total_steps=steps)
        loss_of = torch.nn.CrossEntropyLoss()
        y_all = torch.from_numpy(np.asarray(labels, np.int64))
        net.train()
        done = 0
        capped = False
        for done in range(1, steps + 1):
            pick = rng.integers(0, len(crops), BATCH)
            x = torch.from_numpy(fitted_blob(augment(crops[pick], rng)))
            optimiser.zero_grad()
            loss = loss_of(net(x), y_all[pick])
            loss.backward()
            optimiser.step()
            schedule.step()
            if done % 100 == 0:
                log(f"  step {done} of {steps}: loss {float(loss.detach()):.3f}")
            if time.perf_counter() - t0 > time_cap:
                capped = done < steps
                break
        net.eval()
        data = _export(net, classes)
    return Trained(data, len(crops), done, time.perf_counter() - t0, capped)
