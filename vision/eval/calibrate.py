"""Calibrate the face reader's thresholds on a tower's own labelled photos.

Why: the shipped thresholds are one set for every camera. They are chosen on the shared
datasets' val photos, where the oblique phone shots of ``epanemu-dice3`` are read confidently
wrong most often, and the price of those wrong reads raises every face's threshold; a top-down
tower then rejects dice it reads right (BENCHMARKS.md). A tower sees one tray
under one camera, so its own recordings (the manifest format, ``docs/vision.md``) say best how
sure its reader must be. The network is not changed: only the thresholds are chosen again.

How, end to end as the tower reads (detector, crops, second look, "not a die" drop): every
labelled photo is read with every face threshold at zero, so each located die gives its most
likely class and that class's probability; labels are matched to read dice by eval's rule
(:func:`dicetower.vision.eval.evaluate.match_dice`). Thresholds are then chosen by the trainer's
rule (:func:`dicetower.vision.faces.thresholds.choose_reject_rate`: one reject rate for every face,
priced ``wrong_cost`` re-rolls per wrong face, capped), each folder one group of the average.
A labelled die the detector misses takes no part (no threshold changes it); one the reader can
read at no threshold (too small, cut off, most likely "not a die") counts as rejected at every
rate, as it is in the trainer's calibration. Cocked dice (no face up) take no part, nor do read
dice that match no label: a folder's labels may leave real dice out, so they are not priced as
phantom faces (eval still counts them, ``false_positives_read``).

With a view (``--view top_down``, :mod:`dicetower.vision.view`), only the answers from frames
seen that way choose, and the card keeps its thresholds for every other frame: a tower's camera
looks down on its tray, and the oblique frames' confident mistakes should not price its thresholds.

Figures in the report are in-sample (the photos the thresholds were chosen on): judge the card
with ``dicetower eval OTHER_PHOTOS --models OUT``.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..detector import MODEL_PATH as SHIPPED_DETECTOR
from ..errors import VisionError
from ..faces.thresholds import MAX_REJECT, WRONG_COST, choose_reject_rate, taken
from ..reader import FrameReader
from ..view import View
from .errata import errata_for
from .evaluate import evaluate_folder, select_entries

__all__ = [
    "MIN_RIGHT_PER_FACE",
    "Answers",
    "Calibration",
    "ThresholdCalibrationError",
    "calibrate",
    "check_out",
    "check_price",
    "read_answers",
    "write_card",
]

#: Fewest dice per face the reader must have read right to set that face's threshold: the
#: r-quantile of fewer is one or two dice, not a rate.
MIN_RIGHT_PER_FACE = 10
_READER_FILES = ("d6_reader.onnx", "d6_reader.json")
_DETECTOR_FILES = ("detector.onnx", "detector.json")
_SHIPPED = SHIPPED_DETECTOR.parent.resolve()  # the shipped reader and detector live together


class ThresholdCalibrationError(VisionError, ValueError):
    """Calibration cannot be done as asked; says why."""


@dataclass
class Answers:
    """The labelled d6 dice of some folders as the reader read them with no threshold."""

    folders: tuple[str, ...]  #: folder names, one group each
    conf: list[float] = field(default_factory=list)  #: probability of the most likely class
    pred: list[int] = field(default_factory=list)  #: most likely class (0 = not a readable die)
    labels: list[int] = field(default_factory=list)  #: labelled face
    groups: list[int] = field(default_factory=list)  #: index into ``folders``
    photos: int = 0
    missed: int = 0  #: labelled dice no read die was matched to (no threshold changes them)
    errors: int = 0  #: photos that failed to load or read
    #: how the camera saw each answer's frame (:mod:`dicetower.vision.view`)
    views: list[str] = field(default_factory=list)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return (
            np.asarray(self.conf, np.float64),
            np.asarray(self.pred, np.int64),
            np.asarray(self.labels, np.int64),
            np.asarray(self.groups, np.int64),
        )


@dataclass(frozen=True)
class Calibration:
    """Chosen thresholds, the price's figures, and right / wrong / rejected per folder (in-sample).

    ``view`` set: ``thresholds`` are for frames seen that way only; the others keep the card's.
    """

    thresholds: dict[int, float]
    stats: dict[str, Any]
    outcomes: dict[str, tuple[int, int, int]]
    view: View | None = None


def read_answers(
    reader: FrameReader,
    folders: Sequence[Path],
    *,
    split: str | None = None,
    errata_dir: Path | None = None,
    limit: int | None = None,
) -> Answers:
    """Read every labelled d6 of ``folders`` end to end with the face thresholds at zero.

    The reader's own thresholds are put back afterwards. ``errata_dir`` corrects labels first
    (:mod:`dicetower.vision.eval.errata`); ``split`` and ``limit`` choose photos as eval does.
    """
    names = tuple(Path(f).resolve().name for f in folders)
    if len(set(names)) != len(names):
        raise ThresholdCalibrationError(f"each folder once: {', '.join(names)}")
    answers = Answers(names)
    with reader.faces.thresholds_at_zero():
        for g, folder in enumerate(folders):
            errata = errata_for(Path(folder), errata_dir) if errata_dir is not None else []
            entries = select_entries(Path(folder), split=split, limit=limit, kinds=["d6"], errata=errata)
            for result in evaluate_folder(folder, reader, entries=entries):
                answers.photos += 1
                answers.errors += result.error is not None
                for s in result.scored:
                    if s.label.cocked:  # no face up: nothing to be right about
                        continue
                    if s.read is None:
                        answers.missed += 1
                        continue
                    answers.conf.append(float(s.read.confidence))
                    answers.pred.append(int(s.read.face or 0))
                    answers.labels.append(int(s.label.face))
                    answers.groups.append(g)
                    seen = result.reading.view if result.reading is not None else None
                    answers.views.append(str(seen or View.OBLIQUE))  # no view judged: the careful one
    return answers


def check_price(wrong_cost: float, max_reject: float) -> None:
    """Refuse a price that is not a finite number of re-rolls, or a reject cap outside [0, 1)."""
    if not (math.isfinite(wrong_cost) and wrong_cost >= 0):
        raise ThresholdCalibrationError(f"wrong_cost is a number of re-rolls, at least 0: got {wrong_cost}")
    if not 0.0 <= max_reject < 1.0:
        raise ThresholdCalibrationError(
            f"max_reject is a share of right answers from 0 to below 1: got {max_reject}"
        )


def calibrate(
    answers: Answers,
    *,
    wrong_cost: float = WRONG_COST,
    max_reject: float = MAX_REJECT,
    view: View | None = None,
    current: dict[str, dict[int, float]] | None = None,
) -> Calibration:
    """Thresholds for ``answers`` (see the module docstring) and what they do to each folder.

    ``view``: choose thresholds for frames the camera saw that way only (``dicetower calibrate
    --view``, :mod:`dicetower.vision.view`), from those frames' answers. ``current`` gives, per
    view, the thresholds the card reads such frames with today
    (:meth:`~dicetower.vision.faces.pips.D6Reader.thresholds_for`): frames seen otherwise keep theirs,
    and a face read right fewer than :data:`MIN_RIGHT_PER_FACE` times in the view's frames keeps
    the view's current threshold.
    """
    conf, pred, labels, groups = answers.arrays()
    check_price(wrong_cost, max_reject)
    if view is None:
        chosen, stats, short = _choose(conf, pred, labels, groups, wrong_cost, max_reject)
        if short:
            counts = ", ".join(f"{f}: {n}" for f, n in short.items())
            raise ThresholdCalibrationError(
                f"too few dice read right to set a threshold (each face needs {MIN_RIGHT_PER_FACE};"
                f" {counts}); label more photos"
            )
        thr = _card_values(chosen)
        took = taken(conf, pred, thr)
    else:
        if current is None or any(str(v) not in current for v in View):
            raise ThresholdCalibrationError(
                "a view's thresholds need the card's for every view, for the other frames"
            )
        views = np.asarray(answers.views, dtype=object)
        seen = views == str(view)
        if not seen.any():
            raise ThresholdCalibrationError(
                f"no frame of these photos is {view}: nothing to choose its thresholds on"
            )
        chosen, stats, short = _choose(
            conf[seen], pred[seen], labels[seen], groups[seen], wrong_cost, max_reject
        )
        thr = {f: (current[str(view)][f] if f in short else v) for f, v in _card_values(chosen).items()}
        stats["view"] = str(view)
        stats["kept_card_threshold"] = sorted(short)
        stats["dice"] = int(seen.sum())
        took = taken(conf, pred, thr) & seen
        for other in set(views[~seen]):
            took |= taken(conf, pred, current[str(other)]) & (views == other)
    stats["groups"] = {str(i): n for i, n in enumerate(answers.folders)}
    outcomes = {}
    for g, name in enumerate(answers.folders):
        sel = groups == g
        right = int((took[sel] & (pred[sel] == labels[sel])).sum())
        wrong = int(took[sel].sum()) - right
        outcomes[name] = (right, wrong, int(sel.sum()) - right - wrong)
    return Calibration(thr, stats, outcomes, view)


def _choose(
    conf: np.ndarray,
    pred: np.ndarray,
    labels: np.ndarray,
    groups: np.ndarray,
    wrong_cost: float,
    max_reject: float,
) -> tuple[dict[int, float], dict[str, Any], dict[int, int]]:
    """The price rule's thresholds and figures, and the faces read right too rarely to set one."""
    right = np.bincount(labels[pred == labels], minlength=7)[1:]
    short = {f: int(n) for f, n in zip(range(1, 7), right, strict=True) if n < MIN_RIGHT_PER_FACE}
    chosen, stats = choose_reject_rate(
        conf, pred, labels, groups, wrong_cost=wrong_cost, max_reject=max_reject
    )
    return chosen, stats, short


def _card_values(chosen: dict[int, float]) -> dict[int, float]:
    """Rounded *down* to the card's 5 decimals: at reject rate 0 a face's threshold is its least
    sure right die's probability, and rounding up would reject that die."""
    return {f: math.floor(v * 1e5) / 1e5 for f, v in chosen.items()}


def write_card(
    reader: FrameReader, base: Path | None, out: Path, calibration: Calibration, provenance: dict[str, Any]
) -> list[str]:
    """Write a model folder for ``--models``: the base's files with the new thresholds.

    The detector that read the photos is copied too, so the folder reads as calibrated even
    after the shipped detector changes. Returns the names written.
    """
    out = Path(out)
    check_out(out, base, force=True)
    src = _models_dir(base)
    card = dict(reader.faces.meta)
    chosen = {str(f): float(v) for f, v in calibration.thresholds.items()}
    if calibration.view is None:  # for every frame: a view's thresholds would overrule them
        card.pop("view", None)
        card["thresholds"] = chosen
        card["calibration"] = calibration.stats
        card["calibrated_for"] = provenance
    else:  # the card's own thresholds stay for every other frame
        block = dict(card.get("view") or {})
        block["tilt_cut"] = reader.faces.top_down_tilt
        block["thresholds"] = {**block.get("thresholds", {}), str(calibration.view): chosen}
        block["calibration"] = calibration.stats
        block["calibrated_for"] = provenance
        card["view"] = block
    reader_dir = src if (src / _READER_FILES[0]).is_file() else _SHIPPED
    detector_dir = src if (src / _DETECTOR_FILES[0]).is_file() else _SHIPPED
    names = [_READER_FILES[0]]
    if (second := card.get("second_reader")) is not None:
        names.append(str(second))
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copyfile(reader_dir / name, out / name)
    for name in _DETECTOR_FILES:
        if (detector_dir / name).is_file():
            shutil.copyfile(detector_dir / name, out / name)
            names.append(name)
    (out / _READER_FILES[1]).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return [*names, _READER_FILES[1]]


def _models_dir(base: Path | None) -> Path:
    return Path(base).resolve() if base is not None else _SHIPPED


def check_out(out: Path, base: Path | None, force: bool = False) -> None:
    """Refuse an ``--out`` that is the models being calibrated (or the shipped ones), always, and
    one that holds anything but a model folder's files unless ``force``; before any photo is read."""
    out = Path(out)
    if out.resolve() in (_models_dir(base), _SHIPPED):
        raise ThresholdCalibrationError(
            f"{out}: would overwrite the models it calibrates; choose another --out"
        )
    if not out.exists():
        return
    if not out.is_dir():
        raise ThresholdCalibrationError(f"{out}: not a folder")
    ours = {*_READER_FILES, *_DETECTOR_FILES}
    others = sorted(p.name for p in out.iterdir() if p.name not in ours and not p.name.endswith(".onnx"))
    if others and not force:
        raise ThresholdCalibrationError(
            f"{out}: holds other files ({', '.join(others[:3])}); choose an empty folder"
        )
