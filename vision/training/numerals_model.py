"""The numeral reader's network (torch, training only) and its ONNX export.

Why this shape: a crop of 64 px holds a d20's numeral in about 15 px, so the first layer
keeps 32 px after a 5 x 5 stride-2 convolution, then three conv + pool stages reach 4 x 4;
the last layer sees that grid whole (not a global pool) because *where* a numeral sits tells
the face on top from its neighbours. About 0.3 M weights, ~15 MFLOP a crop: a few ms on one core.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..numerals import INPUT, class_names

__all__ = ["export", "make_model"]


def make_model(classes: int | None = None) -> Any:
    """The untrained network: ``(N, 1, 64, 64)`` standardised crops -> ``(N, classes)`` logits."""
    import torch
    from torch import nn

    n = classes or len(class_names())

    def block(cin: int, cout: int, k: int = 3, stride: int = 1) -> list[nn.Module]:
        return [
            nn.Conv2d(cin, cout, k, stride, k // 2, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        ]

    torch.manual_seed(0)
    return nn.Sequential(
        *block(1, 16, 5, 2),
        *block(16, 32),
        nn.MaxPool2d(2),
        *block(32, 64),
        nn.MaxPool2d(2),
        *block(64, 96),
        nn.MaxPool2d(2),
        *block(96, 128),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(128 * (INPUT // 16) ** 2, n),
    )


def export(model: Any, path: Path) -> None:
    """Write ``model`` (eval mode) as ONNX opset 18 with a dynamic batch, for ``cv2.dnn``."""
    import torch

    model.eval()
    x = torch.zeros(4, 1, INPUT, INPUT)
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
