"""Read a protocol unit's later photos with its taught model: end to end, and with the die's box given.

End to end is what ``dicetower eval READ --taught MODEL --json`` prints (the general locator
finds the dice, each taught die reads itself). Box given reads each labelled die's box with
its taught die's head alone, which separates the face reading from finding the die.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...eval.evaluate import FolderReport, evaluate_folder
from ...eval.intervals import binomial_bounds, binomial_upper
from ...imageio import ImageError, load_image_info
from ...manifest import read_manifest
from ...taught.model import TaughtModel
from ...taught.reader import open_taught_reader

__all__ = ["boxed_figures", "forced", "read_unit"]


def forced(model: TaughtModel, reader: str) -> TaughtModel:
    """``model`` with every die that has a fitted reader read by ``reader`` (``head`` or ``fitted``),
    at the threshold and fallback the fit chose for that reader (its card's ``figures.readers``).

    For comparing the two readers on later photos; a shipped model reads by the card's choice.
    """
    import copy
    from dataclasses import replace

    out = copy.copy(model)
    dice = []
    for d in model.dice:
        chosen = d.figures.get("readers", {}).get(reader)
        if chosen is None:
            dice.append(d)
            continue
        dice.append(replace(d, reader=reader, threshold=chosen["threshold"], fallback=chosen["fallback"]))
    out.dice = tuple(dice)
    return out


def boxed_figures(folder: Path, model: TaughtModel) -> dict[str, Any]:
    """Right, wrong and unreadable of each labelled die read at its box by its taught die's head."""
    right = wrong = unread = 0
    per_face: dict[int, list[int]] = {}
    for entry in read_manifest(folder):
        try:
            info = load_image_info(entry.image)
        except ImageError:
            continue
        frame, scale = info.frame, info.scale
        h, w = frame.shape[:2]
        for d in entry.dice:
            taught = next((t for t in model.dice if t.kind == d.die and t.colour == d.colour), None)
            if taught is None or d.face is None:
                continue
            box = (0.0, 0.0, float(w), float(h)) if d.box is None else tuple(v * scale for v in d.box)
            (r,) = model.read(taught, frame, [box])  # type: ignore[list-item]
            counts = per_face.setdefault(d.face, [0, 0])
            counts[0] += 1
            if r.face is None:
                unread += 1
                counts[1] += 1
            elif r.face == d.face:
                right += 1
            else:
                wrong += 1
    n = right + wrong + unread
    lo, hi = binomial_bounds(right, n) if n else (0.0, 1.0)
    rates = [max(c[1] / c[0], 0.01) for c in per_face.values() if c[0]]
    return {
        "dice": n,
        "right": right,
        "wrong": wrong,
        "unreadable": unread,
        "right_interval": [round(lo, 4), round(hi, 4)],
        "wrong_upper": round(binomial_upper(wrong, n), 4) if n else 1.0,
        "reject_ratio": round(max(rates) / min(rates), 2) if rates else None,
        "per_face_reject": {str(f): round(c[1] / c[0], 3) for f, c in sorted(per_face.items()) if c[0]},
    }


def _end_to_end(folder: Path, model: TaughtModel, dataset: str) -> dict[str, Any]:
    reader = open_taught_reader(model)
    report = FolderReport(dataset)
    for result in evaluate_folder(folder, reader):
        report.add(result)
    e2e = report.to_json()
    keep = (
        "photos",
        "dice",
        "correct",
        "wrong",
        "rejected",
        "missed",
        "accuracy",
        "accuracy_interval",
        "wrong_rate_upper",
        "reject_ratio",
        "median_ms",
        "per_face",
    )
    return {k: e2e[k] for k in keep if k in e2e}


def read_unit(folder: Path, model_dir: Path, dataset: str, *, compare: bool = False) -> dict[str, Any]:
    """The unit's figures: ``end_to_end`` (eval's JSON) and ``boxed`` (:func:`boxed_figures`).

    ``compare``: also ``by_reader``, end to end with every die read by its head, and by its fitted
    reader (:func:`forced`), when the fit trained any.
    """
    model = TaughtModel(model_dir)
    out: dict[str, Any] = {
        "end_to_end": _end_to_end(folder, model, dataset),
        "boxed": boxed_figures(folder, model),
        "taught_ms_per_die": _taught_ms(model, folder),
        "readers": {d.id: d.reader for d in model.dice},
    }
    if compare and any(model.has_fitted(d) for d in model.dice):
        out["by_reader"] = {r: _end_to_end(folder, forced(model, r), dataset) for r in ("head", "fitted")}
    return out


def _taught_ms(model: TaughtModel, folder: Path) -> float | None:
    """Median ms for one taught die's head to read one crop, one thread (the cost of teaching)."""
    import time

    import cv2

    entries = list(read_manifest(folder))[:20]
    if not entries:
        return None
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        times = []
        taught = model.dice[0]
        for e in entries:
            frame = load_image_info(e.image).frame
            h, w = frame.shape[:2]
            box = e.dice[0].box or (0.0, 0.0, float(w), float(h))
            t0 = time.perf_counter()
            model.read(taught, frame, [box])
            times.append((time.perf_counter() - t0) * 1000.0)
        return round(float(np.median(times)), 2)
    finally:
        cv2.setNumThreads(threads)
