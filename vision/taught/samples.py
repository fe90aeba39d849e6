"""A taught die's examples as a network reads them: the fitted ones at many turns, the held-back as read.

What the head is fitted on must be what it reads later, turned every way a die lands:

- pips and numerals: each fitted crop at every :data:`WHOLE_TURN` degrees; a held-back crop, as
  reading takes it, once, at the turn it landed;
- glyphs: each crop's middle searched every :data:`~.features.TURN_STEP` degrees for the turn at
  which the general network is surest of one of the kind's numerals (:func:`~.features.upright_turns`);
  a fitted crop gives that turn and the turns beside it, since reading searches only every
  :data:`~.features.READ_TURNS`-th of a circle and lands up to half a step off; a held-back crop
  is read exactly as reading reads it.

Telling the dice apart (:mod:`.telling`) needs fewer turns of each fitted crop (every
:data:`TELL_TURN` degrees): once a die's own heads are fitted, :meth:`SampleCache.release` keeps only
those rows of its whole-die features, in half precision, and drops the rest. Why: a 700-roll
folder's fitted numeral features at every turn are over 100 MB a die; held for every die until
the telling head is fitted, they were most of the fit's memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..faces.pips import crop_die
from .features import READ_TURNS, TURN_STEP, Backbone, Network, network_crops, upright_turns
from .teaching import Example, TaughtDie, split_at

__all__ = ["TELL_TURN", "WHOLE_TURN", "Sample", "SampleCache", "example_box", "read_turns", "sample"]

#: Degrees between the turns a fitted crop of the whole die is read at.
WHOLE_TURN = 30
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


def read_turns() -> np.ndarray:
    """The turns (degrees) a glyph die is read at."""
    return np.arange(READ_TURNS) * (360.0 / READ_TURNS)


def example_box(example: Example, frame: np.ndarray, scale: float) -> tuple[float, float, float, float]:
    """The example's box in frame pixels (the whole frame when it has none)."""
    h, w = frame.shape[:2]
    if example.box is None:
        return (0.0, 0.0, float(w), float(h))
    x, y, bw, bh = (v * scale for v in example.box)
    return (x, y, bw, bh)


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
        if network is Network.GLYPHS:
            angles = np.arange(0, 360, TURN_STEP, dtype=np.float64) if fitted else read_turns()
            feats = net.features(network_crops(network, frame, box, angles))
            k = upright_turns(net.general(feats), columns) if columns else 0
            picked = [(k - 1) % len(angles), k, (k + 1) % len(angles)] if fitted else [k]
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
