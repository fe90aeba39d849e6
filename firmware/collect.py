"""``teach collect``'s loop: throws for teaching into a teach folder, stopping early when done.

Each throw is :meth:`~.tower.Tower.throw_for_teaching` (the cycle's solenoid limits, settle and
bounded retries, no face needed) and goes into the folder whole
(:class:`~dicetower.vision.taught.folder.TeachFolder`): photo, crops, side files, then the
manifest line. A failed throw is reported and the next one
tried; :data:`MAX_FAILED_IN_A_ROW` failures in a row stop the run, since an unattended tower that
keeps failing (a die out of the tray, a jam) needs a person.

Before the first throw the tray is photographed empty (the tower's calibration, taken when a
simulated or replay tower opens, and by ``dicetower tower calibrate`` on a real one), and every
line names the empty tray its photo is read against. After each throw the tray's light around the
dice is compared with that photo's (:func:`~dicetower.vision.running_tray.light_drifted`); when it
moved, the tray is photographed empty again where the camera can show it, and otherwise the
running median of the recent throws (:class:`~dicetower.vision.running_tray.RunningTray`) takes its
place. Either is kept beside the first (``images/empty-2.png``) and named by the lines after it.

Every ``check_every`` rolls the run asks whether ``teach fit`` could accept the folder, and stops
once it could:

- the latest share ``teach fit`` holds back must hold enough dice for its wrong-rate bound
  (:mod:`dicetower.vision.taught.enough`, the fit's own bound): with none read wrong, 299 dice
  to show at most 1 %. Until then the rolls left are logged and nothing is grouped;
- every die must have a group of ``min_per_face`` crops for each of its faces, estimated by
  grouping the crops so far (:mod:`dicetower.vision.taught.coverage`). A die cannot be done
  before it has that many crops for every face, so no grouping is spent until each die has; a
  die found done stays done (more crops do not unsee a face).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import cv2
import numpy as np

from ..vision.reading import ReadStatus
from ..vision.running_tray import RunningTray, light_drifted
from ..vision.taught.coverage import DieCoverage, die_coverage
from ..vision.taught.enough import dice_to_show, rolls_to_show
from ..vision.taught.features import Backbone, NetworkSpec
from ..vision.taught.fit import HOLD_BACK, MAX_WRONG
from ..vision.taught.folder import NewDie, TeachFolder, truth_faces
from ..vision.taught.grouped import FolderDie, folder_crops, group_die
from .errors import ThrowFailedError

if TYPE_CHECKING:
    from .tower import Tower

__all__ = ["MAX_EMPTY_TRAYS", "MAX_FAILED_IN_A_ROW", "CollectResult", "Collector", "Stop"]

#: Failed throws in a row that stop an unattended collect.
MAX_FAILED_IN_A_ROW = 5
#: Empty-tray photos one collect takes again at most (a flickering lamp must not fill the card).
MAX_EMPTY_TRAYS = 50


class Stop(StrEnum):
    """Why a collect ended."""

    ROLLS = "rolls"  #: every roll asked for was made
    EARLY = "early"  #: enough held back for fit's bound, every face seen often enough (estimated)
    INTERRUPTED = "interrupted"  #: Ctrl-C or SIGTERM
    FAILURES = "failures"  #: too many failed throws in a row


@dataclass
class CollectResult:
    """What a collect did: throws kept and failed, why it ended, the last estimate of faces seen."""

    written: int = 0
    failed: int = 0
    stop: Stop = Stop.ROLLS
    coverage: list[DieCoverage] = field(default_factory=list)
    last_failure: str = ""
    #: rolls still needed, at the last check, for fit's held-back wrong-rate bound (0: enough)
    rolls_for_bound: int | None = None
    #: The empty trays taken again when the light drifted, as the folder names them.
    empty_trays: list[str] = field(default_factory=list)


class Collector:
    """Throws the ``tower``'s dice into ``folder``; :meth:`run` does ``rolls`` of them.

    ``hold_back`` and ``max_wrong`` are what ``teach fit`` will use (its defaults unless told):
    the early stop waits for enough held-back dice to show that wrong rate. ``log`` gets one line
    per failed throw and per check (stderr by default).
    """

    def __init__(
        self,
        tower: Tower,
        folder: TeachFolder,
        *,
        min_per_face: int,
        check_every: int,
        hold_back: float = HOLD_BACK,
        max_wrong: float = MAX_WRONG,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.tower, self.folder = tower, folder
        self.min_per_face, self.check_every = min_per_face, check_every
        self.hold_back, self.max_wrong = hold_back, max_wrong
        self.log = log or (lambda line: print(f"dicetower: {line}", file=sys.stderr))
        self.backbones: dict[NetworkSpec, Backbone] = {}
        self.done: dict[str, DieCoverage] = {}
        self.recent = RunningTray()
        self.empty_trays: list[str] = []

    def throw(self, n: int) -> None:
        """One throw for teaching, kept in the folder (raises :class:`ThrowFailedError`)."""
        record = self.tower.throw_for_teaching(reason=f"teach collect {n}")
        assert record.reading is not None
        dice = record.reading.dice
        new = [NewDie(t.kind, t.colour, d.box, t.crop) for d, t in zip(dice, record.teach, strict=True)]
        truth = truth_faces([d.box for d in dice], record.truth) if record.truth is not None else None
        hints = [d.face if d.status is ReadStatus.READ else None for d in dice]
        self.folder.add(record.photo, new, truth=truth, hints=hints)
        if record.photo:
            frame = cv2.imdecode(np.frombuffer(record.photo, np.uint8), cv2.IMREAD_COLOR)
            if frame is not None:
                self.watch_light(frame, [d.box for d in dice])

    def watch_light(self, frame: np.ndarray, boxes: Sequence[Sequence[float]]) -> str | None:
        """After a throw: take the empty tray again when the light around the dice drifted.

        Returns the folder's name for the new empty tray, or None when the light held (or no new
        one could be had: the camera cannot show the tray empty and too few recent throws).
        """
        self.recent.add(frame, boxes)
        cal = self.tower.calibration
        if cal is None or cal.reference.shape != frame.shape or len(self.empty_trays) >= MAX_EMPTY_TRAYS:
            return None
        if not light_drifted(frame, cal.reference, boxes):
            return None
        if self.tower.camera.can_show_empty_tray:
            reference = self.tower.calibrate(tray=cal.tray).reference
            how = "photographed the empty tray again"
        else:
            median = self.recent.reference(frame)
            if median is None:
                return None
            reference = cal.reference = median
            how = f"took the median of the last {len(self.recent)} throws for the empty tray"
        name = self.folder.use_reference(reference)
        self.empty_trays.append(name)
        self.log(f"the light on the tray changed: {how} ({name})")
        return name

    def run(self, rolls: int, step: Callable[[int], None] | None = None) -> CollectResult:
        """Up to ``rolls`` throws; ``step(i)`` after each. Ctrl-C ends the run, the folder whole."""
        result = CollectResult()
        in_a_row = 0
        try:
            for i in range(1, rolls + 1):
                try:
                    self.throw(self.folder.next_roll)
                except ThrowFailedError as exc:
                    result.failed += 1
                    in_a_row += 1
                    result.last_failure = f"{exc.reason}: {exc}"
                    self.log(f"throw {i}: failed ({result.last_failure})")
                    return_dice = getattr(self.tower.camera, "return_dice", None)
                    if return_dice is not None:
                        return_dice()
                    if in_a_row >= MAX_FAILED_IN_A_ROW:
                        result.stop = Stop.FAILURES
                        break
                    continue
                in_a_row = 0
                result.written += 1
                if step is not None:
                    step(i)
                if self.check_every and result.written % self.check_every == 0:
                    result.rolls_for_bound = self.rolls_for_bound()
                    if result.rolls_for_bound:
                        self.log(
                            f"fit holds back enough dice to show at most {self.max_wrong:.1%} wrong "
                            f"({dice_to_show(self.max_wrong)}) only after about "
                            f"{result.rolls_for_bound} more rolls: carrying on"
                        )
                        continue
                    coverage = self.check()
                    if coverage:
                        result.coverage = coverage
                        if all(c.done for c in coverage):
                            result.stop = Stop.EARLY
                            break
        except KeyboardInterrupt:
            result.stop = Stop.INTERRUPTED
        result.empty_trays = list(self.empty_trays)
        return result

    def rolls_for_bound(self) -> int:
        """Rolls until the latest share fit holds back can show at most ``max_wrong`` wrong (0: now)."""
        return rolls_to_show(self.folder.lines, len(self.tower.dice), self.hold_back, self.max_wrong)

    def check(self) -> list[DieCoverage]:
        """Each die's faces seen often enough, estimated by grouping; empty while some die is short
        of ``min_per_face`` crops for each face (it cannot be done yet, and grouping costs seconds)."""
        dice = folder_crops(self.folder.root)
        if any(len(d.crops) < len(d.faces) * self.min_per_face for d in dice):
            return []
        out = []
        for die in dice:
            cover = self.done.get(die.id) or self.coverage(die)
            if cover.done:
                self.done[die.id] = cover
            out.append(cover)
        seen = ", ".join(f"{c.id} {c.seen}/{len(c.faces)}" for c in out)
        self.log(f"faces seen at least {self.min_per_face} times (estimated by grouping): {seen}")
        return out

    def coverage(self, die: FolderDie, groups: list[list[int]] | None = None) -> DieCoverage:
        """``die``'s faces seen often enough, from ``groups`` (grouped now when None)."""
        if groups is None:
            groups = group_die(self.folder.root, die, self.backbones)
        return die_coverage(self.folder.root, die, groups, self.min_per_face)
