"""Average the weights of readers trained from one start: a "model soup".

Why: readers fine-tuned from the same state with different seeds or augmentations tend to stay
in one basin of the loss, and then the mean of their weights can read much as an ensemble of
them would ("model soups", Wortsman et al. 2022) at one network's cost per crop, where running
each network costs that many times the reader's time. Measured on val (BENCHMARKS.md): a soup of
one reader and two runs fine-tuned from it reads more dice than any of the three; soups of
readers fine-tuned from a common ancestor but not from each other read more dice but more of
them wrong, and a five-reader soup reads fewer. The shipped reader is such a three-reader soup
(its card, ``vision/models/d6_reader.json``, names the ingredients and the calibration flags).

Every floating tensor is averaged, batch-norm running statistics included; integer counters are
taken from the first ingredient. Ingredients are training states (``.pt``) of one ``--arch``, or
all exported readers (``.onnx``, whose batch norms are folded: a different soup); never a mix.
The soup is a state dict to give the trainer's ``--calibrate-only --init``, which chooses its
thresholds and exports it. ``--arch detector`` averages the detector trainer's checkpoints instead
(``.pt`` only), for its ``--export-only --resume SOUP.pt --out DIR/detector.onnx``. Run::

    .venv/bin/python -m dicetower.vision.training.d6.soup --arch v3s \\
        --out runs/soup.pt runs/reader_a.pt runs/reader_b.pt runs/reader_c.pt
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .nets import ARCHS, load_state, make_model

__all__ = ["DETECTOR", "MAX_INGREDIENTS", "differs", "main", "soup"]

#: ``--arch`` for the detector's checkpoints (``vision/training/detector/train.py``).
DETECTOR = "detector"

#: More ingredients than this is not a soup of fine-tunes but a mistake on the command line.
MAX_INGREDIENTS = 32


def differs(state: Any, like: dict[str, Any]) -> str | None:
    """Why ``state`` is not a state dict of the network ``like`` is one of; None when it is."""
    if not isinstance(state, dict) or not all(hasattr(v, "shape") for v in state.values()):
        return "not a state dict of tensors"
    if state.keys() != like.keys():
        odd = sorted(set(state) ^ set(like))[:3]
        return f"its tensors differ ({', '.join(map(str, odd))})"
    for key, value in state.items():
        shape, want = tuple(value.shape), tuple(like[key].shape)
        if shape != want:
            return f"{key} is {shape}, not {want}"
    return None


def soup(states: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The mean of ``states`` (same keys and shapes), integer entries from the first.

    Raises ``ValueError`` for fewer than two states, more than :data:`MAX_INGREDIENTS`, or
    states of different networks.
    """
    if not 2 <= len(states) <= MAX_INGREDIENTS:
        raise ValueError(f"a soup needs 2 to {MAX_INGREDIENTS} readers, got {len(states)}")
    first = states[0]
    for i, state in enumerate(states[1:], start=2):
        if (why := differs(state, first)) is not None:
            raise ValueError(f"reader {i} is another network: {why}")
    out: dict[str, Any] = {}
    for key, value in first.items():
        if value.dtype.is_floating_point:
            # Summed in the given order in the tensors' own precision, so the same ingredients in
            # the same order give back the same soup bit for bit.
            out[key] = sum(s[key] for s in states) / len(states)
        else:
            out[key] = value.clone()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ingredients", nargs="+", type=Path, help="state dicts (.pt) or exported readers (.onnx)")
    ap.add_argument(
        "--arch",
        choices=(*ARCHS, DETECTOR),
        required=True,
        help="the ingredients' network (a reader's, or detector)",
    )
    ap.add_argument("--out", type=Path, required=True, help="where to write the soup's state dict (.pt)")
    args = ap.parse_args(argv)
    import torch

    missing = [str(p) for p in args.ingredients if not p.is_file()]
    if missing:
        ap.error(f"no such file: {', '.join(missing)}")
    if len({p.suffix == ".onnx" for p in args.ingredients}) > 1:
        # An exported reader has its batch norms folded into the convolutions: its tensors
        # mean something else than a training state's, and their mean would be neither.
        ap.error("mix of .onnx and .pt ingredients: use training states (.pt) for all, or exports for all")
    if not 2 <= len(args.ingredients) <= MAX_INGREDIENTS:
        ap.error(f"a soup needs 2 to {MAX_INGREDIENTS} readers, got {len(args.ingredients)}")
    detector = args.arch == DETECTOR
    if detector and args.ingredients[0].suffix == ".onnx":
        ap.error("detector soups take the trainer's checkpoints (.pt), not exported .onnx files")
    if detector:
        from ..detector.model import build_model

        like = build_model().state_dict()
    else:
        like = make_model(args.arch).state_dict()
    kind, what = ("detector checkpoint", "detector") if detector else ("reader state", f"{args.arch} reader")
    states = []
    for path in args.ingredients:
        try:
            state = torch.load(path, weights_only=True) if detector else load_state(path, args.arch)
        except Exception as exc:  # torch.load's unpickling errors are many kinds; all mean "not a state"
            ap.error(f"{path}: not a {kind} ({type(exc).__name__}: {exc})")
        if (why := differs(state, like)) is not None:
            ap.error(f"{path}: not a {what}: {why}")
        states.append(state)
    mixed = soup(states)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(mixed, args.out)
    print(f"soup of {len(args.ingredients)} {'detectors' if detector else 'readers'} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
