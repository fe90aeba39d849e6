"""Train the d6 face reader (``vision/models/d6_reader.onnx``) on the shared datasets' train split.

Run it (one torch thread when the machine is shared; ``--out`` a folder of its own, judged with
``dicetower eval --split val --models OUT`` before it is copied over ``vision/models``)::

    .venv/bin/python -m dicetower.vision.training.d6.train --out runs/reader --arch v3s \\
        --init vision/models/d6_reader.onnx --max-minutes 75 --epochs 1000 --threads 1 \\
        --hard-negatives --other-dice --synth 600 --synth-marbled 0.6 \\
        --errata vision/training/errata --oblique epanemu-dice3 --oblique matteop65-d6-wood \\
        --oblique-turn 10 --seed 191

trains on from the shipped reader with the shipped reader's data. Its card
(``vision/models/d6_reader.json``) names the flags, seed and starting state each model was made
with; the shipped one is a weight soup (:mod:`dicetower.vision.training.d6.soup`) of runs like this
one. ``--calibrate-only --init vision/models/d6_reader.onnx`` with the card's flags calibrates the
shipped network again. Its thresholds match the card's only on the caches the card was made
with: ``--hard-negatives`` mines the false alarms of whatever pipeline is shipped when the cache
is built (on a fresh ``--work`` with the shipped pair: 341 in train where the card counts 597, and
temperature 0.791 where the card says 0.829).

The steps, each in its own module and each cached under ``--work`` so a rerun is cheap:

1. data (:mod:`.data`): a context square around every labelled d6 and background squares
   as class 0; with ``--hard-negatives`` the pipeline's false alarms, with ``--other-dice``
   whatever it proposes on photos of d20s (class 0: a numeral is not a pip), with ``--synth`` /
   ``--synth-oblique`` rendered dice (train only), with ``--errata DIR`` labels a person corrected.
2. train (:mod:`.loop`): the CNN of ``--arch`` (:mod:`.nets`) on random crops of
   the train contexts (:mod:`.augment`), optionally learning from a ``--teacher``'s soft
   answers too. ``--oblique NAME`` bounds the turn of a dataset photographed at an angle, whose
   top face is the upper one in the picture.
3. calibrate and export (:mod:`.calibrate`): temperature and per-face thresholds on the val
   split read as the runtime reads it, then the ONNX file and its card.

Options for a run of its own: ``--augment FIELD=VALUE`` (how hard crops are distorted, e.g.
``p_motion=0.2`` smears a fifth of them), ``--dataset-weight NAME=W`` (a dataset's share of the
crops), ``--train-share NAME=SHARE`` (a seeded share of a dataset's train crops: a learning curve),
``--init`` / ``--teacher`` (a ``.pt`` state or an exported ``.onnx`` of the named arch),
``--leave-out NAME`` (a network that never sees a dataset, in any split: it is trained and
calibrated without it, so the dataset measures how the reader does on dice it never met).
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ...eval.errata import ErrataError, read_errata
from ...models import shipped_dir
from .augment import Augment, parse_augment
from .calibrate import calibrate, write_reader
from .data import (
    D6_DATASETS,
    OTHER_DICE,
    build_cache,
    build_hard_negatives,
    build_oblique_cache,
    build_other_dice_negatives,
    build_synth_cache,
    cache_name,
    thin_train,
)
from .loop import Distill, train
from .nets import ARCHS, load_state, make_model, state_from_onnx
from .read_renders import elevation_band

__all__ = ["main"]


def _named_numbers(ap: argparse.ArgumentParser, flag: str, items: list[str], most: float) -> dict[str, float]:
    """``NAME=NUMBER`` options (a d6 dataset and a number in (0, ``most``]) as a dict; else a usage error."""
    out: dict[str, float] = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            out[name] = float(value)
        except ValueError:
            ap.error(f"{flag} wants NAME=NUMBER, got {item!r}")
        if name not in D6_DATASETS or not 0.0 < out[name] <= most:
            ap.error(f"{flag}: unknown dataset or number out of (0, {most:g}]: {item!r}")
    return out


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    ap.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "dicetower-reader",
        help="where the crop caches, the log and the trained states are kept (default: %(default)s)",
    )
    ap.add_argument("--out", type=Path, default=shipped_dir())
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--max-minutes", type=float, default=15.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tag", default="latest", help="name of the saved state dict under --work")
    ap.add_argument(
        "--init",
        type=Path,
        default=None,
        help="state dict to continue training from (or an exported .onnx reader of --arch, state_from_onnx)",
    )
    ap.add_argument(
        "--calibrate-only", action="store_true", help="skip training: calibrate and export --init"
    )
    ap.add_argument("--arch", choices=ARCHS, default="v3s", help="network (see make_model)")
    # On val, a gate of 0.7-0.8 lets more of byler's dice through wrong (BENCHMARKS.md).
    ap.add_argument(
        "--second-look-below", type=float, default=0.9, help="softmax peak under which a crop is re-read"
    )
    ap.add_argument(
        "--oblique",
        action="append",
        default=[],
        metavar="NAME",
        help="a dataset photographed at an angle (repeatable): its crops are turned at most"
        " --oblique-turn degrees, so the top face stays the upper one",
    )
    ap.add_argument(
        "--oblique-turn", type=float, default=25.0, help="largest turn of an --oblique crop (degrees)"
    )
    ap.add_argument(
        "--teacher",
        type=Path,
        default=None,
        help="distil from this trained reader state dict (its --teacher-arch) instead of labels alone",
    )
    ap.add_argument("--teacher-arch", choices=ARCHS, default="v3s", help="the teacher's network")
    ap.add_argument(
        "--distill",
        type=float,
        nargs=2,
        default=(Distill.weight, Distill.temperature),
        metavar=("WEIGHT", "TEMPERATURE"),
        help="share of the loss that follows the teacher (0-1) and the softening temperature (>0)",
    )
    ap.add_argument("--threads", type=int, default=2, help="torch threads (1 when the machine is shared)")
    ap.add_argument(
        "--errata",
        type=Path,
        default=None,
        help="train and calibrate on labels corrected by DIR/<dataset>.jsonl (vision/training/errata)",
    )
    ap.add_argument("--synth", type=int, default=250, help="rendered scenes added to train (0: none)")
    ap.add_argument(
        "--synth-oblique",
        type=int,
        default=0,
        help="rendered dice photographed at an angle added to train (0: none; build_oblique_cache)",
    )
    ap.add_argument(
        "--synth-oblique-elevation",
        type=elevation_band,
        default=(25.0, 75.0),
        metavar="LO,HI",
        help="the rendered camera's range above the table, degrees (default 25,75; 90 = straight down)",
    )
    ap.add_argument(
        "--synth-marbled",
        type=float,
        default=0.0,
        help="share (0-1) of the rendered dice drawn marbled (pale swirls under the pips)",
    )
    ap.add_argument(
        "--hard-negatives",
        action="store_true",
        help="add the shipped pipeline's false alarms as class 0 (build_hard_negatives)",
    )
    ap.add_argument(
        "--other-dice",
        action="store_true",
        help="add every proposal on photos of other dice (rsandrini-d20 train/val) as class 0, "
        "and price reading one as a face like a wrong face in calibration (build_other_dice_negatives)",
    )
    ap.add_argument(
        "--augment",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override one Augment field (repeatable), e.g. p_small=0.1 or small=30,40",
    )
    ap.add_argument(
        "--dataset-weight",
        action="append",
        default=[],
        metavar="NAME=W",
        help="multiply a dataset's share of the training crops (repeatable), e.g. byler-d6=2",
    )
    ap.add_argument(
        "--train-share",
        action="append",
        default=[],
        metavar="NAME=SHARE",
        help="keep only this share (0-1] of a dataset's train crops (repeatable; a learning curve)",
    )
    ap.add_argument(
        "--leave-out",
        action="append",
        default=[],
        metavar="NAME",
        help="drop a d6 dataset from every split (repeatable): a network that never saw it",
    )
    return ap


def _checked(ap: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """Every option checked before the cache is built (minutes on a fresh --work); the parsed extras."""
    if not 0.0 <= args.synth_marbled <= 1.0 or (args.synth_marbled > 0 and args.synth <= 0):
        ap.error(f"--synth-marbled is a share in [0, 1] of --synth's rendered dice, got {args.synth_marbled}")
    if not 0 <= args.synth_oblique <= 50_000:
        ap.error(f"--synth-oblique is a number of rendered dice, 0-50000, got {args.synth_oblique}")
    if args.synth_oblique and not args.oblique:
        ap.error("--synth-oblique needs --oblique: rendered oblique dice keep their up only with it")
    for name in args.oblique:
        if name not in D6_DATASETS:
            ap.error(f"--oblique: unknown dataset {name!r} (one of {', '.join(D6_DATASETS)})")
    for name in args.leave_out:
        if name not in D6_DATASETS:
            ap.error(f"--leave-out: unknown dataset {name!r} (one of {', '.join(D6_DATASETS)})")
    if len(set(args.leave_out)) >= len(D6_DATASETS):
        ap.error("--leave-out: at least one d6 dataset must stay to train on")
    if not 0.0 <= args.oblique_turn < 180.0:
        ap.error(f"--oblique-turn must lie in [0, 180), got {args.oblique_turn}")
    try:
        aug = parse_augment(args.augment)
    except ValueError as exc:
        ap.error(f"--augment: {exc}")
    distill = Distill(*args.distill)
    if not (0.0 <= distill.weight <= 1.0 and 0.0 < distill.temperature <= 100.0):
        ap.error(f"--distill: weight must lie in [0, 1] and temperature in (0, 100], got {args.distill}")
    if args.teacher is None and tuple(args.distill) != (Distill.weight, Distill.temperature):
        ap.error("--distill needs --teacher (without one the run learns from labels alone)")
    extras: dict[str, Any] = {
        "oblique": {name: args.oblique_turn for name in args.oblique},
        "weights": _named_numbers(ap, "--dataset-weight", args.dataset_weight, 100.0),
        "shares": _named_numbers(ap, "--train-share", args.train_share, 1.0),
        "aug": aug,
        "distill": distill,
        "n_errata": 0,
    }
    if args.errata is not None:
        if not args.errata.is_dir():
            ap.error(f"--errata {args.errata}: no such folder (it holds <dataset>.jsonl files)")
        try:
            extras["n_errata"] = sum(len(read_errata(path)) for path in sorted(args.errata.glob("*.jsonl")))
        except (ErrataError, OSError) as exc:
            ap.error(f"--errata: {exc}")
    states = (("--init", args.init, args.arch), ("--teacher", args.teacher, args.teacher_arch))
    for flag, path, _arch in states:
        if path is not None and not path.is_file():
            ap.error(f"{flag} {path}: no such state dict")
    for flag, path, arch in states:  # an exported file that is not that network: say so now
        if path is not None and path.suffix == ".onnx":
            try:
                state_from_onnx(path, arch)
            except ValueError as exc:
                ap.error(f"{flag}: {exc}")
    if args.calibrate_only and args.init is None:
        ap.error("--calibrate-only needs --init")
    return extras


def _data(ap: argparse.ArgumentParser, args: argparse.Namespace, shares: dict[str, float], log: Any) -> tuple:
    """The cached crops this run trains and calibrates on, and how many hard / other-dice negatives."""
    data = build_cache(args.datasets, args.work / cache_name(args.errata), errata_dir=args.errata)
    if shares:
        data = thin_train(data, shares, args.seed)
        log(f"train share {shares}: {int((data['split'] == 0).sum())} train crops kept, all datasets")
    if args.synth > 0:
        name = f"synth{args.synth}" + (f"_marbled{args.synth_marbled:g}" if args.synth_marbled else "")
        synth = build_synth_cache(args.work / f"{name}.npz", args.synth, marbled=args.synth_marbled)
        if synth is not None:
            data = {k: np.concatenate([data[k], synth[k]]) for k in data}
    if args.synth_oblique > 0:
        lo, hi = args.synth_oblique_elevation
        oblique_dice = build_oblique_cache(
            args.work / f"synth_oblique{args.synth_oblique}_e{lo:g}-{hi:g}.npz",
            args.synth_oblique,
            elevation=(lo, hi),
        )
        if oblique_dice is not None:
            data = {k: np.concatenate([data[k], oblique_dice[k]]) for k in data}
            log(f"rendered oblique dice: {len(oblique_dice['face'])}")
    n_hard = 0
    if args.hard_negatives:
        hard = build_hard_negatives(args.datasets, args.work / "hard_negatives.npz")
        if hard is not None:
            n_hard = int((hard["split"] == 0).sum())
            log(f"hard negatives: {len(hard['face'])} (splits {np.bincount(hard['split'])})")
            data = {k: np.concatenate([data[k], hard[k]]) for k in data}
    n_other = 0
    if args.other_dice:
        other = build_other_dice_negatives(args.datasets, args.work / "other_dice.npz")
        if other is None:
            ap.error(f"--other-dice: none of {', '.join(OTHER_DICE)} under {args.datasets}")
        n_other = int((other["split"] == 0).sum())
        log(f"other dice (class 0): {len(other['face'])} (splits {np.bincount(other['split'])})")
        data = {k: np.concatenate([data[k], other[k]]) for k in data}
    if args.leave_out:
        # Every crop cut from a left-out dataset's photos goes, its hard negatives included.
        gone = np.isin(data["ds"], [D6_DATASETS.index(name) for name in args.leave_out])
        data = {k: v[~gone] for k, v in data.items()}
        log(f"left out {', '.join(args.leave_out)}: {int(gone.sum())} crops dropped")
    log(f"cache: {len(data['face'])} crops, splits {np.bincount(data['split'])}")
    return data, n_hard, n_other


def _recipe(args: argparse.Namespace, extras: dict[str, Any], n_hard: int, n_other: int) -> dict[str, Any]:
    """The card's account of how the model was made: data, options, seed, starting state."""
    aug, distill, oblique = extras["aug"], extras["distill"], extras["oblique"]
    errata = None if args.errata is None else {"folder": args.errata.name, "corrections": extras["n_errata"]}
    return {
        "oblique": {"datasets": sorted(oblique), "turn": args.oblique_turn} if oblique else None,
        "trained_on": [f"{d} (train split)" for d in D6_DATASETS if d not in args.leave_out],
        "errata": errata,
        "seed": args.seed,
        "arch": args.arch,
        "hard_negatives_in_train": n_hard,
        "other_dice_in_train": n_other,
        "minutes": None if args.calibrate_only else args.max_minutes,
        "init": args.init.name if args.init is not None else None,
        "dataset_weight": extras["weights"] or None,
        "train_share": extras["shares"] or None,
        "synth": {
            "scenes": args.synth,
            "marbled": args.synth_marbled,
            "oblique": args.synth_oblique,
            "oblique_elevation": list(args.synth_oblique_elevation),
        },
        "teacher": (
            None
            if args.teacher is None or args.calibrate_only
            else {"state": args.teacher.name, "arch": args.teacher_arch, **dataclasses.asdict(distill)}
        ),
        "augment": {k: v for k, v in dataclasses.asdict(aug).items() if v != getattr(Augment(), k)} or None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    extras = _checked(ap, args)
    import torch

    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    args.work.mkdir(parents=True, exist_ok=True)
    logf = (args.work / "train.log").open("a", encoding="utf-8")

    def log(msg: str) -> None:
        print(msg, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    data, n_hard, n_other = _data(ap, args, extras["shares"], log)
    if args.calibrate_only:
        model = make_model(args.arch)
        model.load_state_dict(load_state(args.init, args.arch))
        model.eval()
    else:
        teacher = None
        if args.teacher is not None:
            teacher = make_model(args.teacher_arch)
            teacher.load_state_dict(load_state(args.teacher, args.teacher_arch))
            teacher.eval()
        model = train(
            data,
            args.epochs,
            args.seed,
            log,
            args.max_minutes,
            args.init,
            args.arch,
            aug=extras["aug"],
            dataset_weight=extras["weights"],
            teacher=teacher,
            distill=extras["distill"],
            oblique=extras["oblique"],
        )
        torch.save(model.state_dict(), args.work / f"model_{args.tag}.pt")
    cal = calibrate(
        model,
        data,
        second_look_below=args.second_look_below,
        oblique=extras["oblique"],
        other_dice=args.other_dice,
        seed=args.seed,
    )
    recipe = _recipe(args, extras, n_hard, n_other)
    onnx_path = write_reader(model, args.out, cal, args.second_look_below, recipe)
    log(f"temperature {cal.temperature:.3f} thresholds {cal.thresholds} {cal.stats}")
    log(f"wrote {onnx_path} ({onnx_path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
