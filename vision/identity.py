"""Say which configured die each physical die is: by kind and body colour, then left to right.

Why: the rules need to know the dice apart, not only their faces. Runic Flux's Wild Die is
"the red one"; WCRPG's d% reads a tens die and a units die. The tower's config names its dice
set, e.g. ``{"wild": ("d6", "red"), "skill": ("d6", "white"), "tens": ("d10t", "blue")}``, and
this module matches every read die to one name of that set, or to none.

- **Colour under the tray light's tint.** A warm lamp turns a white die cream and a blue one
  purple. The empty-tray reference photo, taken under the same light, shows the tint: the tray
  is neutral (or of the known ``tray_colour``), so per-channel gains that bring the reference's
  median back to it white-balance each die crop before its colour is named
  (:func:`white_balance_gains`). Names are :mod:`.colour`'s, hue only: a translucent blue die is
  ``blue`` here.
- **Kind** is the reading's (``d6`` for pip and numeral d6, ``d10``, ``d10t``, ``d20``); a set's
  ``d6n`` is a ``d6``.
- **Names are bands, dice sit near their edges.** A pale red die under a cool light is named
  white; a light grey one, white. So each kind's read dice and configured dice are paired at the
  least total colour difference (:func:`assign`): a die named its configured colour costs 0, a
  die :data:`NEAR_DELTA_E` or nearer to a configured colour's band (:func:`~.colour.name_distances`)
  costs that distance, and farther is no pairing at all. A white die is never a missing red die's
  stand-in; a pale red one is the wild die when the white die is the skill die.
- **Two of one kind and colour** are told apart only by position: the configured names of that
  (kind, colour), in the set's order, go to those dice from left to right (by box centre). A die
  with no configured name left is ``None`` (it matches none), and so is a die that is unreadable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .colour import body_hsv_batch, colour_name, name_distances
from .errors import VisionError
from .faces.pips import crop_die
from .kinds import label_of
from .reading import DieReading, ReadStatus, UnreadableReason

__all__ = [
    "NEAR_DELTA_E",
    "DiceSetError",
    "Identified",
    "assign",
    "balance",
    "identify",
    "identify_loaded",
    "kind_is_sure",
    "white_balance_gains",
]

#: A dice set larger than this is refused (bounds the matching work and config mistakes).
MAX_SET = 64
#: Gains are clamped to this range: a reference that is no tray (a hand over the camera) must
#: not turn every die a wild colour.
GAIN_RANGE = (0.4, 2.5)
#: A die left unmatched by its colour's name takes a configured name whose colour it is this
#: near (CIE76 delta E to the nearest colour of that name, :func:`~.colour.name_distances`).
NEAR_DELTA_E = 15.0
#: The cost of a pairing the colours forbid: more than every allowed pairing of a whole set
#: together, so the fewest forbidden pairs come first, yet small enough that the potentials keep
#: the tie-break's precision. And the weight of the left-to-right tie-break (far below any
#: colour difference).
_FORBIDDEN = 10.0 * MAX_SET * NEAR_DELTA_E
_TIE = 1e-6
#: A pairing of a die with a loaded die of another kind (:func:`identify_loaded`): more than every
#: colour distance of a whole set together, so it is made only when nothing else is left.
_UNPAIRED = 1e9


class DiceSetError(VisionError, ValueError):
    """A configured dice set that cannot be used; names the entry."""


@dataclass(frozen=True)
class Identified:
    """One read die and the configured name it matched (``None``: none)."""

    index: int  #: the die's index in the reading
    name: str | None
    kind: str
    colour: str  #: the white-balanced colour name the match used


def _check_set(dice_set: Mapping[str, tuple[str, str]]) -> list[tuple[str, str, str]]:
    if len(dice_set) > MAX_SET:
        raise DiceSetError(f"a dice set has at most {MAX_SET} dice, got {len(dice_set)}")
    out = []
    for name, spec in dice_set.items():
        if not isinstance(name, str) or not name:
            raise DiceSetError(f"dice set: a die needs a non-empty name, got {name!r}")
        if not (isinstance(spec, tuple | list) and len(spec) == 2 and all(isinstance(s, str) for s in spec)):
            raise DiceSetError(f"dice set: {name!r} must be (kind, colour), got {spec!r}")
        out.append((name, spec[0], spec[1]))
    return out


def white_balance_gains(
    reference: np.ndarray | None, tray_colour: tuple[int, int, int] | None = None
) -> np.ndarray:
    """Per-channel BGR gains that turn the reference tray's median colour into ``tray_colour``.

    ``tray_colour`` is the tray's BGR under neutral light; ``None`` means a neutral tray (grey,
    black, white: its own mean level). No reference: gains of one (no correction).
    """
    if reference is None or reference.ndim != 3 or reference.shape[2] < 3:
        return np.ones(3, np.float32)
    small = reference[:: max(1, reference.shape[0] // 64), :: max(1, reference.shape[1] // 64), :3]
    med = np.median(small.reshape(-1, 3).astype(np.float32), axis=0) + 1.0
    target = np.array(tray_colour, np.float32) + 1.0 if tray_colour is not None else np.full(3, med.mean())
    return np.clip(target / med, *GAIN_RANGE).astype(np.float32)


def balance(crop: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """``crop`` (BGR) with :func:`white_balance_gains` applied."""
    return np.clip(crop[..., :3].astype(np.float32) * gains, 0, 255).astype(np.uint8)


def identify(
    dice: Sequence[DieReading],
    dice_set: Mapping[str, tuple[str, str]],
    frame: np.ndarray | None = None,
    reference: np.ndarray | None = None,
    *,
    tray_colour: tuple[int, int, int] | None = None,
) -> list[Identified]:
    """Match each of ``dice`` to a name of ``dice_set`` (module docstring); one result per die.

    With ``frame`` the colours are named again from white-balanced crops (gains from
    ``reference``); without it each die's own ``hsv`` is used as read.
    """
    entries = _check_set(dice_set)
    if frame is not None and dice:
        gains = white_balance_gains(reference, tray_colour)
        crops = [balance(crop_die(frame, d.box, size=32), gains) for d in dice]
        hsvs = [hsv for hsv, _spread in body_hsv_batch(crops)]
        colours = [colour_name(hsv) for hsv in hsvs]
    else:
        hsvs = [d.hsv for d in dice]
        colours = [colour_name(hsv) for hsv in hsvs]
    readable = [i for i, d in enumerate(dice) if d.status is ReadStatus.READ]
    names: dict[int, str] = {}
    for kind in {label_of(dice[i].kind) for i in readable}:
        members = _left_to_right(dice, [i for i in readable if label_of(dice[i].kind) == kind])
        wanted = [(name, colour) for name, k, colour in entries if label_of(k) == kind]
        if not wanted:
            continue
        cost = np.full((len(members), len(wanted)), _FORBIDDEN)
        for r, i in enumerate(members):
            near = name_distances(hsvs[i])
            for c, (_name, colour) in enumerate(wanted):
                d = 0.0 if colour == colours[i] else near.get(colour, np.inf)
                if d <= NEAR_DELTA_E:
                    # the tie-break keeps dice of one kind and colour in the set's order left to right
                    cost[r, c] = d + _TIE * (r - c) ** 2
        for r, c in assign(cost):
            if cost[r, c] < _FORBIDDEN:
                names[members[r]] = wanted[c][0]
    return [Identified(i, names.get(i), d.kind, colours[i]) for i, d in enumerate(dice)]


def kind_is_sure(die: DieReading) -> bool:
    """Is the reader sure of ``die``'s kind, whatever it made of the face?

    A read die, and a numeral die named surely whose face was unsure, are. A die the numeral
    network could not name (``kind_unsure``) is not, and neither is an unreadable ``d6``: that is
    the pip reader's answer for any die it was handed, numeral dice included.
    """
    if die.status is ReadStatus.READ:
        return True
    return die.reason is UnreadableReason.LOW_CONFIDENCE and label_of(die.kind) != "d6"


def identify_loaded(dice: Sequence[DieReading], loaded: Sequence[tuple[str, str]]) -> list[int | None]:
    """Which of the ``loaded`` dice (kind, colour) each read die is, faces read or not.

    Why not :func:`identify`: teaching photographs dice the reader has not learnt, whose faces
    (and sometimes kinds) it cannot read, and whose count is already checked against the loaded
    dice. So every die takes part: a die's kind rules out loaded dice of another kind only where the
    reader is sure of it (:func:`kind_is_sure`); colour then decides, by the least total distance to
    the loaded colours' names with no threshold (the nearest die is the one). Returns the index into
    ``loaded`` per die; None where a die's sure kind has no loaded die left (a d10 seen where only a
    d20 is left: the reading does not show the loaded dice).
    """
    if not dice or not loaded:
        return [None] * len(dice)
    far = NEAR_DELTA_E * MAX_SET  # no name at all: the farthest a colour counts
    cost = np.full((len(dice), len(loaded)), _UNPAIRED)
    for r, d in enumerate(dice):
        near = name_distances(d.hsv)
        sure = kind_is_sure(d)
        for c, (kind, colour) in enumerate(loaded):
            if sure and label_of(d.kind) != label_of(kind):
                continue
            cost[r, c] = 0.0 if colour == d.colour else min(near.get(colour, far), far)
    out: list[int | None] = [None] * len(dice)
    for r, c in assign(cost):
        if cost[r, c] < _UNPAIRED:
            out[r] = c
    return out


def assign(cost: np.ndarray) -> list[tuple[int, int]]:
    """The rows and columns paired at least total ``cost`` (every row of the smaller side paired).

    The Hungarian method (Kuhn-Munkres, potentials form) in O(n^2 m): a tray's dice and its
    configured set are small (:data:`MAX_SET`), so this plain loop is fast enough. Every cost must
    be finite (a ``ValueError`` otherwise): a NaN compares false with everything, so the search for
    the next column would never find one. Each row's search visits every column at most once, and
    stops with a ``ValueError`` rather than loop past that.
    """
    rows, cols = cost.shape
    if rows == 0 or cols == 0:
        return []
    if not np.isfinite(cost).all():
        raise ValueError("assign: the costs must be finite numbers (NaN or infinity given)")
    if rows > cols:
        return [(r, c) for c, r in assign(cost.T)]
    inf = float("inf")
    u, v = [0.0] * (rows + 1), [0.0] * (cols + 1)
    match = [0] * (cols + 1)  # match[column] = row (1-based; 0: free)
    way = [0] * (cols + 1)
    for r in range(1, rows + 1):
        match[0], c0 = r, 0
        least, used = [inf] * (cols + 1), [False] * (cols + 1)
        for _step in range(cols + 1):  # each step uses one more column: at most cols + 1 of them
            if match[c0] == 0:
                break
            used[c0] = True
            r0, delta, c1 = match[c0], inf, 0
            for c in range(1, cols + 1):
                if not used[c]:
                    cur = float(cost[r0 - 1, c - 1]) - u[r0] - v[c]
                    if cur < least[c]:
                        least[c], way[c] = cur, c0
                    if least[c] < delta:
                        delta, c1 = least[c], c
            for c in range(cols + 1):
                if used[c]:
                    u[match[c]] += delta
                    v[c] -= delta
                else:
                    least[c] -= delta
            c0 = c1
        else:
            raise ValueError("assign: no free column found (the costs are not comparable)")
        while c0:
            c1 = way[c0]
            match[c0] = match[c1]
            c0 = c1
    return sorted((match[c] - 1, c - 1) for c in range(1, cols + 1) if match[c])


def _left_to_right(dice: Sequence[DieReading], members: list[int]) -> list[int]:
    return sorted(members, key=lambda i: (dice[i].centre[0], dice[i].centre[1]))
