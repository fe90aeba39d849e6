"""The face reader's networks: their shapes, and their states to and from ONNX files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...faces.pips import CHANNELS, INPUT, looked_twice, to_blob
from ..onnx_weights import unfolded_state

__all__ = ["ARCHS", "export", "load_state", "make_model", "state_from_onnx", "torch_logits", "widen_state"]

#: The reader networks :func:`make_model` builds (the shipped reader is ``v3s``).
ARCHS = ("v3", "v3s", "v3ss", "v3sl", "v3sw")


def make_model(arch: str = "v3s") -> Any:
    """The reader CNN: two strided stages, then two widening stages, each pooled (or strided).

    Why this shape: the reader's share of a 25-dice photo must stay near 10 ms on one core and
    cv2.dnn time follows the multiply-adds, so the first two stages stride (24 x 24, then 12 x 12)
    and the width is spent at 12 x 12 / 6 x 6. It reads colour (contrast grey + B, G, R,
    :func:`~dicetower.vision.faces.pips.to_blob`): red pips on dark dice are lost by every single grey
    projection. ``v3`` is the wide form (24-48-64-128); ``v3s`` narrows it where its time goes
    (20-40-48-96: 9.7 against 14.1 ms for 25 crops in cv2.dnn on one core, bench/reader_net.py).
    ``v3ss`` and ``v3sl`` fold v3s's max-pools into the convolution before them as a stride (both
    pools, or the last one): a strided convolution computes only the kept positions, 0.64x (v3ss)
    and 0.74-0.78x (v3sl) v3s's time. The pools' slots hold an Identity, so the layers keep v3s's
    indices and shapes and a v3s state dict loads as their starting point (``--init``). ``v3sw``
    spends part of v3ss's saving on width where it is cheap, the two last stages (64, 128):
    0.72-0.74x v3s's time; it starts from a v3ss state widened without changing its answers
    (:func:`widen_state`).
    """
    import torch.nn as nn

    if arch not in ARCHS:
        raise ValueError(f"unknown reader architecture {arch!r} (known: {ARCHS})")

    def blk(i: int, o: int, s: int = 1) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(i, o, 3, stride=s, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU()
        )

    widths = {"v3": (24, 48, 64, 128), "v3sw": (20, 40, 64, 128)}
    w1, w2, w3, w4 = widths.get(arch, (20, 40, 48, 96))
    s3, s4 = {"v3ss": (2, 2), "v3sl": (1, 2), "v3sw": (2, 2)}.get(arch, (1, 1))
    return nn.Sequential(
        blk(CHANNELS, w1, 2),
        blk(w1, w2, 2),
        blk(w2, w3, s3),
        nn.MaxPool2d(2) if s3 == 1 else nn.Identity(),
        blk(w3, w4, s4),
        nn.MaxPool2d(2) if s4 == 1 else nn.Identity(),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(w4 * 9, 7),
    )


def widen_state(small: dict[str, Any], wide: dict[str, Any]) -> dict[str, Any]:
    """``small``'s weights placed in a wider network of the same layers, its answers unchanged.

    Net2WiderNet (Chen et al. 2016) without the noise: each tensor of ``wide`` (a fresh
    network's state, so the new channels keep their random start) takes ``small``'s values in
    its leading slice, and every weight *reading* a new channel starts at zero, so the new
    channels compute but feed nothing until training finds a use for them. The classifier reads
    the flattened last stage channel by channel (``channel * cells + cell``), so its new
    columns are those of the new channels at every cell. Equal shapes copy straight through.
    """
    out = {}
    for key, w in wide.items():
        s = small[key]
        if s.shape == w.shape:
            out[key] = s.clone()
            continue
        if s.dim() != w.dim() or any(a > b for a, b in zip(s.shape, w.shape, strict=True)):
            raise ValueError(f"{key}: cannot widen {tuple(s.shape)} to {tuple(w.shape)}")
        t = w.clone()
        if s.dim() == 2 and s.shape[0] == w.shape[0]:  # the classifier over flattened cells
            cells = s.shape[1] // small[_first_conv_before(small, key)].shape[0]
            t = t.reshape(w.shape[0], -1, cells)
            t.zero_()
            t[:, : s.shape[1] // cells] = s.reshape(s.shape[0], -1, cells)
            out[key] = t.reshape(w.shape)
            continue
        if s.dim() >= 2:
            t[:, s.shape[1] :] = 0.0  # weights reading channels the small net lacks
        t[tuple(slice(0, n) for n in s.shape)] = s
        out[key] = t
    return out


def _first_conv_before(state: dict[str, Any], key: str) -> str:
    """Key of the last convolution weight listed before ``key`` (whose channels ``key`` reads)."""
    keys = list(state)
    convs = [k for k in keys[: keys.index(key)] if k.endswith(".weight") and state[k].dim() == 4]
    return convs[-1]


def export(model: Any, path: Path) -> None:
    """Write ``model`` as the ONNX file the runtime loads (dynamo exporter, opset 18, any batch size)."""
    import torch

    x = torch.zeros(4, CHANNELS, INPUT, INPUT)
    torch.onnx.export(
        model,
        (x,),
        str(path),
        dynamo=True,
        opset_version=18,
        input_names=["x"],
        dynamic_shapes=({0: torch.export.Dim("n", min=1, max=256)},),
        external_data=False,
    )


def state_from_onnx(path: Path, arch: str) -> dict[str, Any]:
    """A torch state dict of ``arch`` that computes what the exported reader ``path`` computes.

    So ``--init`` / ``--calibrate-only`` / ``--teacher`` can start from the shipped file itself
    (:func:`~dicetower.vision.training.onnx_weights.unfolded_state`). Raises ``ValueError`` when
    the file's tensors do not fit ``arch``.
    """
    try:
        return unfolded_state(make_model(arch), path)
    except ValueError as exc:
        raise ValueError(f"{exc} (as a {arch} reader)") from None


def load_state(path: Path, arch: str) -> dict[str, Any]:
    """A state dict from a torch ``.pt`` file or an exported ``.onnx`` reader (:func:`state_from_onnx`)."""
    import torch

    if path.suffix == ".onnx":
        return state_from_onnx(path, arch)
    return torch.load(path, weights_only=True)


def torch_logits(model: Any, crops: np.ndarray, gate: float = 0.0) -> np.ndarray:
    """Logits of ``crops`` as the runtime computes them: the same blob, the same second look.

    ``gate`` is the card's ``second_look_below`` (:func:`~dicetower.vision.faces.pips.looked_twice`);
    0, the default, gives every crop one look.
    """
    import torch

    def forward(blob: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model(torch.from_numpy(np.ascontiguousarray(blob))).numpy()

    out = [looked_twice(forward, to_blob(list(crops[i : i + 512])), gate) for i in range(0, len(crops), 512)]
    return np.concatenate(out) if out else np.zeros((0, 7), np.float32)
