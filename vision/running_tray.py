"""The empty tray from the recent throws: a running per-pixel median, and a check that the light held.

Why: the locator finds dice by what differs from the empty tray (:func:`~.locate.locate_dice`'s
``reference``). A calibration photo is exact until the light changes or the camera moves; the
per-pixel median of *all* photos of a rig whose camera moved over months is a blur. Dice land
somewhere else on every throw, so at each pixel most of the last few photos show the tray: the
median of the throws just before a photo is the tray as it is now. :class:`RunningTray` keeps
them (bounded, at the coarse size the difference is worked at) and gives that median, or none
when it cannot be the tray:

- fewer than :data:`MIN_THROWS` photos of this size so far (a die that landed on one spot twice
  would stay in it);
- a spot lay under a die in more than :data:`MAX_COVERED` of them (dice placed by hand, crops of
  one centred die, a jammed die): the median would show the die;
- the recent photos differ from their own median over more than :data:`UNSTEADY` of their
  pixels: the camera moves from photo to photo;
- the light changed by more than :data:`LIGHT_DRIFT` since the last photo, or the photo differs
  from the median over more than :data:`SCENE_CHANGED` of its pixels (the camera moved): the
  median shows another scene, and the history starts again from this photo.

:func:`tray_light` is the small check of the light: the tray's lightness in a ring around the
dice, now against the reference. ``teach collect`` photographs the empty tray again when it
moved more than :data:`LIGHT_DRIFT`.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence

import cv2
import numpy as np

from .locate import FG_SIDE, as_bgr, foreground_small
from .reading import DiceReader, Reading

__all__ = [
    "LIGHT_DRIFT",
    "MAX_COVERED",
    "MIN_THROWS",
    "RECENT_THROWS",
    "SCENE_CHANGED",
    "UNSTEADY",
    "RunningTray",
    "RunningTrayReader",
    "TrayChoice",
    "light_drifted",
    "tray_light",
]

#: Throws the running median is taken over: on a real d20 rig the median of the 15 throws
#: before each photo showed the die as a die-sized blob in 90 of 92 sampled later photos.
RECENT_THROWS = 15
#: Fewer photos than this give no median.
MIN_THROWS = 5
#: A spot under a found die in more than this share of the recent photos leaves too few photos
#: that show the tray there (crops of one centred die, dice placed by hand, a jammed die). The
#: median leaves the found dice out, so one photo that shows the tray at a spot is enough: at 15
#: photos this lets a spot be covered in 14. Five d6 in the simulated 105 mm tray keep some spot
#: covered in every one of their first 8 throws, and in 86-93 % of the last 15 after that.
MAX_COVERED = 0.95
#: A photo whose pixels differ from the median over more than this share shows another scene.
SCENE_CHANGED = 0.25
#: The recent photos' median share of tray pixels (away from the dice found) that differ from
#: their own median: above it the camera or the light moves from photo to photo (a hand-held
#: phone), and no median is the tray. Over the first 100 photos in capture order, a fixed camera
#: (``byler-d6``) gives 0 at the median and 5 % at the upper quartile (its scene changes), a
#: hand-held one (``matteop65-d6-wood``) 4 % at the lowest twentieth and 16 % at the median.
UNSTEADY = 0.04
#: The tray's lightness around the dice may move by this share of the reference's before the
#: empty tray is photographed again. A bound, not a measured edge: against a stale photo the
#: locator still found every die of the simulated trays (150 pip d6 in 30 throws with the light
#: halved or falling off by 60 % across the tray; 120 mixed dice in 24 throws at 60 % light or
#: a 40 % falloff), as its coarse mask cancels an even change; 15 % leaves room for a real
#: room's uneven changes.
LIGHT_DRIFT = 0.15
#: The ring around a die that :func:`tray_light` reads: from this many die sides out ...
_RING_IN = 0.75
#: ... to this many (about a die's width of tray all round).
_RING_OUT = 1.5
#: The latest photos the steadiness check compares with their median (each costs a coarse mask).
_STEADY_CHECKED = 5
#: A found die's box is grown by this much about its centre to cover its shadow in the median.
_SHADOW = 1.3


def _small(frame: np.ndarray) -> tuple[np.ndarray, float]:
    h, w = frame.shape[:2]
    s = min(1.0, FG_SIDE / max(h, w))
    if s >= 1.0:
        return frame, 1.0
    size = (max(1, round(w * s)), max(1, round(h * s)))
    return cv2.resize(frame, size, interpolation=cv2.INTER_AREA), s


def _lightness(small: np.ndarray) -> float:
    """The median CIE L (8-bit scale) of a photo: dice cover little of it."""
    return float(np.median(cv2.cvtColor(small, cv2.COLOR_BGR2LAB)[:, :, 0]))


def _changed(small: np.ndarray, median: np.ndarray, dice: np.ndarray | None = None) -> float:
    """The share of ``small``'s pixels that differ from ``median`` (both at the small size), over
    the pixels not under a found die when ``dice`` (a mask) is given."""
    mask, _ = foreground_small(small, median)
    if dice is None:
        return float(np.count_nonzero(mask)) / mask.size
    tray = ~dice
    return float(np.count_nonzero(mask[tray])) / max(1, int(np.count_nonzero(tray)))


def _median_without_dice(frames: np.ndarray, dice: np.ndarray) -> np.ndarray:
    """The per-pixel median of ``frames`` (N x H x W x 3) over the photos with no die there.

    Why not the plain median: dice thrown into a tray gather in its middle, where a plain median
    of 15 throws can show one. Leaving out the pixels under the dice found in each photo leaves
    the tray. A pixel under a die in every photo takes the plain median. Sorting with the dice's
    pixels pushed past 255 costs about what ``np.median`` does; ``np.nanmedian`` is 7x slower.
    """
    under = np.moveaxis(dice, 0, -1)  # H x W x N
    under = under & ~under.all(axis=-1, keepdims=True)  # under a die in every photo: the plain median
    values = np.moveaxis(frames, 0, -1).astype(np.uint16)  # H x W x 3 x N: a contiguous sort
    values[np.broadcast_to(under[:, :, None, :], values.shape)] = 256
    values.sort(axis=-1)
    at = (frames.shape[0] - under.sum(axis=-1) - 1) // 2
    at = np.broadcast_to(at[:, :, None, None], (*values.shape[:3], 1))
    return np.take_along_axis(values, at, axis=-1)[..., 0].astype(np.uint8)


class RunningTray:
    """The per-pixel median of the last ``throws`` photos, each kept at most FG_SIDE across.

    Call :meth:`reference` with a photo before reading it, then :meth:`add` it with the boxes of
    the dice found in it. Memory is bounded by ``throws`` small frames (about 5 MB for 15). ::

        tray = RunningTray()
        for frame in photos:
            reading = reader.read(frame, tray.reference(frame))
            tray.add(frame, [d.box for d in reading.dice])
    """

    def __init__(self, throws: int = RECENT_THROWS, *, min_throws: int = MIN_THROWS) -> None:
        if not 1 <= min_throws <= throws:
            raise ValueError(f"min_throws must be 1..{throws}, got {min_throws}")
        self.throws, self.min_throws = throws, min_throws
        self._frames: deque[np.ndarray] = deque(maxlen=throws)
        #: Each kept photo's dice (True under a found die's box, grown a little for its shadow).
        self._dice: deque[np.ndarray] = deque(maxlen=throws)
        self._shape: tuple[int, ...] | None = None
        self._light = 0.0  #: the median CIE L of the last kept photo
        #: Why the last :meth:`reference` gave none ("" when it gave one).
        self.why_none = ""

    def __len__(self) -> int:
        return len(self._frames)

    def clear(self) -> None:
        """Forget every photo (the camera moved, another tray)."""
        self._frames.clear()
        self._dice.clear()
        self._shape = None

    def add(self, frame: np.ndarray, boxes: Sequence[Sequence[float]] = ()) -> None:
        """Keep ``frame`` (BGR) and its dice's ``boxes`` ([x, y, w, h] in its pixels)."""
        frame = as_bgr(frame)
        if self._shape != frame.shape:
            self.clear()
            self._shape = frame.shape
        small, scale = _small(frame)
        sh, sw = small.shape[:2]
        dice = np.zeros((sh, sw), bool)
        for x, y, bw, bh in boxes:
            cx, cy, half = (x + bw / 2) * scale, (y + bh / 2) * scale, _SHADOW * max(bw, bh) * scale / 2
            dice[
                max(0, int(cy - half)) : max(0, int(cy + half) + 1),
                max(0, int(cx - half)) : max(0, int(cx + half) + 1),
            ] = True
        self._frames.append(small)
        self._dice.append(dice)
        self._light = _lightness(small)

    def covered(self) -> float:
        """The largest share of the kept photos in which one pixel lies under a found die."""
        if not self._dice:
            return 0.0
        return float(np.mean(np.stack(self._dice), axis=0).max())

    def median(self) -> np.ndarray | None:
        """The median of the kept photos at their small size, or None (``why_none`` says why)."""
        if len(self._frames) < self.min_throws:
            self.why_none = f"{len(self._frames)} photos so far; the median takes {self.min_throws}"
            return None
        covered = self.covered()
        if covered > MAX_COVERED:
            self.why_none = f"a die lay on one spot in {covered:.0%} of the recent photos"
            return None
        med = _median_without_dice(np.stack(self._frames), np.stack(self._dice))
        latest = list(zip(self._frames, self._dice, strict=True))[-_STEADY_CHECKED:]
        unsteady = float(np.median([_changed(f, med, d) for f, d in latest]))
        if unsteady > UNSTEADY:
            self.why_none = (
                f"the recent photos differ from their median over {unsteady:.0%}: the camera moves"
            )
            return None
        self.why_none = ""
        return med

    def reference(self, frame: np.ndarray) -> np.ndarray | None:
        """The empty tray to read ``frame`` against, at ``frame``'s size, or None (``why_none``).

        A photo of another size, or of another scene than the median shows, starts the history
        again (it is added by :meth:`add` as usual).
        """
        frame = as_bgr(frame)
        if self._shape != frame.shape:
            self.clear()
            self.why_none = "the first photo of this size"
            return None
        small, _s = _small(frame)
        light = _lightness(small)
        if abs((light + 1.0) / (self._light + 1.0) - 1.0) > LIGHT_DRIFT:
            self.clear()
            self.why_none = "the light changed since the last photo"
            return None
        med = self.median()
        if med is None:
            return None
        changed = _changed(small, med)
        if changed > SCENE_CHANGED:
            self.clear()
            self.why_none = f"{changed:.0%} of the photo differs from the recent ones: another scene"
            return None
        h, w = frame.shape[:2]
        return cv2.resize(med, (w, h), interpolation=cv2.INTER_LINEAR) if med.shape[:2] != (h, w) else med


def _ring_mask(shape: tuple[int, int], boxes: Sequence[Sequence[float]], scale: float) -> np.ndarray:
    """Pixels (of a ``shape`` image, ``scale`` times the boxes' frame) in a ring around each die."""
    h, w = shape
    ring = np.zeros((h, w), np.uint8)
    dice = np.zeros((h, w), np.uint8)
    for x, y, bw, bh in boxes:
        cx, cy, side = (x + bw / 2) * scale, (y + bh / 2) * scale, max(bw, bh) * scale
        for target, reach in ((ring, _RING_OUT), (dice, _RING_IN)):
            x0, y0 = max(0, int(cx - reach * side)), max(0, int(cy - reach * side))
            x1, y1 = min(w, int(cx + reach * side) + 1), min(h, int(cy + reach * side) + 1)
            if x1 > x0 and y1 > y0:
                target[y0:y1, x0:x1] = 255
    return (ring > 0) & (dice == 0)


def tray_light(frame: np.ndarray, reference: np.ndarray, boxes: Sequence[Sequence[float]]) -> float:
    """The tray's lightness around the dice in ``frame`` over the same pixels of ``reference``.

    1.0 when the light held; 0.8 when the tray is a fifth darker. Lightness is the median CIE L
    over a ring around each die's box (``boxes`` in ``frame`` pixels), where the tray shows in both
    photos, or over the whole photo when no die was found. Both photos are the same size.
    """
    frame, reference = as_bgr(frame), as_bgr(reference, "reference")
    if frame.shape != reference.shape:
        raise ValueError(
            f"frame is {frame.shape[1]}x{frame.shape[0]} but the reference is "
            f"{reference.shape[1]}x{reference.shape[0]}"
        )
    f, s = _small(frame)
    r, _ = _small(reference)
    where = _ring_mask(f.shape[:2], boxes, s) if boxes else np.ones(f.shape[:2], bool)
    if np.count_nonzero(where) < 16:
        where = np.ones(f.shape[:2], bool)
    fl = cv2.cvtColor(f, cv2.COLOR_BGR2LAB)[:, :, 0][where]
    rl = cv2.cvtColor(r, cv2.COLOR_BGR2LAB)[:, :, 0][where]
    return (float(np.median(fl)) + 1.0) / (float(np.median(rl)) + 1.0)


def light_drifted(frame: np.ndarray, reference: np.ndarray, boxes: Sequence[Sequence[float]]) -> bool:
    """Whether the tray's light around the dice moved more than :data:`LIGHT_DRIFT` from ``reference``."""
    return abs(tray_light(frame, reference, boxes) - 1.0) > LIGHT_DRIFT


class TrayChoice:
    """Which empty tray each photo is read against, remembering the recent photos to choose.

    The given empty-tray photo (the tower's calibration, a manifest line's ``reference``) while
    the light on the tray holds (:data:`LIGHT_DRIFT`, judged over the whole photo: dice cover
    little of it); else the running median of the recent photos (:class:`RunningTray`); else
    the given photo, drifted (the locator cancels an even change of brightness), or none.
    :attr:`source` says which the last :meth:`pick` chose: ``"photo"``, ``"running"``,
    ``"drifted photo"`` or ``"none"``.
    """

    def __init__(self, throws: int = RECENT_THROWS, *, min_throws: int = MIN_THROWS) -> None:
        self.running = RunningTray(throws, min_throws=min_throws)
        self.source = "none"
        #: How many photos each source was picked for.
        self.counts: Counter[str] = Counter()

    def pick(self, frame: np.ndarray, photo: np.ndarray | None = None) -> np.ndarray | None:
        """The empty tray to read ``frame`` against, given the empty-tray ``photo`` if there is one."""
        usable = photo is not None and photo.shape == frame.shape
        drifted = usable and light_drifted(frame, photo, ())  # type: ignore[arg-type]
        if usable and not drifted:
            self.source = "photo"
            return photo
        running = self.running.reference(frame)
        if running is not None:
            self.source = "running"
            return running
        self.source = "drifted photo" if usable else "none"
        return photo if usable else None

    def seen(self, frame: np.ndarray, boxes: Sequence[Sequence[float]]) -> None:
        """Remember ``frame`` and where its dice were found, for the running median."""
        self.running.add(frame, boxes)


class RunningTrayReader:
    """A :class:`~.reading.DiceReader` that reads each frame against the empty tray :class:`TrayChoice` picks.

    Why a wrapper: ``dicetower eval``, the protocols and the tower read through any reader (the
    general one, a taught one); each reads photos in the order they were taken, so the running
    median of the photos before this one is at hand. Frames must come in capture order. ::

        reader = RunningTrayReader(open_reader())
        for frame in photos_in_order:
            reading = reader.read(frame)
    """

    def __init__(self, reader: DiceReader, throws: int = RECENT_THROWS) -> None:
        self.reader = reader
        self.choice = TrayChoice(throws)

    def read(
        self, frame: np.ndarray, reference: np.ndarray | None = None, tray: np.ndarray | None = None
    ) -> Reading:
        frame = as_bgr(frame)
        reading = self.reader.read(frame, self.choice.pick(frame, reference), tray)
        self.choice.counts[self.choice.source] += 1
        self.choice.seen(frame, [d.box for d in reading.dice])
        return reading
