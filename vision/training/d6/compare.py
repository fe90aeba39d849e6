"""Judge candidate models against the shipped pair end to end: one table, the sums a rule needs.

Why: a candidate detector or reader is kept only if a rule written before it was trained says so
(BENCHMARKS.md). Those rules speak of sums over the four d6 datasets and of the d6 faces read on
photos of d20s, which five ``dicetower eval`` runs per candidate would leave to add up by hand.
This runs the same scoring (:func:`~dicetower.vision.eval.evaluate.evaluate_folder` with
:func:`~dicetower.vision.reader.open_reader`) and prints the table once.

Run::

    .venv/bin/python -m dicetower.vision.training.d6.compare shipped runs/det_a runs/det_b --split val

``shipped`` names the models in the repo; any other name is a folder as ``dicetower eval
--models`` takes it. The d6 datasets are scored with ``--kinds d6``, and the d20 photos
(:data:`OTHER_DICE`) with ``--kinds d20``. On those, every d6 face read (a wrong read, or a false
positive read as a face) is a die that is not there: the ``d20: d6 faces`` column.

Every row after the first also says how it differs from the first, dataset by dataset and group by
group of near-duplicate photos (``splits.group_of``): the change in d6 dice right and wrong, with
a 95 % interval from resampling those groups (:func:`dicetower.vision.eval.intervals.sum_interval`).
Why: the held-out splits are 9-48 such groups a dataset, and one hard photo can move a sum by ten
dice, so "+7 right" alone does not say whether a candidate is better or drew easier luck.

``--zero-thresholds`` reads with every face threshold at zero, so each located die is taken at
its most likely face: the most a reader's network and detector can get right, which no choice
of thresholds can pass (BENCHMARKS.md: byler's ceiling).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...detector import DetectorError
from ...eval.errata import ErrataError, errata_for
from ...eval.evaluate import EvalError, FolderReport, Outcome, evaluate_folder, select_entries
from ...eval.intervals import sum_interval
from ...eval.splits import SPLITS
from ...faces.pips import ReaderModelError
from ...manifest import ManifestError
from ...reader import FrameReader, open_reader
from ...reading import DiceReader, Reading
from .data import D6_DATASETS, OTHER_DICE

__all__ = ["SHIPPED", "compare", "main", "paired_change", "score", "score_report"]

#: The name that stands for the models shipped in the repo.
SHIPPED = "shipped"
COUNTS = ("correct", "wrong", "rejected", "missed", "false_positives", "false_positives_read")


class _AtZero:
    """A frame reader read with every face threshold at zero (``--zero-thresholds``)."""

    def __init__(self, reader: FrameReader) -> None:
        self._reader = reader

    def read(self, frame: Any, reference: Any = None, tray: Any = None) -> Reading:
        with self._reader.faces.thresholds_at_zero():  # one rule for "no threshold", calibrate's too
            return self._reader.read(frame, reference, tray)


def _reader(models: str, zero_thresholds: bool = False) -> DiceReader:
    reader = open_reader(None if models == SHIPPED else models)
    return _AtZero(reader) if zero_thresholds else reader


def score_report(
    folder: Path, reader: DiceReader, split: str | None, kinds: Sequence[str], errata_dir: Path | None = None
) -> FolderReport:
    """One folder scored for ``reader``, as ``dicetower eval`` scores it."""
    errata = errata_for(folder, errata_dir) if errata_dir is not None else []
    entries = select_entries(folder, split=split, kinds=kinds, errata=errata)
    report = FolderReport(folder.resolve().name)
    for result in evaluate_folder(folder, reader, entries=entries):
        report.add(result)
    return report


def score(
    folder: Path, reader: DiceReader, split: str | None, kinds: Sequence[str], errata_dir: Path | None = None
) -> dict[str, Any]:
    """One folder's ``dicetower eval --json`` object for ``reader``."""
    return score_report(folder, reader, split, kinds, errata_dir).to_json()


def paired_change(before: dict[str, FolderReport], after: dict[str, FolderReport]) -> dict[str, Any]:
    """How ``after`` differs from ``before`` in dice right and wrong, summed over their datasets.

    Both must have read the same photos. Each (dataset, photo group) contributes its own change,
    and the interval resamples those groups (:func:`~dicetower.vision.eval.intervals.sum_interval`).
    """
    if before.keys() != after.keys():
        raise ValueError(f"different datasets: {sorted(before)} and {sorted(after)}")
    out: dict[str, Any] = {}
    for outcome in (Outcome.CORRECT, Outcome.WRONG):
        changes = []
        for d, first in before.items():
            later = after[d].groups
            if first.groups.keys() != later.keys():
                raise ValueError(f"{d}: the two reports read different photos")
            changes += [later[g][outcome.value] - c[outcome.value] for g, c in first.groups.items()]
        lo, hi = sum_interval(changes)
        out[outcome.value] = {"change": int(sum(changes)), "interval": [lo, hi]}
    out["groups"] = sum(len(r.groups) for r in before.values())
    return out


def compare(
    models: Sequence[str],
    datasets: Path,
    split: str | None,
    errata_dir: Path | None = None,
    *,
    zero_thresholds: bool = False,
) -> list[dict[str, Any]]:
    """Per set of models: its reports per dataset present, the d6 sums, and the d6 faces on d20 photos."""
    out = []
    first: dict[str, FolderReport] | None = None
    for name in models:
        reader = _reader(name, zero_thresholds)
        scored = {
            d: score_report(datasets / d, reader, split, ("d6",), errata_dir)
            for d in D6_DATASETS
            if (datasets / d).is_dir()
        }
        reports = {d: r.to_json() for d, r in scored.items()}
        sums = {k: sum(r[k] for r in reports.values()) for k in ("dice", *COUNTS)}
        row: dict[str, Any] = {"models": name, "datasets": reports, "d6_sum": sums, "d20_d6_faces": None}
        row["vs_first"] = None if first is None else paired_change(first, scored)
        first = scored if first is None else first
        others = [score(datasets / d, reader, split, ("d20",)) for d in OTHER_DICE if (datasets / d).is_dir()]
        if others:
            row["d20_d6_faces"] = sum(r["wrong"] + r["false_positives_read"] for r in others)
        out.append(row)
    return out


def _cell(x: dict[str, Any] | None) -> str:
    if x is None:
        return "-"
    found = f"{x['correct']}/{x['dice']}, {x['wrong']} wrong, {x['rejected']} rej, {x['missed']} missed"
    return f"{found}, fp {x['false_positives']} ({x['false_positives_read']} read)"


def _change(vs: dict[str, Any] | None) -> str:
    if vs is None:
        return "-"

    def one(what: str) -> str:
        c, (lo, hi) = vs[what]["change"], vs[what]["interval"]
        return f"{c:+d} {what} ({lo:+.0f} to {hi:+.0f})"

    return f"{one('correct')}, {one('wrong')}"


def _print(rows: list[dict[str, Any]]) -> None:
    names = sorted({d for r in rows for d in r["datasets"]}, key=D6_DATASETS.index)
    head = ["models", *names, "d6 sum: right / wrong / fp read", "d20: d6 faces", "vs first row (95 %)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        cells = [r["models"]]
        for d in names:
            cells.append(_cell(r["datasets"].get(d)))
        s = r["d6_sum"]
        cells.append(f"{s['correct']} / {s['wrong']} / {s['false_positives_read']}")
        cells.append("-" if r["d20_d6_faces"] is None else str(r["d20_d6_faces"]))
        cells.append(_change(r["vs_first"]))
        print("| " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help=f"'{SHIPPED}' or a folder of candidate models")
    ap.add_argument("--split", choices=SPLITS, default="val", help="(default %(default)s)")
    ap.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--errata", type=Path, help="score against corrected labels (vision/training/errata)")
    ap.add_argument("--json", action="store_true", help="one JSON object per candidate")
    ap.add_argument(
        "--zero-thresholds",
        action="store_true",
        help="take every located die at its most likely face (the ceiling no threshold can pass)",
    )
    args = ap.parse_args(argv)
    if not any((args.datasets / d).is_dir() for d in D6_DATASETS):
        ap.error(f"{args.datasets}: none of {', '.join(D6_DATASETS)}")
    if args.errata is not None and not args.errata.is_dir():
        ap.error(f"--errata {args.errata}: no such folder")
    for name in args.models:
        if name != SHIPPED and not Path(name).is_dir():
            ap.error(f"{name}: no such folder of models (or '{SHIPPED}')")
    try:
        rows = compare(
            args.models, args.datasets, args.split, args.errata, zero_thresholds=args.zero_thresholds
        )
    except (FileNotFoundError, ErrataError, ManifestError, EvalError, ReaderModelError, DetectorError) as exc:
        ap.error(str(exc))
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        _print(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
