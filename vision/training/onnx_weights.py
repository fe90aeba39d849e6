"""The named weight tensors of an exported ONNX file, for training on from the shipped models.

Why: training states live in ``/tmp`` and are gone on a fresh machine, while the exported
models are in the repo; both the reader's and the detector's ``state_from_onnx`` start here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["onnx_initializers"]


def onnx_initializers(path: Path) -> dict[str, np.ndarray]:
    """Every initializer of the ONNX file ``path`` by name; ``ValueError`` if it is not one."""
    import onnx
    from onnx import numpy_helper

    try:
        graph = onnx.load(str(path)).graph
    except Exception as exc:  # protobuf's DecodeError and friends: not an ONNX file
        raise ValueError(f"{path}: not a readable ONNX file ({exc})") from None
    return {t.name: numpy_helper.to_array(t) for t in graph.initializer}
