"""Score readings against labelled photos: matching, outcomes and per-folder metrics.

Matching (one-to-one): each labelled die is matched to the nearest read die whose centre
lies within half the labelled die's size (``max(width, height) / 2``) of the label's box
centre. Pairs are taken nearest first over the whole photo, so two labels never share one
read die. A label without a box means the whole photo is that die. Centres are compared,
not overlaps, because some datasets box the pip area only (matteop65-d6-wood).

A read die has one or two centres (:attr:`DieReading.centres`): its box's, and, when its
pips were located (``vision.faces.topface``), the read face's; the nearer one counts. Why: seen at
an angle, a die's top face lies off its outline's centre, and a dataset may box the whole die
(byler-d6) or the pip area only (matteop65-d6-wood, where a 1 is boxed by its one pip): both
mark the same die.

Each labelled die then has one outcome:

``correct``   read with the labelled kind and face;
``wrong``     read with another face (or kind): *confidently wrong*, the costly error;
``rejected``  found but reported unreadable (the tower re-rolls: costs time, not truth);
``missed``    no read die matched (the photo failed to load counts here too).

Read dice that match no label are ``false_positives``; ``false_positives_read`` counts those
reported with a face (a phantom die in the roll, where an unreadable one only costs a re-roll:
for example a d20's numeral read as a d6's 1 on photos of d20s). Labelled dice marked ``cocked`` are
scored apart (``cocked``: rejected is the right answer, a face read is an error) and are not
in ``dice``.

The per-face reject-rate ratio is ``max(rate) / min(rate)`` over the faces of a kind, each
rate floored at :data:`REJECT_RATE_FLOOR`: a reader that rejects one face more often than
another skews the faces it keeps, and the floor stops a 0-vs-0.4% difference on small
counts from reading as an infinite skew. On 30-45 dice a face that ratio is mostly chance, so
``reject_bias_p`` (:func:`reject_bias_p`) says beside it whether the rejects depend on the
face at all: a permutation test's p-value, small for a face-biased reader.

Beside the rates, ``accuracy_interval`` and ``wrong_rate_upper`` say how far they could move on
other photos like these (:mod:`dicetower.vision.eval.intervals`), resampling whole groups of
near-duplicate photos (:func:`photo_group`), since dice of one photo are read well or badly together.
"""

from __future__ import annotations

import math
import statistics
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import VisionError
from ..imageio import ImageError, load_image, load_image_info
from ..manifest import LabelledDie, ManifestEntry, check_boxes, read_manifest
from ..reading import DiceReader, DieReading, Reading, ReadStatus
from .errata import Erratum, apply_errata
from .intervals import rate_interval, rate_upper
from .splits import d20_split, d20_splits, group_of, split_of

__all__ = [
    "GIVE_UP_AFTER",
    "REJECT_RATE_FLOOR",
    "EvalError",
    "FolderReport",
    "Outcome",
    "PhotoResult",
    "Scored",
    "evaluate_folder",
    "label_box",
    "match_dice",
    "reject_bias_p",
    "reject_ratio",
    "reject_ratios",
    "score_photo",
    "select_entries",
]

#: A reader that raises on each of the first this-many photos is broken: eval stops.
GIVE_UP_AFTER = 5
#: Reject rates below this count as this much in the per-face ratio (see module docstring).
REJECT_RATE_FLOOR = 0.01
#: Shuffles behind :func:`reject_bias_p`: its p-value's standard error is at most 0.011.
BIAS_SHUFFLES = 2000

Box = tuple[float, float, float, float]


class EvalError(VisionError, ValueError):
    """An eval that cannot run as asked (e.g. a split requested without the splits module)."""


class Outcome(StrEnum):
    CORRECT = "correct"
    WRONG = "wrong"
    REJECTED = "rejected"
    MISSED = "missed"


@dataclass(frozen=True)
class Scored:
    """One labelled die, the read die matched to it (if any) and the outcome."""

    label: LabelledDie
    box: Box  #: the label's box in frame pixels
    read: DieReading | None
    outcome: Outcome

    @property
    def right(self) -> bool:
        """Correct, or for a cocked die, rejected."""
        return self.outcome is (Outcome.REJECTED if self.label.cocked else Outcome.CORRECT)

    @property
    def verdict(self) -> str:
        """The outcome's name, prefixed ``cocked_`` for a cocked die (file names, overlays)."""
        return f"cocked_{self.outcome.value}" if self.label.cocked else self.outcome.value

    @property
    def read_text(self) -> str:
        """What the reader said, for the confusion matrix: a face, ``rejected`` or ``missed``."""
        if self.outcome is Outcome.MISSED or self.read is None:
            return "missed"
        if self.outcome is Outcome.REJECTED:
            return "rejected"
        kind = "" if self.read.kind == self.label.die else f"{self.read.kind}:"
        return f"{kind}{self.read.face}"


@dataclass(frozen=True)
class PhotoResult:
    """Everything eval knows about one photo."""

    entry: ManifestEntry
    reading: Reading | None  #: None when the photo could not be loaded or the reader failed
    scored: tuple[Scored, ...]
    false_positives: tuple[DieReading, ...]
    ms: float | None  #: time of the read call only
    error: str | None = None

    @property
    def failed(self) -> bool:
        """True when anything in the photo was not right (a photo worth saving for review)."""
        return self.error is not None or bool(self.false_positives) or any(not s.right for s in self.scored)


def label_box(die: LabelledDie, width: int, height: int, scale: float = 1.0) -> Box:
    """The label's box in frame pixels (photo pixels times ``scale``); whole frame if unboxed."""
    if die.box is None:
        return (0.0, 0.0, float(width), float(height))
    x, y, w, h = die.box
    return (x * scale, y * scale, w * scale, h * scale)


def _centre(box: Box) -> tuple[float, float]:
    return (box[0] + box[2] / 2, box[1] + box[3] / 2)


def match_dice(
    label_boxes: Sequence[Box], read_centres: Sequence[Sequence[tuple[float, float]]]
) -> tuple[list[int | None], list[int]]:
    """Match labels to read dice (module docstring); return (read index per label, unmatched reads).

    ``read_centres[j]`` holds read die ``j``'s centres (:attr:`DieReading.centres`); the
    nearest of them is its distance to a label.
    """
    pairs: list[tuple[float, int, int]] = []
    for i, lb in enumerate(label_boxes):
        lx, ly = _centre(lb)
        radius = max(lb[2], lb[3]) / 2
        for j, centres in enumerate(read_centres):
            d = min(math.hypot(rx - lx, ry - ly) for rx, ry in centres)
            if d <= radius:
                pairs.append((d, i, j))
    pairs.sort()
    matched: list[int | None] = [None] * len(label_boxes)
    used: set[int] = set()
    for _, i, j in pairs:
        if matched[i] is None and j not in used:
            matched[i] = j
            used.add(j)
    return matched, [j for j in range(len(read_centres)) if j not in used]


def _outcome(label: LabelledDie, read: DieReading | None) -> Outcome:
    if read is None:
        return Outcome.MISSED
    if read.status is ReadStatus.UNREADABLE or read.face is None:
        return Outcome.REJECTED
    if read.face == label.face and read.kind == label.die:
        return Outcome.CORRECT
    return Outcome.WRONG


def score_photo(
    entry: ManifestEntry,
    reading: Reading | None,
    scale: float = 1.0,
    ms: float | None = None,
    error: str | None = None,
) -> PhotoResult:
    """Match ``reading`` (boxes in frame pixels) to ``entry``'s labels (photo pixels x ``scale``)."""
    width = reading.width if reading is not None else 0
    height = reading.height if reading is not None else 0
    boxes = [label_box(d, width, height, scale) for d in entry.dice]
    read_dice = reading.dice if reading is not None else ()
    matched, extra = match_dice(boxes, [r.centres for r in read_dice])
    scored = []
    for label, box, j in zip(entry.dice, boxes, matched, strict=True):
        read = read_dice[j] if j is not None else None
        scored.append(Scored(label, box, read, _outcome(label, read)))
    return PhotoResult(entry, reading, tuple(scored), tuple(read_dice[j] for j in extra), ms, error)


def reject_ratio(per_face: dict[str, dict[str, Any]]) -> float:
    """max/min per-face reject rate, rates floored at :data:`REJECT_RATE_FLOOR` (1.0 if < 2 faces)."""
    rates = np.array([v["reject_rate"] for v in per_face.values() if v["dice"]], np.float64)
    return float(reject_ratios(rates[None, :])[0])


def reject_ratios(rates: np.ndarray) -> np.ndarray:
    """:func:`reject_ratio` of each row of per-face reject rates ``(N, faces)``, at once.

    One rule for the eval and for simulations of it (``vision.training.ratio_noise``).
    """
    if rates.shape[-1] < 2:
        return np.ones(rates.shape[:-1])
    floored = np.maximum(rates, REJECT_RATE_FLOOR)
    return floored.max(axis=-1) / floored.min(axis=-1)


def reject_bias_p(per_face: dict[str, dict[str, Any]], shuffles: int = BIAS_SHUFFLES) -> float:
    """How often rejects spread over the faces by chance alone look as uneven as these (a p-value).

    Why beside :func:`reject_ratio`: at 30-45 dice a face, one rejected die is 2-3 %, over 1.5x
    the floor, so the ratio of an unbiased reader is mostly chance
    (``python -m dicetower.vision.training.d6.ratio_noise`` measures how much). This asks the
    question the ratio stands for, whether rejects depend on the face, with a permutation test:
    the dice's reject flags are shuffled over the faces (their counts kept), and the p-value is
    the share of shuffles whose chi-square statistic is at least the observed one. A small
    p-value (under 0.05, say) is evidence of a face-biased reader; a large one says the counts
    cannot tell. Seeded, so a report is reproducible; 1.0 with fewer than two faces or no rejects.
    """
    faces = [v for v in per_face.values() if v["dice"]]
    n = np.array([v["dice"] for v in faces], np.int64)
    r = np.array([v["rejected"] for v in faces], np.int64)
    if len(n) < 2 or r.sum() == 0 or r.sum() == n.sum():
        return 1.0
    expected = n * (r.sum() / n.sum())

    def chi2(rejected: np.ndarray) -> np.ndarray:
        """Chi-square of the faces x (rejected, not) table; the not-rejected cells mirror these."""
        return ((rejected - expected) ** 2 * (1 / expected + 1 / (n - expected))).sum(axis=-1)

    # Shuffling the flags over the faces draws each face's reject count from the multivariate
    # hypergeometric: drawn directly, in O(faces) a shuffle, whatever the number of dice.
    shuffled = np.random.default_rng(0).multivariate_hypergeometric(n, int(r.sum()), size=shuffles)
    observed = chi2(r.astype(float))
    return float(((chi2(shuffled.astype(float)) >= observed - 1e-9).sum() + 1) / (shuffles + 1))


def photo_group(dataset: str, entry: ManifestEntry) -> str:
    """The group of near-duplicate photos ``entry`` belongs to, for the intervals (:mod:`.intervals`).

    The split's groups (:func:`dicetower.vision.eval.splits.group_of`: a run of webcam frames, a photo
    and its augmented copies); every photo of any other folder is its own group.
    """
    return group_of(dataset, entry.relpath or entry.image.name)


def _ratio(n: int, d: int) -> float:
    return n / d if d else 0.0


def _counts_json(c: Counter[str]) -> dict[str, Any]:
    dice = sum(c[o.value] for o in Outcome)
    return {
        "dice": dice,
        "correct": c["correct"],
        "wrong": c["wrong"],
        "rejected": c["rejected"],
        "missed": c["missed"],
        "accuracy": round(_ratio(c["correct"], dice), 5),
        "wrong_rate": round(_ratio(c["wrong"], dice), 5),
        "reject_rate": round(_ratio(c["rejected"], dice), 5),
    }


@dataclass
class FolderReport:
    """Running totals for one dataset folder; :meth:`to_json` is the ``--json`` object."""

    dataset: str
    photos: int = 0
    false_positives: int = 0
    false_positives_read: int = 0
    errors: int = 0
    error_examples: list[str] = field(default_factory=list)
    totals: Counter[str] = field(default_factory=Counter)
    per_kind_face: dict[str, dict[int, Counter[str]]] = field(default_factory=dict)
    confusion: dict[str, dict[str, Counter[str]]] = field(default_factory=dict)
    cocked: Counter[str] = field(default_factory=Counter)
    #: Rejected labelled dice by the reader's reason (``low_confidence``, ``unfamiliar`` ...).
    reasons: Counter[str] = field(default_factory=Counter)
    ms: list[float] = field(default_factory=list)
    #: Per group of near-duplicate photos (:func:`photo_group`): outcome counts, for the intervals.
    groups: dict[str, Counter[str]] = field(default_factory=dict)
    #: Outcomes per frame view (``Reading.view``: which threshold set read the dice); frames
    #: not read, or read by a reader that judges no view, count as ``none``.
    per_view: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, result: PhotoResult) -> None:
        self.photos += 1
        group = self.groups.setdefault(photo_group(self.dataset, result.entry), Counter())
        self.false_positives += len(result.false_positives)
        self.false_positives_read += sum(d.face is not None for d in result.false_positives)
        if result.error is not None:
            self.errors += 1
            if len(self.error_examples) < 5:
                self.error_examples.append(result.error)
        if result.ms is not None:
            self.ms.append(result.ms)
        view = str(result.reading.view) if result.reading is not None and result.reading.view else "none"
        for s in result.scored:
            if s.label.cocked:
                self.cocked[s.outcome.value] += 1
                continue
            self.totals[s.outcome.value] += 1
            if s.outcome is Outcome.REJECTED:
                reason = s.read.reason if s.read is not None else None
                self.reasons[reason.value if reason is not None else "none"] += 1
            group[s.outcome.value] += 1
            self.per_view.setdefault(view, Counter())[s.outcome.value] += 1
            faces = self.per_kind_face.setdefault(s.label.die, {})
            faces.setdefault(s.label.face, Counter())[s.outcome.value] += 1
            row = self.confusion.setdefault(s.label.die, {}).setdefault(str(s.label.face), Counter())
            row[s.read_text] += 1

    @property
    def dice(self) -> int:
        return sum(self.totals.values())

    def to_json(self) -> dict[str, Any]:
        totals = _counts_json(self.totals)
        per_face = {
            kind: {str(f): _counts_json(c) for f, c in sorted(faces.items())}
            for kind, faces in sorted(self.per_kind_face.items())
        }
        per_kind = {}
        for kind, faces in per_face.items():
            kc: Counter[str] = Counter()
            for c in self.per_kind_face[kind].values():
                kc.update(c)
            per_kind[kind] = {
                **_counts_json(kc),
                "reject_ratio": round(reject_ratio(faces), 3),
                "reject_bias_p": round(reject_bias_p(faces), 3),
            }
        ratios = [v["reject_ratio"] for v in per_kind.values()]
        bias_ps = [v["reject_bias_p"] for v in per_kind.values()]
        dice = [sum(g[o.value] for o in Outcome) for g in self.groups.values()]
        right = [g[Outcome.CORRECT.value] for g in self.groups.values()]
        wrong = [g[Outcome.WRONG.value] for g in self.groups.values()]
        return {
            "dataset": self.dataset,
            "photos": self.photos,
            **totals,
            "groups": sum(n > 0 for n in dice),
            "accuracy_interval": [round(x, 5) for x in rate_interval(right, dice)],
            "wrong_rate_upper": round(rate_upper(wrong, dice), 5),
            "false_positives": self.false_positives,
            "false_positives_read": self.false_positives_read,
            "errors": self.errors,
            "error_examples": list(self.error_examples),
            "reject_ratio": max(ratios) if ratios else 1.0,
            "reject_bias_p": min(bias_ps) if bias_ps else 1.0,
            "median_ms": round(statistics.median(self.ms), 2) if self.ms else None,
            "p90_ms": round(float(np.percentile(self.ms, 90)), 2) if self.ms else None,
            "per_kind": per_kind,
            "per_face": per_face,
            "per_view": {view: _counts_json(c) for view, c in sorted(self.per_view.items())},
            "confusion": {
                kind: {face: dict(sorted(row.items())) for face, row in sorted(rows.items(), key=_row_order)}
                for kind, rows in sorted(self.confusion.items())
            },
            "cocked": {
                "dice": sum(self.cocked.values()),
                "rejected": self.cocked["rejected"],
                "read": self.cocked["correct"] + self.cocked["wrong"],
                "missed": self.cocked["missed"],
            },
            "rejected_by_reason": dict(sorted(self.reasons.items())),
        }


def _row_order(item: tuple[str, Any]) -> tuple[int, str]:
    key = item[0]
    return (int(key), key) if key.lstrip("-").isdigit() else (1 << 30, key)


def select_entries(
    folder: Path,
    *,
    split: str | None = None,
    limit: int | None = None,
    kinds: Iterable[str] | None = None,
    errata: Sequence[Erratum] = (),
) -> list[ManifestEntry]:
    """The manifest entries eval will use, in file order.

    ``errata`` (:mod:`dicetower.vision.eval.errata`) correct labels first, on the whole manifest.

    ``split`` keeps photos of that split (:func:`dicetower.vision.eval.splits.split_of`; for
    ``rsandrini-d20``, whole videos: :func:`~dicetower.vision.eval.splits.d20_splits`); ``kinds`` drops
    labels of other die kinds and photos left without labels; ``limit`` keeps that many
    photos spread evenly over the manifest, since manifests are often sorted by face. A photo
    with a die not yet named (a teach folder, ``docs/teach.md``) is left out: it cannot be scored.
    """
    every = list(read_manifest(folder, unnamed=True))
    entries = [e for e in every if all(d.face is not None for d in e.dice)]
    if every and not entries:
        raise EvalError(
            f"{folder}: the dice of its {len(every)} photos are not yet named (a teach folder):"
            " name them first (dicetower teach name, or the /teach page of dicetower serve)"
        )
    if errata:
        entries = apply_errata(entries, list(errata))
    if split is not None:
        name = folder.resolve().name
        if name.startswith("rsandrini") and all(e.dice for e in entries):
            # video frames: whole videos (background and face) go to one split
            videos = d20_splits((e.relpath or e.image.name, e.dice[0].face) for e in entries)
            entries = [
                e for e in entries if d20_split(videos, e.relpath or e.image.name, e.dice[0].face) == split
            ]
        else:
            entries = [e for e in entries if split_of(name, e.relpath or e.image.name) == split]
    if kinds is not None:
        keep = set(kinds)
        filtered = []
        for e in entries:
            dice = tuple(d for d in e.dice if d.die in keep)
            if dice:
                filtered.append(replace(e, dice=dice))
        entries = filtered
    if limit is not None and 0 <= limit < len(entries):
        n = len(entries)
        entries = [entries[(i * n) // limit] for i in range(limit)]
    return entries


def evaluate_folder(
    folder: str | Path,
    reader: DiceReader,
    *,
    entries: Sequence[ManifestEntry] | None = None,
    give_up_after: int | None = GIVE_UP_AFTER,
) -> Iterator[PhotoResult]:
    """Read every photo of ``entries`` (default: the whole manifest) and yield its scored result.

    A photo that fails to load, or on which the reader raises, becomes a result with
    ``error`` set and all its dice missed: one bad file never ends an eval. But a reader that
    raises on each of the first ``give_up_after`` photos it is given (a missing model, say)
    is broken, not unlucky: that raises :class:`EvalError` instead of scoring zeros. A label
    whose box lies outside its photo raises :class:`~dicetower.vision.manifest.ManifestError`.
    """
    folder = Path(folder)
    if entries is None:
        entries = select_entries(folder)
    refs: dict[Path, np.ndarray] = {}
    read_ok, read_failed = False, 0
    for entry in entries:
        try:
            info = load_image_info(entry.image)
            reference = None
            if entry.reference is not None:
                if entry.reference not in refs:
                    if len(refs) > 64:  # bounded cache: references are shared by few photos
                        refs.clear()
                    refs[entry.reference] = load_image(entry.reference)
                reference = refs[entry.reference]
        except ImageError as exc:
            yield score_photo(entry, None, error=str(exc))
            continue
        check_boxes(entry, *info.original_size)  # a label off the photo is a manifest error
        start = time.perf_counter()
        try:
            reading = reader.read(info.frame, reference)
        except Exception as exc:  # a reader bug on one photo is reported, not fatal
            message = f"{entry.image}: reader failed: {type(exc).__name__}: {exc}"
            read_failed += 1
            if not read_ok and give_up_after is not None and read_failed >= give_up_after:
                why = f"the reader failed on each of the first {read_failed} photos; last: {message}"
                raise EvalError(why) from exc
            yield score_photo(entry, None, error=message)
            continue
        read_ok = True
        ms = (time.perf_counter() - start) * 1000.0
        if not reading.width or not reading.height:
            h, w = info.frame.shape[:2]
            reading = replace(reading, width=w, height=h)
        yield score_photo(entry, reading, info.scale, ms)
