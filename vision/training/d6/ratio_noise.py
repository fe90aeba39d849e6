"""How much of a per-face reject-rate ratio is chance, at a split's own face counts.

Why: the project asks for a per-face reject-rate ratio (max/min, rates floored at 1 %) of at most
1.5, because a reader that rejects 6s more often than 1s biases every roll. But a test split
holds 30-45 dice per face, and there one rejected die is a 2-3 % rate, already over 1.5x the
1 % floor. So before reading a ratio as bias, ask what an *unbiased* reader would score: one
that rejects every die with the same chance, whatever its face. This simulates that reader at
the split's own face counts (Monte Carlo, seeded) and prints, for each overall reject rate,

- ``P(ratio <= LIMIT)``: how often the unbiased reader passes the line, and
- ``P(ratio <= LIMIT | biased)``: how often a reader that rejects one face ``--bias`` times as
  often as the others (the others at the same overall rate) passes it anyway: a pass then says
  little, and the line cannot tell bias from chance.

The ratio is computed exactly as ``dicetower eval`` computes it
(:func:`dicetower.vision.eval.evaluate.reject_ratio`). Only the labels are read, never a reader's
answers, so running it on a test split costs that split nothing. Run::

    .venv/bin/python -m dicetower.vision.training.d6.ratio_noise ../shared/datasets/byler-d6 \\
        --split test --kinds d6
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from ...eval.evaluate import EvalError, reject_ratios, select_entries
from ...manifest import ManifestError

__all__ = ["face_counts", "main", "pass_rate"]

#: Trials per figure: the pass rates are printed to 3 decimals, and their standard error at
#: 20,000 trials is at most 0.0035.
TRIALS = 20_000
#: Bounds the work: more faces or trials than this is a typo, not a study.
MAX_TRIALS = 1_000_000


def face_counts(folder: Path, split: str | None, kinds: list[str] | None) -> dict[str, int]:
    """Labelled dice per face in ``folder`` (``split``/``kinds`` as ``dicetower eval`` selects)."""
    counts: Counter[str] = Counter()
    for entry in select_entries(folder, split=split, kinds=kinds):
        for die in entry.dice:
            if die.face is not None and not die.cocked:  # eval scores cocked dice apart
                counts[str(die.face)] += 1
    return dict(sorted(counts.items(), key=lambda kv: int(kv[0])))


def pass_rate(
    counts: list[int],
    reject_rate: float,
    limit: float,
    trials: int,
    rng: np.random.Generator,
    bias: float = 1.0,
) -> float:
    """Share of simulated evals whose reject ratio is at most ``limit``.

    Each face's dice are rejected independently; with ``bias`` > 1 the last face is rejected
    ``bias`` times as often as the others, all scaled so the overall rate is ``reject_rate``.
    """
    n = np.asarray(counts, np.int64)
    weights = np.ones(len(n))
    weights[-1] = bias
    base = reject_rate * n.sum() / float((weights * n).sum())
    p = np.clip(base * weights, 0.0, 1.0)
    rejected = rng.binomial(n[None, :], p[None, :], size=(trials, len(n)))
    return float((reject_ratios(rejected / n[None, :]) <= limit).mean())


def main(argv: list[str] | None = None) -> int:
    prog = "python -m dicetower.vision.training.d6.ratio_noise"
    ap = argparse.ArgumentParser(prog=prog, description=__doc__)
    ap.add_argument("folders", nargs="+", type=Path, help="dataset folders (manifest.jsonl inside)")
    ap.add_argument("--split", choices=("train", "val", "test"), default=None)
    ap.add_argument("--kinds", default="d6", help="comma-separated die kinds kept (default d6)")
    ap.add_argument("--rates", default="0.01,0.02,0.05,0.10", help="overall reject rates to simulate")
    ap.add_argument("--limit", type=float, default=1.5, help="the ratio line (default: the project's 1.5)")
    ap.add_argument("--bias", type=float, default=2.0, help="the biased reader's factor on one face")
    ap.add_argument("--trials", type=int, default=TRIALS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="one JSON object per folder")
    args = ap.parse_args(argv)
    try:
        rates = [float(r) for r in args.rates.split(",")]
    except ValueError:
        ap.error(f"--rates wants numbers separated by commas, got {args.rates!r}")
    if not all(0.0 < r < 1.0 for r in rates):
        ap.error(f"--rates must lie in (0, 1), got {args.rates!r}")
    if not 0 < args.trials <= MAX_TRIALS:
        ap.error(f"--trials must lie in [1, {MAX_TRIALS}], got {args.trials}")
    if args.limit < 1.0 or args.bias < 1.0:
        ap.error("--limit and --bias are ratios of at least 1")
    kinds = [k for k in args.kinds.split(",") if k]
    for folder in args.folders:
        try:
            counts = face_counts(folder, args.split, kinds)
        except (OSError, ManifestError, EvalError) as exc:
            print(f"error: {folder}: {exc}", file=sys.stderr)
            return 2
        if len(counts) < 2:
            print(f"error: {folder}: fewer than two faces labelled in this selection", file=sys.stderr)
            return 2
        rng = np.random.default_rng(args.seed)
        n = list(counts.values())
        rows = [
            {
                "reject_rate": r,
                "p_pass_unbiased": round(pass_rate(n, r, args.limit, args.trials, rng), 3),
                "p_pass_biased": round(pass_rate(n, r, args.limit, args.trials, rng, args.bias), 3),
            }
            for r in rates
        ]
        out = {
            "dataset": folder.resolve().name,
            "split": args.split,
            "dice_per_face": counts,
            "limit": args.limit,
            "bias": args.bias,
            "trials": args.trials,
            "rows": rows,
        }
        if args.json:
            print(json.dumps(out))
            continue
        print(f"{out['dataset']} ({args.split or 'all'}): dice per face {counts}")
        head = f"P(ratio <= {args.limit}) unbiased"
        print(f"  overall reject rate | {head} | same, one face rejected {args.bias}x")
        for row in rows:
            rate, fair, biased = row["reject_rate"], row["p_pass_unbiased"], row["p_pass_biased"]
            print(f"  {rate:>18.0%} | {fair:>{len(head)}.3f} | {biased:>10.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
