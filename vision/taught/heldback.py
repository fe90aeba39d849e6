"""The held-back photos read end to end, as ``dicetower eval --taught`` reads them: thresholds and the card.

Why one path: a threshold set on crops cut at a labelled box (or on a whole photo taken as a die)
is used later on dice the locator found, in photos with tray around them, where the head sees
other framings and other things (a tray plate boxed as a die). So the fit writes the held-back
photos as a manifest folder (:func:`write_held_back`), reads them with
:func:`~.reader.open_taught_reader` through :func:`~dicetower.vision.eval.evaluate.evaluate_folder`
(locate, tell the dice apart, read, abstain, fall back), and sets each die's threshold and its
fallback on what that read (:func:`calibrate`).

The read is made once, with every head answering (threshold 0, no fallback): which located die
each head read, its face and confidence. A die's threshold is then just above the surest answer
of its head that was not right: a wrong face, or a die read where no labelled die lies (a false
find). The general answer is asked, as the reader asks it, about the dice its head leaves under
that threshold; the die falls back on it when it read some right and none wrong. The final
readings are those the shipped model gives (the same functions the reader calls), scored with
eval's own scoring, so ``dicetower eval HELD_BACK --taught MODEL`` prints the card's counts.
A labelled die the locator did not find counts as missed: not right.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..eval.evaluate import FolderReport, PhotoResult, evaluate_folder, score_photo
from ..eval.intervals import binomial_bounds, binomial_upper
from ..imageio import ImageError, load_image_info
from ..kinds import label_of
from ..manifest import LabelledDie, ManifestEntry, write_manifest_line
from ..reading import DieReading, Reading
from .fallback import GeneralAnswer, can_fall_back, needs_answer
from .model import TaughtDieCard, TaughtModel, TaughtRead, judged
from .reader import TaughtFrameReader, open_taught_reader, taught_die_reading
from .teaching import die_id

__all__ = [
    "HELD_BACK_DIR",
    "MIN_THRESHOLD",
    "THRESHOLD_MARGIN",
    "Calibration",
    "HeldBackRead",
    "calibrate",
    "read_held_back",
    "write_held_back",
]

#: The held-back photos' manifest folder inside a taught model (``dicetower eval MODEL/held-back``).
HELD_BACK_DIR = "held-back"
#: No threshold is set below this.
MIN_THRESHOLD = 0.95
#: Above the surest answer that was not right by this much.
THRESHOLD_MARGIN = 0.01


def _link(src: Path, dst: Path) -> None:
    """A hard link where the file system allows one (a Pi's card holds the photos once), else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def write_held_back(entries: Sequence[ManifestEntry], taught: set[str], out: Path) -> int:
    """Write the held-back photos to ``out`` as a manifest folder; returns the photos written.

    Each line keeps the labels of the taught dice (by :func:`~.teaching.die_id`) as the folder gave
    them, box or none; the photo and its empty-tray reference are linked in under ``images/``.
    """
    if out.exists():
        shutil.rmtree(out)
    (out / "images").mkdir(parents=True)
    refs: dict[Path, str] = {}
    written = 0
    with open(out / "manifest.jsonl", "w", encoding="utf-8") as fh:
        for e in entries:
            dice = [
                replace(d, crop="")
                for d in e.dice
                if d.face is not None and die_id(label_of(d.die), d.colour) in taught
            ]
            if not dice or not e.image.is_file():
                continue
            rel = f"images/{e.line:06d}-{e.image.name}"
            _link(e.image, out / rel)
            ref = None
            if e.reference is not None and e.reference.is_file():
                if e.reference not in refs:
                    refs[e.reference] = f"images/tray-{len(refs) + 1}-{e.reference.name}"
                    _link(e.reference, out / refs[e.reference])
                ref = refs[e.reference]
            write_manifest_line(fh, rel, dice, ref)
            written += 1
    return written


@dataclass
class HeldBackRead:
    """One held-back photo as read with every head answering, and what each head read."""

    result: PhotoResult
    heads: dict[int, tuple[str, TaughtRead]]  #: reading index -> (taught die, its head's answer)
    general: dict[int, DieReading]  #: reading index -> the general reader's reading of that die


class _Recording:
    """The taught reader, keeping each frame's head answers beside the reading eval scores."""

    def __init__(self, reader: TaughtFrameReader) -> None:
        self.reader = reader
        self.heads: list[dict[int, tuple[str, TaughtRead]]] = []
        self.general: list[dict[int, DieReading]] = []

    def read(self, frame: Any, reference: Any = None) -> Reading:
        self.heads.append({})
        self.general.append({})
        reading = self.reader.read(frame, reference)
        self.heads[-1] = dict(self.reader.last_heads)
        self.general[-1] = dict(self.reader.last_general)
        return reading


def read_held_back(folder: Path, model: TaughtModel) -> tuple[TaughtFrameReader, list[HeldBackRead]]:
    """Read ``folder`` (written by :func:`write_held_back`) with ``model``, as eval opens it.

    ``model``'s dice should have threshold 0 and no fallback, so every head answers.
    """
    reader = open_taught_reader(model)
    recording = _Recording(reader)
    reads: list[HeldBackRead] = []
    for result in evaluate_folder(folder, recording):  # type: ignore[arg-type]
        # a photo with a reading was just read: the last heads are its own
        read = result.reading is not None
        reads.append(
            HeldBackRead(result, recording.heads[-1] if read else {}, recording.general[-1] if read else {})
        )
    return reader, reads


def _index(reading: Reading) -> dict[int, int]:
    return {id(d): i for i, d in enumerate(reading.dice)}


def _labels(read: HeldBackRead) -> dict[int, LabelledDie | None]:
    """Reading index -> the label it was matched to (None: a false find), for the dice heads read."""
    reading = read.result.reading
    if reading is None:
        return {}
    where = _index(reading)
    out: dict[int, LabelledDie | None] = {i: None for i in read.heads}
    for s in read.result.scored:
        if s.read is not None and where[id(s.read)] in out:
            out[where[id(s.read)]] = s.label
    return out


def _right(label: LabelledDie | None, kind: str, face: int | None) -> bool:
    return label is not None and face is not None and label.face == face and label.die == kind


def _threshold(confidences: list[float]) -> float:
    surest = max(confidences, default=0.0)
    return min(1.0, max(MIN_THRESHOLD, surest + THRESHOLD_MARGIN))


@dataclass
class Calibration:
    """What the held-back read chose and measured."""

    thresholds: dict[str, float]
    fallback: dict[str, dict[str, Any]]  #: per die: ``used``, ``asked``, ``right``, ``wrong``
    report: FolderReport  #: the held-back photos as the shipped model reads them (eval's figures)
    per_die: dict[str, dict[str, Any]]


def _final(
    reads: list[HeldBackRead],
    cards: dict[str, TaughtDieCard],
    answers: dict[tuple[int, int], TaughtRead],
) -> list[PhotoResult]:
    """Each photo's result as the shipped model reads it: heads at their thresholds, then the fallback."""
    out = []
    for n, read in enumerate(reads):
        result = read.result
        if result.reading is None or not read.heads:
            out.append(result)
            continue
        dice = list(result.reading.dice)
        for i, (identity, head) in read.heads.items():
            card = cards[identity]
            final = judged(head.face, head.confidence, card.threshold) if head.face is not None else head
            if final.face is None and card.fallback and (n, i) in answers and answers[n, i].face is not None:
                final = answers[n, i]
            dice[i] = taught_die_reading(dice[i], card, final)
        reading = replace(result.reading, dice=tuple(dice))
        scale = load_image_info(result.entry.image).scale
        out.append(score_photo(result.entry, reading, scale, result.ms, result.error))
    return out


def _ask_general(
    reader: TaughtFrameReader,
    reads: list[HeldBackRead],
    cards: dict[str, TaughtDieCard],
    answer: GeneralAnswer | None,
) -> dict[tuple[int, int], TaughtRead]:
    """The general answer for each die its head leaves unsure, asked per frame and die as reading asks."""
    out: dict[tuple[int, int], TaughtRead] = {}
    reader.fallback = answer
    for n, read in enumerate(reads):
        reading = read.result.reading
        if reading is None:
            continue
        by_die: dict[str, list[int]] = {}
        for i, (identity, head) in sorted(read.heads.items()):
            card = cards[identity]
            asked = can_fall_back(card.kind) and not (needs_answer(card.kind) and answer is None)
            if asked and head.confidence < card.threshold:
                by_die.setdefault(identity, []).append(i)
        if not by_die:
            continue
        try:
            frame = load_image_info(read.result.entry.image).frame
        except ImageError:
            continue
        for identity, indices in by_die.items():
            card = replace(cards[identity], fallback=True)
            heads = [TaughtRead(None, read.heads[i][1].confidence, None) for i in indices]
            general = [read.general[i] for i in indices]
            got = reader.fall_back(card, frame, [reading.dice[i].box for i in indices], heads, general)
            for i, g in zip(indices, got, strict=True):
                out[n, i] = g
    return out


def _die_figures(results: list[PhotoResult], identity: str, card: TaughtDieCard) -> dict[str, Any]:
    """One die's held-back figures from the final results: its labelled dice, and the dice it read."""
    report = FolderReport(identity)
    read_by = sure = false_finds = 0
    for r in results:
        mine = tuple(s for s in r.scored if die_id(label_of(s.label.die), s.label.colour) == identity)
        report.add(replace(r, scored=mine, false_positives=()))
    counts = report.totals
    n = report.dice
    right, wrong = counts["correct"], counts["wrong"]
    lo, hi = binomial_bounds(right, n) if n else (0.0, 1.0)
    per_face: dict[str, Any] = {}
    rates = []
    for face in card.faces:
        c = report.per_kind_face.get(card.kind, {}).get(face)
        if not c or not sum(c.values()):
            continue
        k = sum(c.values())
        not_read = c["rejected"] + c["missed"]
        rates.append(max(not_read / k, 0.01))
        per_face[str(face)] = {"crops": k, "rejected": not_read, "reject_rate": round(not_read / k, 4)}
    return {
        "dice": n,
        "right": right,
        "wrong": wrong,
        "unreadable": n - right - wrong,
        "rejected": counts["rejected"],
        "missed": counts["missed"],
        "right_rate": round(right / n, 4) if n else None,
        "right_interval": [round(lo, 4), round(hi, 4)],
        "wrong_upper": round(binomial_upper(wrong, n), 4) if n else 1.0,
        "reject_ratio": round(max(rates) / min(rates), 2) if rates else None,
        "per_face": per_face,
        "read_by_die": read_by,
        "sure": sure,
        "false_finds": false_finds,
    }


def calibrate(
    reader: TaughtFrameReader,
    reads: list[HeldBackRead],
    dice: Sequence[TaughtDieCard],
    answer: GeneralAnswer | None,
) -> Calibration:
    """Each die's threshold and fallback, chosen on the held-back read, and the figures they give."""
    cards = {d.id: d for d in dice}
    not_right: dict[str, list[float]] = {d.id: [] for d in dice}
    for read in reads:
        labels = _labels(read)
        for i, (identity, head) in read.heads.items():
            if not _right(labels.get(i), cards[identity].kind, head.face):
                not_right[identity].append(head.confidence)
    cards = {k: replace(c, threshold=_threshold(not_right[k])) for k, c in cards.items()}
    answers = _ask_general(reader, reads, cards, answer)
    fallback: dict[str, dict[str, Any]] = {}
    for identity, card in cards.items():
        if not can_fall_back(card.kind) or (needs_answer(card.kind) and answer is None):
            continue
        asked = right = wrong = 0
        for n, read in enumerate(reads):
            labels = _labels(read)
            for i, (who, _head) in read.heads.items():
                if who != identity or (n, i) not in answers:
                    continue
                asked += 1
                g = answers[n, i]
                if g.face is None:
                    continue
                if _right(labels.get(i), card.kind, g.face):
                    right += 1
                else:
                    wrong += 1
        used = right > 0 and wrong == 0
        fallback[identity] = {"used": used, "asked": asked, "right": right, "wrong": wrong}
        cards[identity] = replace(card, fallback=fallback[identity]["used"])
    results = _final(reads, cards, answers)
    report = FolderReport(HELD_BACK_DIR)
    for r in results:
        report.add(r)
    per_die = {identity: _die_figures(results, identity, card) for identity, card in cards.items()}
    for read in reads:  # how often each die's head was sure of the dice it read: what drift sees
        labels = _labels(read)
        for i, (identity, head) in read.heads.items():
            f = per_die[identity]
            f["read_by_die"] += 1
            f["sure"] += head.confidence >= cards[identity].threshold
            f["false_finds"] += labels.get(i) is None
    for identity, f in per_die.items():
        lo, hi = binomial_bounds(f["sure"], f["read_by_die"]) if f["read_by_die"] else (0.0, 1.0)
        f["sure_interval"] = [round(lo, 4), round(hi, 4)]
        if identity in fallback:
            f["fallback"] = fallback[identity]
    thresholds = {k: c.threshold for k, c in cards.items()}
    return Calibration(thresholds, fallback, report, per_die)
