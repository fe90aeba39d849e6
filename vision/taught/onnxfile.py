"""Write a taught network: the general network with its last layer replaced by the taught heads.

Why one file per general network: every taught die read through that network shares its
layers; only the last layer differs, so the taught dice's heads are stacked into one layer and a
crop goes through the network once whatever die it is. The file is plain ONNX, read with
``cv2.dnn`` like the shipped networks; writing it needs the ``onnx`` package (the ``teach``
extra: ``pip install 'dicetower[teach]'``), reading it does not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .features import TaughtModelError

__all__ = ["write_taught_network"]


def write_taught_network(base: Path, out: Path, weights: np.ndarray, bias: np.ndarray) -> None:
    """Copy the ONNX network ``base`` to ``out`` with its last Gemm's weights and bias replaced.

    ``weights`` is ``(outputs, features)`` and ``bias`` ``(outputs,)``, float32.
    """
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        raise TaughtModelError(
            "writing a taught model needs the onnx package: pip install 'dicetower[teach]'"
        ) from None
    model = onnx.load(str(base))
    gemms = [n for n in model.graph.node if n.op_type == "Gemm"]
    if not gemms:
        raise TaughtModelError(f"{base}: no last layer (Gemm) to replace")
    gemm = gemms[-1]
    trans_b = next((a.i for a in gemm.attribute if a.name == "transB"), 0)
    w = np.ascontiguousarray(weights if trans_b else weights.T, np.float32)
    b = np.ascontiguousarray(bias, np.float32)
    names = {gemm.input[1]: w, gemm.input[2]: b}
    for i, init in enumerate(model.graph.initializer):
        if init.name in names:
            model.graph.initializer[i].CopyFrom(numpy_helper.from_array(names.pop(init.name), init.name))
    if names:
        raise TaughtModelError(f"{base}: the last layer's weights are not stored in the file")
    for output in model.graph.output:
        dims = output.type.tensor_type.shape.dim
        if len(dims) == 2:
            dims[1].dim_value = len(b)
    onnx.checker.check_model(model)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    onnx.save(model, str(tmp))
    tmp.replace(out)
