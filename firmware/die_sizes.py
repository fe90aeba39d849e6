"""Are the loaded dice big enough in the photo to be read? The imaging budget, checked on the tower.

Why: the camera's height and lens decide how many pixels a die spans, and below a kind's
imaging budget (:attr:`~dicetower.vision.kinds.DieKind.min_px`, measured by
``bench/imaging_budget.py``) the reader reads fewer of its dice, or refuses them as ``too_small``.
A tower built with the camera too high, or with the wide lens, then throws and re-throws without
saying why. ``dicetower tower calibrate`` photographs the loaded tray once and says, per kind,
how wide its dice are against what the reader needs, with what to change.

A die's width is its box's longer side in the frame, the measure the budget is given in; a kind's
width is the median over its dice in the photo. Beside it the check says what the built tower
shows (:func:`~dicetower.vision.tower_scale.box_px`, hardware/spec.toml's scale: a d6's side square
to the frame up to √2 of it turned) and warns when the dice are well off that range, so a builder
compares the photo with one figure, not with the documents. Which loaded die a read die is comes from kind
and colour (:func:`~dicetower.vision.identity.identify_loaded`), so a die too small for its kind
to be read is still counted as the kind the config loads.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..vision.identity import identify_loaded
from ..vision.kinds import min_px_of
from ..vision.tower_scale import FRAME_WIDTH, box_px

if TYPE_CHECKING:
    from ..vision.reading import Reading
    from .dice_set import TrayDie
    from .tower import Tower

__all__ = ["SCALE_SLACK", "DieSize", "check_die_sizes", "die_sizes", "report_die_sizes"]

#: How far past the tower's range a kind's width may be before the check says the camera moved:
#: the reading's box takes in a pixel or two of edge and shadow, and a die may lean.
SCALE_SLACK = 0.1


@dataclass(frozen=True)
class DieSize:
    """How wide one kind's dice are in the photo, and how wide the reader needs them."""

    kind: str  #: as the config names it: ``d6``, ``d10``, ``d10t``, ``d20``
    px: float  #: the median of its dice's box longer sides
    need: float  #: the kind's imaging budget (0: none measured)
    seen: int  #: how many of its dice the photo showed
    #: the built tower's range for the kind's box (:func:`~dicetower.vision.tower_scale.box_px`)
    expect: tuple[float, float] | None = None

    @property
    def ok(self) -> bool:
        return self.px >= self.need

    @property
    def on_scale(self) -> bool:
        """Within the tower's range, give or take :data:`SCALE_SLACK` (True where none is known)."""
        if self.expect is None:
            return True
        lo, hi = self.expect
        return lo * (1 - SCALE_SLACK) <= self.px <= hi * (1 + SCALE_SLACK)

    def describe(self) -> str:
        """``d6 dice: 86 px across (the tower shows 70-100; the reader needs 21)``."""
        shows = "" if self.expect is None else f"the tower shows {self.expect[0]:.0f}-{self.expect[1]:.0f}; "
        return f"{self.kind} dice: {self.px:.0f} px across ({shows}the reader needs {self.need:.0f})"

    def scale_warning(self) -> str:
        """What moved when the dice are off the tower's scale: the camera's height, or the lens."""
        lo, hi = self.expect or (self.px, self.px)
        if self.px < lo:
            why = "smaller: the camera is higher than tower.scad puts it, or the lens wider"
        else:
            why = "larger: the camera is lower than tower.scad puts it, or the sensor mode crops"
        return f"{self.kind} dice are {self.px:.0f} px across, the tower shows {lo:.0f}-{hi:.0f}; {why}"

    def warning(self) -> str:
        """What to change when the dice are too small: the camera nearer, or a narrower lens."""
        what = "pips" if self.kind == "d6" else "numerals"
        return (
            f"{self.kind} dice are {self.px:.0f} px across; {what} need {self.need:.0f} px: "
            "lower the camera or use the standard lens"
        )


def die_sizes(reading: Reading, tray: Sequence[TrayDie], *, width: int = FRAME_WIDTH) -> list[DieSize]:
    """Each loaded kind's width in ``reading`` of a ``width``-pixel frame, in the tray's order of kinds.

    Kinds not seen are left out.
    """
    pairs = identify_loaded(reading.dice, [(d.kind, d.colour) for d in tray])
    widths: dict[str, list[float]] = {d.kind: [] for d in tray}
    for die, loaded in zip(reading.dice, pairs, strict=True):
        if loaded is not None:
            widths[tray[loaded].kind].append(max(float(die.box[2]), float(die.box[3])))
    return [
        DieSize(kind, statistics.median(px), min_px_of(kind), len(px), box_px(kind, width))
        for kind, px in widths.items()
        if px
    ]


def check_die_sizes(tower: Tower) -> list[DieSize]:
    """Photograph the loaded tray once (no shake) and measure its dice (:func:`die_sizes`)."""
    frame = tower.capture()
    return die_sizes(tower.read(frame), tower.dice, width=int(frame.shape[1]))


def report_die_sizes(tower: Tower, *, ask: bool) -> list[DieSize]:
    """``tower calibrate``'s check: each loaded kind's width on stdout, a warning line per kind too small.

    A camera that cannot show its empty tray was just calibrated on an empty one: with ``ask`` the
    person is asked to load the dice first (Enter), without it the check is skipped and said so.
    """
    if not tower.camera.can_show_empty_tray:
        if not ask:
            print("die sizes not checked (--yes: the tray is empty); calibrate without --yes to check them")
            return []
        print("Load the dice, then press Enter to check their size (Ctrl-C to stop).", file=sys.stderr)
        sys.stdin.readline()
    sizes = check_die_sizes(tower)
    if not sizes:
        print("die sizes not checked: no dice in the photo")
    for size in sizes:
        print(f"  {size.describe()}")
        if not size.ok:
            print(f"dicetower: warning: {size.warning()}", file=sys.stderr)
        elif not size.on_scale:
            print(f"dicetower: warning: {size.scale_warning()}", file=sys.stderr)
    return sizes
