"""Compare face readers on the labelled boxes: best guess, accepted answers, and right answers at equal risk.

Run::

    .venv/bin/python -m dicetower.vision.training.d6.rank [MODEL_DIR ...] [--split val]

For each reader (default: the shipped one) and each hard d6 dataset it reads the labelled boxes
(cut as ``d6.evaluate --mode gt`` cuts them) and prints: how often the most likely face is right
(``best``), how many answers the reader's own thresholds accept right and wrong, and how many
right answers come before the 1st, 2nd, 3rd and 5th wrong one when all answers are sorted by
confidence (``right at <=0/1/2/4 wrong``).

Why the last figure: two readers calibrated on the same val split can differ only in where their
thresholds fell. Counting right answers at an equal number of wrong ones compares how well each
ranks its answers, whatever the thresholds.

``--reject-rates 0,0.02,0.05,0.1`` also prints, per reader, what the trainer's calibration would
accept at each reject rate r: thresholds made as the trainer makes them
(:func:`~dicetower.vision.faces.thresholds.thresholds_at`, one per face, pooled over every d6
dataset read, tomitomi3 included as in training), then right / wrong / rejected per dataset.
Why: one set of thresholds serves every dataset, and the trainer picks r by a cost that the
dataset with the most confidently wrong answers dominates; this shows what that r costs the
others.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...eval.evaluate import select_entries
from ...faces.pips import D6Reader
from ...faces.thresholds import outcome_counts, thresholds_at
from ...imageio import load_image_info
from .data import D6_DATASETS
from .evaluate import gt_candidates

__all__ = ["Answers", "main", "outcomes_at", "read_labelled", "right_before_wrong"]

DATASETS = ("byler-d6", "epanemu-dice3", "matteop65-d6-wood")
WRONG_ALLOWED = (0, 1, 2, 4)
#: Most reject rates one run may ask for (each is one pass over the answers).
MAX_RATES = 50


@dataclass(frozen=True)
class Answers:
    """One dataset's labelled dice as one reader read them: its probabilities and verdicts."""

    probs: np.ndarray  #: ``(N, 7)`` calibrated class probabilities
    labels: np.ndarray  #: ``(N,)`` labelled faces
    accepted: np.ndarray  #: ``(N,)`` face the reader's own thresholds accept, 0 where none


def right_before_wrong(
    conf: np.ndarray, right: np.ndarray, allowed: Sequence[int] = WRONG_ALLOWED
) -> list[int]:
    """Right answers among the most confident ones, taken until more than ``k`` are wrong, per ``k``."""
    order = np.argsort(-np.asarray(conf, np.float64), kind="stable")
    ok = np.asarray(right, bool)[order]
    rights, wrongs = np.cumsum(ok), np.cumsum(~ok)
    out = []
    for k in allowed:
        within = np.flatnonzero(wrongs <= k)
        out.append(int(rights[within[-1]]) if len(within) else 0)
    return out


def read_labelled(reader: D6Reader, folder: Path, split: str) -> Answers:
    """Read one dataset's labelled boxes of ``split`` as the runtime reads a crop."""
    probs: list[np.ndarray] = []
    labels: list[int] = []
    accepted: list[int] = []
    for entry in select_entries(folder, split=split, kinds=["d6"]):
        info = load_image_info(entry.image)
        cands = gt_candidates(folder.name, entry, info.frame, info.scale)
        crops = reader.crops(info.frame, [c.box for c in cands])
        p = reader.probabilities(crops)
        for die, row, crop in zip(entry.dice, p, crops, strict=True):
            probs.append(row)
            labels.append(int(die.face))
            accepted.append(reader.decide(row, crop).face or 0)
    return Answers(
        np.array(probs, np.float64).reshape(-1, 7), np.array(labels, np.int64), np.array(accepted, np.int64)
    )


def rank_dataset(answers: Answers) -> dict[str, object]:
    """The ranking figures of one dataset's labelled boxes for one reader."""
    face = answers.probs[:, 1:].argmax(1) + 1
    conf = answers.probs[np.arange(len(face)), face]
    right = face == answers.labels
    took = answers.accepted > 0
    return {
        "dice": len(right),
        "best": int(right.sum()),
        "accepted_right": int((took & (answers.accepted == answers.labels)).sum()),
        "accepted_wrong": int((took & (answers.accepted != answers.labels)).sum()),
        "right_at_wrong": right_before_wrong(conf, right),
    }


def outcomes_at(
    answers: dict[str, Answers], r: float
) -> tuple[dict[int, float], dict[str, tuple[int, int, int]]]:
    """Thresholds for reject rate ``r`` pooled over ``answers``, and per dataset right, wrong, rejected.

    As the trainer and the runtime decide: a die's answer is its most likely class; it is taken
    when that class is a face whose threshold it reaches.
    """
    probs = np.concatenate([a.probs for a in answers.values()])
    labels = np.concatenate([a.labels for a in answers.values()])
    thr = thresholds_at(probs.max(1), probs.argmax(1), labels, r)
    out = {
        name: outcome_counts(a.probs.max(1), a.probs.argmax(1), a.labels, thr) for name, a in answers.items()
    }
    return thr, out


def _rates(text: str) -> list[float]:
    try:
        rates = [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: reject rates are numbers, comma-separated") from None
    if not 1 <= len(rates) <= MAX_RATES or not all(0.0 <= r <= 1.0 for r in rates):
        raise argparse.ArgumentTypeError(f"{text!r}: 1-{MAX_RATES} reject rates, each from 0 to 1")
    return rates


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path, help="reader model folders (default: the shipped one)")
    ap.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--split", choices=("train", "val", "test"), default="val")
    ap.add_argument(
        "--reject-rates",
        type=_rates,
        metavar="R,R,...",
        help="also print right/wrong/rejected per dataset at these calibration reject rates",
    )
    args = ap.parse_args(argv)
    missing = [str(d) for d in args.dirs if not (d / "d6_reader.onnx").is_file()]
    if missing:
        ap.error(f"no d6_reader.onnx in: {', '.join(missing)}")
    if not any((args.datasets / name).is_dir() for name in DATASETS):
        ap.error(f"{args.datasets}: none of {', '.join(DATASETS)} is there")
    names = [n for n in (D6_DATASETS if args.reject_rates else DATASETS) if (args.datasets / n).is_dir()]
    for model_dir in args.dirs or [None]:
        reader = D6Reader(model_dir)
        answers = {name: read_labelled(reader, args.datasets / name, args.split) for name in names}
        for name in (n for n in DATASETS if n in answers):
            r = rank_dataset(answers[name])
            wrong = "/".join(str(v) for v in r["right_at_wrong"])  # type: ignore[union-attr]
            print(
                f"{model_dir or 'shipped'} {name} {args.split}: {r['dice']} dice, best {r['best']}, "
                f"accepted {r['accepted_right']} right {r['accepted_wrong']} wrong, "
                f"right at <=0/1/2/4 wrong {wrong}",
                flush=True,
            )
        for rate in args.reject_rates or []:
            thr, counts = outcomes_at(answers, rate)
            cells = " | ".join(f"{n} {c[0]} right {c[1]} wrong {c[2]} rej" for n, c in counts.items())
            bars = " ".join(f"{f}:{t:.3f}" for f, t in thr.items())
            print(
                f"{model_dir or 'shipped'} {args.split} r={rate:g} (thresholds {bars}): {cells}", flush=True
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
