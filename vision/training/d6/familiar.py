"""Fit the d6 reader's familiarity check (``d6_familiar.npz``, :mod:`dicetower.vision.faces.familiar`).

Run it on a reader folder (the shipped one, or a run's ``--out``) with the crop cache its
training built (``--work``; built here when absent)::

    .venv/bin/python -m dicetower.vision.training.d6.familiar --models vision/models \\
        --work runs/reader --errata vision/training/errata

It adds a ``features`` output to ``d6_reader.onnx`` when the network lacks one (the pooled last
stage, beside the logits: the logits are unchanged, :func:`add_features_output`), reads the
labelled crops through the runtime reader (:class:`~dicetower.vision.faces.pips.D6Reader`, so
the features are the ones reading computes), keeps a sample of the features of the *train*
split of the sets the network trained on (and of the rendered dice it trained on, so the
simulated tower's dice stay familiar), and sets both thresholds on their *validation* split
(each die as labelled and as a detector frames it, :func:`~.calibrate.calibration_crops`):
each the score that half of ``--familiar-cost`` of the val dice read with a face exceed. Sets
the network never trained on are never used here: they measure the check (docs/vision.md,
"Unfamiliar dice"). ``--leave-out NAME`` fits a network trained with that flag.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ...faces.familiar import FAMILIAR_FILE, Familiarity, energies, unit_rows
from ...faces.pips import D6Reader
from .calibrate import calibration_crops
from .data import D6_DATASETS, build_cache, build_synth_cache, cache_name

__all__ = ["BANK", "FEATURES", "K", "add_features_output", "choose_bank", "fit_familiarity", "main"]

#: The network output the check reads: the last stage's channels averaged over the crop.
FEATURES = "features"
#: Training dice kept in the sample (float16 on disk: 1024 x 96 x 2 bytes, about 200 KB).
BANK = 1024
#: Which nearest training die a die is measured to (the 5th: one odd training crop is not enough).
K = 5


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
    pooled = "pooled_" + FEATURES
    graph.node.append(helper.make_node("GlobalAveragePool", [source], [pooled], name="familiar_pool"))
    graph.node.append(helper.make_node("Flatten", [pooled], [FEATURES], name="familiar_flatten", axis=1))
    graph.output.append(helper.make_tensor_value_info(FEATURES, TensorProto.FLOAT, ["n", None]))
    onnx.checker.check_model(model)
    onnx.save(model, str(onnx_path))
    return True


def choose_bank(features: np.ndarray, size: int = BANK, seed: int = 0) -> np.ndarray:
    """A seeded sample of ``size`` training dice's features, unit rows (all of them when fewer)."""
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(features), min(size, len(features)), replace=False)
    return unit_rows(features[np.sort(pick)])


def fit_familiarity(
    reader: D6Reader, data: dict[str, np.ndarray], *, cost: float, oblique: dict[str, float] | None = None
) -> tuple[Familiarity, dict[str, Any]]:
    """The statistics of ``reader``'s network on ``data`` (a :mod:`.data` cache), and their figures.

    The sample comes from the train split of the d6 datasets in ``data`` (a left-out set is
    dropped before) and of its rendered dice (group ``len(D6_DATASETS)``), faces 1-6; each
    threshold is the score that ``cost / 2`` of the d6 datasets' val dice read with a face
    exceed, so together they call at most ``cost`` of those dice unfamiliar.
    """
    rendered = data["ds"] == len(D6_DATASETS)
    train = ((data["ds"] < len(D6_DATASETS)) | rendered) & (data["face"] > 0) & (data["split"] == 0)
    # Placeholder statistics that name the output: the reader answers its features, judges nothing.
    reader.use_familiarity(Familiarity(FEATURES, np.ones((1, 1), np.float32), 1, 1.0, 0.0))
    reader.check_familiar = False
    _probs, feats, _scaled = reader.scored(list(data["crop"][train]))
    bank = choose_bank(feats)
    crops, faces, groups = calibration_crops(data, oblique, seed=0)
    keep = (groups < len(D6_DATASETS)) & (faces > 0)
    crops, faces, groups = crops[keep], faces[keep], groups[keep]
    reads = reader.read_crops(list(crops))  # the check is off: the faces the card's thresholds give
    _probs, vfeats, vscaled = reader.scored(list(crops))
    read = np.array([r.face is not None for r in reads])
    right = np.array([r.face == f for r, f in zip(reads, faces, strict=True)])
    probe = Familiarity(FEATURES, bank, K, 2.0, 0.0)
    knn, energy = probe.knn_distances(vfeats), energies(vscaled)
    knn_threshold = float(np.quantile(knn[read], 1.0 - cost / 2))
    energy_threshold = float(np.quantile(energy[read], 1.0 - cost / 2))
    fam = Familiarity(FEATURES, bank, K, knn_threshold, energy_threshold)
    far = fam.unfamiliar(vfeats, vscaled)
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
        "rendered_dice": int((train & rendered).sum()),
        "bank": len(bank),
        "val_crops": len(crops),
        "val_read": int(read.sum()),
        "val_read_flagged": int((far & read).sum()),
        "val_right_flagged": int((far & right).sum()),
        "val_wrong": int((read & ~right).sum()),
        "val_wrong_flagged": int((far & read & ~right).sum()),
        "knn_threshold": round(knn_threshold, 4),
        "energy_threshold": round(energy_threshold, 4),
        "per_set": per_set,
    }
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
        default=0.002,
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
    synth = card.get("synth") or {}  # the rendered dice the network trained on, as train.py names them
    scenes, marbled = int(synth.get("scenes") or 0), float(synth.get("marbled") or 0.0)
    if scenes > 0:
        name = f"synth{scenes}" + (f"_marbled{marbled:g}" if marbled else "")
        rendered = build_synth_cache(args.work / f"{name}.npz", scenes, marbled=marbled)
        if rendered is not None:
            data = {k: np.concatenate([data[k], rendered[k]]) for k in data}
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
