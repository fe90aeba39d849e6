"""Fit the d6 reader's familiarity check (``d6_familiar.npz``, :mod:`dicetower.vision.faces.familiar`).

Run it on a reader folder (the shipped one, or a run's ``--out``) with the crop cache its
training built (``--work``; built here when absent)::

    .venv/bin/python -m dicetower.vision.training.d6.familiar --models vision/models \\
        --work runs/reader --errata vision/training/errata

It adds a ``features`` output to ``d6_reader.onnx`` when the network lacks one (the pooled last
stage, beside the logits: the logits are unchanged, :func:`add_features_output`), reads the
labelled crops through the runtime reader (:class:`~dicetower.vision.faces.pips.D6Reader`, so
the features are the ones reading computes), fits the per-face means and shared covariance on
the *train* split of the sets the network trained on, and sets the threshold on their
*validation* split (each die as labelled and as a detector frames it,
:func:`~.calibrate.calibration_crops`): the distance that ``--familiar-cost`` of the val dice
read with a face exceed. Sets the network never trained on are never used here: they measure
the check (docs/vision.md). ``--leave-out NAME`` fits a network trained with that flag.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ...faces.familiar import FAMILIAR_FILE, Familiarity
from ...faces.pips import D6Reader
from .calibrate import calibration_crops
from .data import D6_DATASETS, build_cache, cache_name

__all__ = ["FEATURES", "add_features_output", "fit_familiarity", "fit_statistics", "main"]

#: The network output the check reads: the last stage's channels averaged over the crop.
FEATURES = "features"
#: Shrinkage of the covariance towards its mean variance (keeps rare directions from dominating).
SHRINK = 1e-3


def add_features_output(onnx_path: Path) -> bool:
    """Give the reader network a :data:`FEATURES` output; False when it has one already.

    The output is a global average pool of the tensor the classifier flattens (the last
    stage), so the network computes exactly what it did and one more small tensor beside it.
    """
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load(str(onnx_path))
    graph = model.graph
    if any(o.name == FEATURES for o in graph.output):
        return False
    flatten = [n for n in graph.node if n.op_type in ("Reshape", "Flatten")]
    if not flatten:
        raise ValueError(f"{onnx_path}: no Reshape or Flatten before the classifier to read features from")
    source = flatten[-1].input[0]
    graph.node.append(
        helper.make_node("GlobalAveragePool", [source], ["pooled_" + FEATURES], name="familiar_pool")
    )
    graph.node.append(
        helper.make_node("Flatten", ["pooled_" + FEATURES], [FEATURES], name="familiar_flatten", axis=1)
    )
    graph.output.append(helper.make_tensor_value_info(FEATURES, TensorProto.FLOAT, ["n", None]))
    onnx.checker.check_model(model)
    onnx.save(model, str(onnx_path))
    return True


def fit_statistics(features: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-face means ``(6, D)`` and a whitening map ``(D, D)`` of the shared covariance.

    ``whiten`` is ``V diag(1 / sqrt(s))`` of the shrunk covariance's eigen decomposition, so a
    whitened difference's squared length is the Mahalanobis distance.
    """
    if set(np.unique(faces).tolist()) != set(range(1, 7)):
        raise ValueError("the statistics need training dice of every face 1-6")
    x = features.astype(np.float64)
    means = np.stack([x[faces == f].mean(0) for f in range(1, 7)])
    resid = x - means[faces - 1]
    cov = resid.T @ resid / len(resid)
    cov += np.eye(len(cov)) * SHRINK * np.trace(cov) / len(cov)
    s, v = np.linalg.eigh(cov)
    return means, v / np.sqrt(np.maximum(s, 1e-12))[None, :]


def fit_familiarity(
    reader: D6Reader, data: dict[str, np.ndarray], *, cost: float, oblique: dict[str, float] | None = None
) -> tuple[Familiarity, dict[str, Any]]:
    """The statistics of ``reader``'s network on ``data`` (a :mod:`.data` cache), and their figures.

    Only the d6 datasets in ``data`` count (a left-out set is dropped before), faces 1-6.
    """
    d6 = (data["ds"] < len(D6_DATASETS)) & (data["face"] > 0)
    train = d6 & (data["split"] == 0)
    # Placeholder statistics that name the output: the reader answers its features, judges nothing.
    reader.use_familiarity(
        Familiarity(FEATURES, np.zeros((6, 1), np.float32), np.eye(1, dtype=np.float32), 1.0)
    )
    reader.check_familiar = False
    _probs, feats = reader.scored(list(data["crop"][train]))
    means, whiten = fit_statistics(feats, data["face"][train])
    crops, faces, groups = calibration_crops(data, oblique, seed=0)
    keep = (groups < len(D6_DATASETS)) & (faces > 0)
    crops, faces, groups = crops[keep], faces[keep], groups[keep]
    reads = reader.read_crops(list(crops))  # the check is off: the faces the card's thresholds give
    _probs, vfeats = reader.scored(list(crops))
    read = np.array([r.face is not None for r in reads])
    right = np.array([r.face == f for r, f in zip(reads, faces, strict=True)])
    probe = Familiarity(FEATURES, means.astype(np.float32), whiten.astype(np.float32), 1.0)
    dist = probe.distances(vfeats)
    threshold = float(np.quantile(dist[read], 1.0 - cost))
    far = dist > threshold
    per_set = {
        D6_DATASETS[g]: {
            "read": int((read & (groups == g)).sum()),
            "flagged": int((far & read & (groups == g)).sum()),
            "wrong": int((read & ~right & (groups == g)).sum()),
            "wrong_flagged": int((far & read & ~right & (groups == g)).sum()),
        }
        for g in np.unique(groups)
    }
    figures = {
        "train_dice": int(train.sum()),
        "val_crops": len(crops),
        "val_read": int(read.sum()),
        "val_read_flagged": int((far & read).sum()),
        "val_right_flagged": int((far & right).sum()),
        "val_wrong": int((read & ~right).sum()),
        "val_wrong_flagged": int((far & read & ~right).sum()),
        "threshold": round(threshold, 3),
        "per_set": per_set,
    }
    fam = Familiarity(FEATURES, means.astype(np.float32), whiten.astype(np.float32), threshold)
    return fam, figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--models", type=Path, required=True, help="folder with d6_reader.onnx and .json")
    ap.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "dicetower-reader")
    ap.add_argument("--errata", type=Path, default=None, help="the errata the training cache was cut with")
    ap.add_argument(
        "--familiar-cost",
        type=float,
        default=0.01,
        help="share of the val dice read with a face the check may call unfamiliar (default %(default)s)",
    )
    ap.add_argument(
        "--leave-out", action="append", default=[], metavar="NAME", help="a set the network never saw"
    )
    args = ap.parse_args(argv)
    if not 0.0 < args.familiar_cost < 0.5:
        ap.error(f"--familiar-cost is a share in (0, 0.5), got {args.familiar_cost}")
    for name in args.leave_out:
        if name not in D6_DATASETS:
            ap.error(f"--leave-out: unknown dataset {name!r} (one of {', '.join(D6_DATASETS)})")
    if not (args.models / "d6_reader.onnx").is_file():
        ap.error(f"--models {args.models}: no d6_reader.onnx")
    import cv2

    cv2.setNumThreads(1)
    data = build_cache(args.datasets, args.work / cache_name(args.errata), errata_dir=args.errata)
    gone = np.isin(data["ds"], [D6_DATASETS.index(name) for name in args.leave_out])
    data = {k: v[~gone] for k, v in data.items()}
    (args.models / FAMILIAR_FILE).unlink(missing_ok=True)  # the reader loads the plain network first
    add_features_output(args.models / "d6_reader.onnx")
    reader = D6Reader(args.models)
    card = reader.meta
    oblique = (
        {name: float(card["oblique"]["turn"]) for name in card["oblique"]["datasets"]}
        if card.get("oblique")
        else None
    )
    fam, figures = fit_familiarity(reader, data, cost=args.familiar_cost, oblique=oblique)
    (args.models / FAMILIAR_FILE).write_bytes(fam.to_bytes())
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
