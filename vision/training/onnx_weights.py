"""The weights of an exported ONNX file, read back into a torch network to train on.

Why: training states live under a run's ``--work`` folder and are gone on a fresh machine,
while the exported models are in the repo; the reader's and the detector's ``--init`` /
``--resume`` start from them through :func:`unfolded_state`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["onnx_initializers", "unfolded_state"]


def onnx_initializers(path: Path) -> dict[str, np.ndarray]:
    """Every initializer of the ONNX file ``path`` by name; ``ValueError`` if it is not one."""
    import onnx
    from onnx import numpy_helper

    try:
        graph = onnx.load(str(path)).graph
    except Exception as exc:  # protobuf's DecodeError and friends: not an ONNX file
        raise ValueError(f"{path}: not a readable ONNX file ({exc})") from None
    return {t.name: numpy_helper.to_array(t) for t in graph.initializer}


def unfolded_state(model: Any, path: Path) -> dict[str, Any]:
    """A state dict for torch ``model`` that computes what its export ``path`` computes (eval mode).

    The export folds each batch norm into the convolution before it (the convolution's weight and
    a ``<conv>.weight_bias``); here the convolution takes the folded weight and the norm becomes
    the identity plus that bias (scale 1, mean 0, variance ``1 - eps``). Every other tensor is
    copied by name. Raises ``ValueError`` naming the first tensor the file lacks or has in another
    shape, so a file of another network is refused rather than half loaded.
    """
    import torch
    from torch import nn

    tensors = onnx_initializers(path)
    norms: dict[str, tuple[str, float]] = {}  # norm -> (the convolution it follows, its eps)
    last_conv: str | None = None
    for name, module in model.named_modules():
        if isinstance(module, nn.Conv2d):
            last_conv = name
        elif isinstance(module, nn.BatchNorm2d) and last_conv is not None:
            norms[name] = (last_conv, module.eps)
    out: dict[str, Any] = {}
    for key, ref in model.state_dict().items():
        layer, _, field = key.rpartition(".")
        if layer in norms:
            conv, eps = norms[layer]
            bias = tensors.get(conv + ".weight_bias")
            if bias is None:
                raise ValueError(f"{path}: no folded bias {conv}.weight_bias for the norm {layer}")
            value = {
                "weight": np.ones(ref.shape, np.float32),
                "bias": bias,
                "running_mean": np.zeros(ref.shape, np.float32),
                "running_var": np.full(ref.shape, 1.0 - eps, np.float32),
            }.get(field)
            out[key] = ref.clone() if value is None else torch.from_numpy(np.array(value, np.float32))
            continue
        if key not in tensors:
            raise ValueError(f"{path}: no tensor {key}")
        out[key] = torch.from_numpy(np.array(tensors[key], np.float32))
        if tuple(out[key].shape) != tuple(ref.shape):
            raise ValueError(f"{path}: {key} is {tuple(out[key].shape)}, wanted {tuple(ref.shape)}")
    return out
