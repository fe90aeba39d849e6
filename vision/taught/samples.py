"""A taught die's examples as a network reads them: the fitted ones at many turns, the held-back as read.

What the head is fitted on must be what it reads later, turned every way a die lands:

- pips and numerals: each fitted crop at every :data:`WHOLE_TURN` degrees; a held-back crop, as
  reading takes it, once, at the turn it landed;
- glyphs: each crop's middle searched every :data:`~.features.TURN_STEP` degrees for the turn at
  which the general network is surest of one of the kind's numerals (:func:`~.features.upright_turns`);
  a fitted crop gives that turn and the turns beside it, since reading (:func:`upright_read`)
  searches coarser and lands up to half of :data:`FINE_TURN` off; a held-back crop is read
  exactly as reading reads it.

Telling the dice apart (:mod:`.telling`) needs fewer turns of each fitted crop (every
:data:`TELL_TURN` degrees): once a die's own heads are fitted, :meth:`SampleCache.release` keeps only
those rows of its whole-die features, in half precision, and drops the rest. Why: a 700-roll
folder's fitted numeral features at every turn are over 100 MB a die; held for every die until
the telling head is fitted, they were most of the fit's memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..faces.pips import crop_die
from .features import TURN_STEP, Backbone, Network, network_crops, upright_turns
from .teaching import Example, TaughtDie, split_at

__all__ = [
    "COARSE_TURNS",
    "FINE_TURN",
    "TELL_TURN",
    "WHOLE_TURN",
    "Sample",
    "SampleCache",
    "example_box",
    "sample",
    "upright_read",
]

#: Degrees between the turns a fitted crop of the whole die is read at.
WHOLE_TURN = 30
#: Turns a glyph die's middle is read at first (evenly spaced); then the turns :data:`FINE_TURN`
#: degrees either side of the one whose numeral reads most upright.
COARSE_TURNS = 6
#: Degrees between the turn a coarse search found and the turns read beside it.
FINE_TURN = 30.0
#: Degrees between the turns a fitted crop is read at to tell the dice apart (a multiple of WHOLE_TURN).
TELL_TURN = 90


@dataclass
class Sample:
    """Features of one side of a die's examples, and what they are of."""

    features: np.ndarray  #: ``(rows, D)``
    labels: np.ndarray  #: the face of each row
    crops: list[np.ndarray]  #: one colour crop of the whole die per example (for its body)
    sides: list[float]  #: each example's box side in photo pixels
    examples: int  #: examples that could be read


def upright_read(
    rows_at: Callable[[np.ndarray], np.ndarray], upright: Callable[[np.ndarray], np.ndarray]
) -> tuple[np.ndarray, float]:
    """A glyph die's row (features or logits) at the turn its numeral reads most upright, and that turn.

    ``rows_at(angles)`` reads the die's middle at each angle (degrees, ccw), one row each;
    ``upright(rows)`` says how upright each row's numeral reads (the general network's surest
    numeral of the die's kind). Why coarse first: each turn read is one pass of the network,
    most of a read's time on a Pi. :data:`COARSE_TURNS` turns find the sixth of a circle the
    numeral stands in (a numeral still reads, less surely, up to 30 degrees off upright), and
    the turns :data:`FINE_TURN` either side of the surest of them place it within 15 degrees, as
    a search of every 30 degrees would: 8 passes instead of 12. Ties go to the earlier turn.
    (Four coarse turns, 45 degrees apart at worst, found too few: on a 700-roll simulated
    tower's 211 held-back d20s, 156 right and 6 wrong, where every 30 degrees read 185 and 0.)
    """
    coarse = np.arange(COARSE_TURNS) * (360.0 / COARSE_TURNS)
    rows = rows_at(coarse)
    sure = upright(rows)
    k = int(np.argmax(sure))
    fine = (coarse[k] + np.array([-FINE_TURN, FINE_TURN])) % 360.0
    more = rows_at(fine)
    angles = np.concatenate([coarse, fine])
    j = int(np.argmax(np.concatenate([sure, upright(more)])))
    row = rows[j] if j < len(rows) else more[j - len(rows)]
    return row, float(angles[j])


def example_box(example: Example, frame: np.ndarray, scale: float) -> tuple[float, float, float, float]:
    """The example's box in frame pixels (the whole frame when it has none)."""
    h, w = frame.shape[:2]
    if example.box is None:
        return (0.0, 0.0, float(w), float(h))
    x, y, bw, bh = (v * scale for v in example.box)
    return (x, y, bw, bh)


def _held_back_glyph_row(
    net: Backbone, frame: np.ndarray, box: tuple[float, float, float, float], columns: list[int]
) -> np.ndarray:
    """A held-back glyph die's features as reading takes them (:func:`upright_read`)."""

    def rows_at(angles: np.ndarray) -> np.ndarray:
        return net.features(network_crops(Network.GLYPHS, frame, box, angles))

    if not columns:
        return rows_at(np.zeros(1))[0]
    row, _angle = upright_read(rows_at, lambda f: net.general(f)[:, columns].max(axis=1))
    return row


def sample(
    net: Backbone,
    kind: str,
    faces: tuple[int, ...],
    examples: list[Example],
    photos: Mapping[Path, Any],
    *,
    fitted: bool,
    step: int = WHOLE_TURN,
) -> Sample:
    """The features ``net`` gives of ``examples`` (see the module docstring for the turns).

    ``step``: degrees between the turns of a fitted crop of the whole die (pips and numerals).
    """
    network = net.spec.network
    columns = [c for c in net.columns(kind, faces) if c is not None]
    rows: list[np.ndarray] = []
    labels: list[int] = []
    crops: list[np.ndarray] = []
    sides: list[float] = []
    count = 0
    for e in examples:
        loaded = photos.get(e.image)
        if loaded is None:
            continue
        frame, scale = loaded
        box = example_box(e, frame, scale)
        count += 1
        crops.append(crop_die(frame, box, size=64))
        sides.append(max(box[2], box[3]) / max(scale, 1e-6))
        if network is Network.GLYPHS and not fitted:
            row = _held_back_glyph_row(net, frame, box, columns)
            rows.append(row[None])
            labels.append(e.face)
        elif network is Network.GLYPHS:
            angles = np.arange(0, 360, TURN_STEP, dtype=np.float64)
            feats = net.features(network_crops(network, frame, box, angles))
            k = upright_turns(net.general(feats), columns) if columns else 0
            picked = [(k - 1) % len(angles), k, (k + 1) % len(angles)]
            rows.append(feats[picked])
            labels.extend([e.face] * len(picked))
        else:
            angles = np.arange(0, 360, step, dtype=np.float64) if fitted else np.zeros(1)
            rows.append(net.features(network_crops(network, frame, box, angles)))
            labels.extend([e.face] * len(angles))
    features = np.vstack(rows) if rows else np.zeros((0, net.dim), np.float32)
    return Sample(features, np.array(labels, np.int64), crops, sides, count)


def _every(sample_: Sample, turns: int, keep: int) -> Sample:
    """``sample_`` (``turns`` rows an example) with every ``keep``-th turn of each example, in float16."""
    features = sample_.features.reshape(sample_.examples, turns, -1)[:, ::keep]
    labels = sample_.labels.reshape(sample_.examples, turns)[:, ::keep]
    dim = sample_.features.shape[1]
    return Sample(features.reshape(-1, dim).astype(np.float16), labels.reshape(-1), [], [], sample_.examples)


class SampleCache:
    """Each (die, network, side) sampled once: a die's numeral-network features serve its head and
    the telling of the dice apart (:mod:`.telling`) alike."""

    def __init__(self, nets: dict[Network, Backbone], photos: Mapping[Path, Any], cut: int) -> None:
        self.nets = nets
        self.photos = photos
        #: the first held-back manifest line (:func:`~.teaching.held_back_line`), for every die alike
        self.cut = cut
        self._done: dict[tuple[str, Network, bool], Sample] = {}
        self._told: dict[tuple[str, Network], Sample] = {}

    def get(self, die: TaughtDie, faces: tuple[int, ...], network: Network, *, fitted: bool) -> Sample:
        """The die's fitted (or held-back) examples as ``network`` reads them."""
        key = (die.id, network, fitted)
        if key not in self._done:
            fitted_ex, held_ex = split_at(die.examples, self.cut)
            examples = fitted_ex if fitted else held_ex
            self._done[key] = sample(
                self.nets[network], die.kind, faces, examples, self.photos, fitted=fitted
            )
        return self._done[key]

    def telling(self, die: TaughtDie, faces: tuple[int, ...], network: Network) -> Sample:
        """The die's fitted examples as ``network`` reads them every :data:`TELL_TURN` degrees (float16).

        Taken from the features already sampled at every turn where there are some; else sampled.
        """
        if (die.id, network) not in self._told:
            full = self._done.get((die.id, network, True))
            if full is not None:
                self._told[die.id, network] = _every(full, 360 // WHOLE_TURN, TELL_TURN // WHOLE_TURN)
            else:
                fitted_ex, _held = split_at(die.examples, self.cut)
                got = sample(
                    self.nets[network], die.kind, faces, fitted_ex, self.photos, fitted=True, step=TELL_TURN
                )
                self._told[die.id, network] = _every(got, 360 // TELL_TURN, 1)
        return self._told[die.id, network]

    def release(self, die: TaughtDie, keep: tuple[Network, ...] = ()) -> None:
        """Drop ``die``'s fitted features, keeping of each ``keep`` network what :meth:`telling` needs."""
        for network in keep:
            if (die.id, network, True) in self._done:
                self.telling(die, (), network)
        for key in [k for k in self._done if k[0] == die.id and k[2]]:
            del self._done[key]
