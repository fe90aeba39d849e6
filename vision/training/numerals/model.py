"""The numeral reader's network (torch, training only) and its ONNX export.

Why this shape: a crop of 96 px holds a d20's top numeral in about 20 px (at 64 px a 6's
underline or a 1's foot was a pixel or two). A 5 x 5 stride-2 and a 3 x 3 stride-2
convolution bring it to 24 x 24 cheaply, then two conv + pool stages reach 6 x 6; the last
layer sees that grid whole (not a global pool) because *where* a numeral sits tells the face
on top from its neighbours. About 0.6 M weights (2.4 MB), ~1.7 ms a crop through ``cv2.dnn``
on one core here (``bench/numerals.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...faces.numerals import INPUT, class_names

__all__ = ["conv_block", "export", "make_model"]


def conv_block(cin: int, cout: int, k: int = 3, stride: int = 1) -> list[Any]:
    """Convolution (same padding, no bias), batch norm, ReLU: the unit both grey networks stack."""
    from torch import nn

    return [
        nn.Conv2d(cin, cout, k, stride, k // 2, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    ]


def make_model(classes: int | None = None) -> Any:
    """The untrained network: ``(N, 1, INPUT, INPUT)`` standardised crops -> ``(N, classes)`` logits."""
    import torch
    from torch import nn

    n = classes or len(class_names())
    block = conv_block
    torch.manual_seed(0)
    return nn.Sequential(
        *block(1, 24, 5, 2),
        *block(24, 48, 3, 2),
        *block(48, 48),
        nn.MaxPool2d(2),
        *block(48, 96),
        *block(96, 96),
        nn.MaxPool2d(2),
        *block(96, 160),
        nn.Flatten(),
        nn.Dropout(0.3),
        nn.Linear(160 * (INPUT // 16) ** 2, n),
    )


def export(model: Any, path: Path, side: int = INPUT, max_batch: int = 256) -> None:
    """Write ``model`` (eval mode) as ONNX opset 18 with a dynamic batch, for ``cv2.dnn``.

    ``side``: the grey input's side; ``max_batch``: the most crops one call may pass.
    """
    import torch

    model.eval()
    x = torch.zeros(4, 1, side, side)
    torch.onnx.export(
        model,
        (x,),
        str(path),
        dynamo=True,
        opset_version=18,
        input_names=["x"],
        dynamic_shapes=({0: torch.export.Dim("n", min=1, max=max_batch)},),
        external_data=False,
    )
