"""How sure a taught reader is lately, set against how sure it was on the rolls it held back.

Why: a taught reader is fitted under one light on one set of dice. When the light changes or a
die is swapped, it does not start naming wrong faces: below its threshold it says
``low_confidence``, and a die whose body no longer looks like the one taught is left to the
general reader. Either way the share of taught dice it reads *surely* falls, and the tower can
see that without knowing the faces. The model's card holds each die's held-back figures (right,
wrong and unreadable of the latest rolls it was not fitted on, with a 95 % interval of the
right rate); this module keeps the last :data:`WINDOW` taught dice read and says when the
recent sure-read share is clearly below those.

**The rule.** Per taught die, over its last :data:`WINDOW` reads, once there are at least
:data:`MIN_DICE` of them, the die is *drifting* when the upper end of the 95 % interval of its
recent sure-read share is below the lower end of the 95 % interval of its held-back share
(:meth:`Baseline.from_figures`: the share its head read surely on the held-back photos read end to
end, or an older card's held-back right rate; both Clopper-Pearson,
:func:`~dicetower.vision.eval.intervals.binomial_bounds`). The two intervals do not overlap, so
chance is an unlikely cause: with 50 recent reads that takes a fall of ten points or more. A read is
sure when its confidence reaches the die's threshold (the reader then names a face); a die the
general reader names as the taught die's kind and colour but whose body the taught reader did not
recognise counts as a read not made surely (the light changed its colour). Sure reads include the
few wrong ones, which the tower cannot tell, so the comparison leans toward "not drifting". The
model as a whole is judged the same way over the last :data:`WINDOW` taught dice of any die, against
the card's held-back figures of all dice.

The mean confidence of the recent reads is reported beside the share, not judged: the card
holds no held-back mean to set it against.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..eval.intervals import binomial_bounds
from ..kinds import label_of
from ..reading import Reading
from .reader import rereads

__all__ = ["MIN_DICE", "WINDOW", "Baseline", "DriftMonitor", "Figure", "reads_of"]

#: Taught dice the running figure is kept over (per die, and for the model as a whole).
WINDOW = 50
#: Fewest recent reads before a die (or the model) may be called drifting.
MIN_DICE = 20


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f} %"


@dataclass(frozen=True)
class Baseline:
    """What the card says of one taught die (or of all of them): its held-back figures."""

    id: str
    kind: str
    colour: str  #: "" when the folder it was taught on named no colours
    threshold: float
    held_back: int  #: held-back dice
    right: int
    interval: tuple[float, float]  #: 95 % interval of the held-back right rate

    @property
    def right_rate(self) -> float | None:
        return self.right / self.held_back if self.held_back else None

    @classmethod
    def from_figures(cls, identity: str, kind: str, colour: str, threshold: float, figures: Any) -> Baseline:
        """From a card's figures; missing figures judge nothing.

        A card whose held-back photos were read end to end gives, per die, the dice its head read
        there and how many surely (``read_by_die``, ``sure``, ``sure_interval``): what the tower
        sees live, so that is the baseline. An older card gives the held-back right rate
        (``dice``, ``right``, ``right_interval``).
        """
        figures = figures if isinstance(figures, Mapping) else {}
        if "read_by_die" in figures and "sure" in figures:
            held = int(figures.get("read_by_die") or 0)
            right = int(figures.get("sure") or 0)
            lo, hi = figures.get("sure_interval") or binomial_bounds(right, held)
        else:
            held = int(figures.get("dice") or 0)
            right = int(figures.get("right") or 0)
            lo, hi = figures.get("right_interval") or (0.0, 1.0)
        return cls(identity, kind, colour, float(threshold), held, right, (float(lo), float(hi)))

    @classmethod
    def summed(cls, dice: Sequence[Baseline]) -> Baseline:
        """The model as a whole: every die's held-back reads and sure reads summed."""
        held = sum(b.held_back for b in dice)
        right = sum(b.right for b in dice)
        lo, hi = binomial_bounds(right, held) if held else (0.0, 1.0)
        return cls("", "", "", 0.0, held, right, (lo, hi))


@dataclass(frozen=True)
class Figure:
    """The running figure of one taught die, or of the model (``baseline.id`` is then ``""``)."""

    baseline: Baseline
    recent: int  #: reads in the window
    sure: int  #: of those, read surely
    unrecognised: int  #: of those, named as this die but not recognised by its body
    mean_confidence: float | None  #: over the recognised reads
    interval: tuple[float, float]  #: 95 % interval of the recent sure-read share
    drifting: bool

    @property
    def share(self) -> float | None:
        return self.sure / self.recent if self.recent else None

    def message(self) -> str:
        """``the blue d20 is read surely 40 % of the time (20 of 50 recent) against 97 % when taught``."""
        who = f"the {self.baseline.id} is" if self.baseline.id else "the taught dice are"
        lost = f"; {self.unrecognised} not recognised" if self.unrecognised else ""
        return (
            f"{who} read surely {_pct(self.share)} of the time ({self.sure} of {self.recent} recent{lost})"
            f" against {_pct(self.baseline.right_rate)} when taught"
        )

    def to_json(self) -> dict[str, Any]:
        b = self.baseline
        out: dict[str, Any] = {"id": b.id} if b.id else {}
        return {
            **out,
            "recent": self.recent,
            "sure": self.sure,
            "unrecognised": self.unrecognised,
            "sure_share": None if self.share is None else round(self.share, 4),
            "sure_interval": [round(v, 4) for v in self.interval],
            "mean_confidence": None if self.mean_confidence is None else round(self.mean_confidence, 4),
            "held_back": b.held_back,
            "held_back_right_rate": None if b.right_rate is None else round(b.right_rate, 4),
            "held_back_interval": [round(v, 4) for v in b.interval],
            "drifting": self.drifting,
        }


#: One read: the die's confidence, or None when named as the die but not recognised by its body.
Read = float | None


def reads_of(
    reading: Reading, taught: Sequence[tuple[str, float]], dice: Sequence[Baseline]
) -> list[tuple[str, Read]]:
    """The taught reads of one frame: ``taught`` (a :class:`~.reader.TaughtFrameReader`'s
    ``last_taught``), plus one ``None`` for each die of the reading named as a taught die's kind and
    colour beyond those its body was recognised for. A die taught without a colour is never
    counted so: a name alone cannot say it is that die."""
    out: list[tuple[str, Read]] = [(identity, conf) for identity, conf in taught]
    recognised: dict[str, int] = {}
    for identity, _conf in taught:
        recognised[identity] = recognised.get(identity, 0) + 1
    for b in dice:
        if not b.colour:
            continue
        named = sum(
            1 for d in reading.dice if rereads(d) and label_of(d.kind) == b.kind and d.colour == b.colour
        )
        out.extend((b.id, None) for _ in range(max(0, named - recognised.get(b.id, 0))))
    return out


class DriftMonitor:
    """The running figure of a taught model: feed it each frame's taught reads, ask :attr:`drifting`.

    Example::

        monitor = DriftMonitor.from_card(model.card)
        reading = reader.read(frame)
        monitor.add_reading(reading, reader.last_taught)
        if monitor.drifting:
            print(monitor.messages())
    """

    def __init__(
        self,
        dice: Sequence[Baseline],
        overall: Baseline | None = None,
        *,
        window: int = WINDOW,
        min_dice: int = MIN_DICE,
    ) -> None:
        if not 1 <= min_dice <= window:
            raise ValueError(f"min_dice must be 1..window ({window}), got {min_dice}")
        self.dice = {b.id: b for b in dice}
        self.overall = overall or Baseline("", "", "", 0.0, 0, 0, (0.0, 1.0))
        self.window = window
        self.min_dice = min_dice
        self._per_die: dict[str, deque[Read]] = {b.id: deque(maxlen=window) for b in dice}
        self._recent: deque[tuple[str, Read]] = deque(maxlen=window)

    @classmethod
    def from_card(cls, card: Mapping[str, Any], **kwargs: Any) -> DriftMonitor:
        """A monitor over a taught model's card (``taught.json``, :attr:`TaughtModel.card`)."""
        dice = [
            Baseline.from_figures(
                str(d["id"]),
                str(d["kind"]),
                str(d.get("colour", "")),
                float(d["threshold"]),
                d.get("figures"),
            )
            for d in card.get("dice", ())
        ]
        read_end_to_end = all(
            isinstance(d.get("figures"), Mapping) and "sure" in d["figures"] for d in card.get("dice", ())
        )
        overall = (
            Baseline.summed(dice)
            if dice and read_end_to_end
            else Baseline.from_figures("", "", "", 0.0, card.get("held_back"))
        )
        return cls(dice, overall, **kwargs)

    def add(self, identity: str, confidence: Read) -> None:
        """One read of taught die ``identity``; a die the model does not hold is ignored."""
        window = self._per_die.get(identity)
        if window is None:
            return
        window.append(confidence)
        self._recent.append((identity, confidence))

    def add_reads(self, reads: Iterable[tuple[str, Read]]) -> None:
        for identity, confidence in reads:
            self.add(identity, confidence)

    def add_reading(self, reading: Reading, taught: Sequence[tuple[str, float]]) -> None:
        """One frame: the reader's taught reads and the dice named as taught but not recognised."""
        self.add_reads(reads_of(reading, taught, list(self.dice.values())))

    def _sure(self, identity: str, confidence: Read) -> bool:
        return confidence is not None and confidence >= self.dice[identity].threshold

    def _figure(self, baseline: Baseline, reads: list[tuple[str, Read]]) -> Figure:
        n = len(reads)
        sure = sum(self._sure(i, c) for i, c in reads)
        confs = [c for _i, c in reads if c is not None]
        lo, hi = binomial_bounds(sure, n) if n else (0.0, 1.0)
        drifting = n >= self.min_dice and baseline.held_back > 0 and hi < baseline.interval[0]
        mean = sum(confs) / len(confs) if confs else None
        unrecognised = n - len(confs)
        return Figure(baseline, n, sure, unrecognised, mean, (lo, hi), drifting)

    def figures(self) -> list[Figure]:
        """Each taught die's running figure, in the card's order."""
        return [self._figure(b, [(i, c) for c in self._per_die[i]]) for i, b in self.dice.items()]

    def model_figure(self) -> Figure:
        """The running figure over the last :attr:`window` taught dice of any die."""
        return self._figure(self.overall, list(self._recent))

    @property
    def drifting(self) -> bool:
        return self.model_figure().drifting or any(f.drifting for f in self.figures())

    def messages(self) -> list[str]:
        """One sentence per drifting die, or for the model when no single die is."""
        dice = [f.message() for f in self.figures() if f.drifting]
        if dice:
            return dice
        model = self.model_figure()
        return [model.message()] if model.drifting else []

    def to_json(self) -> dict[str, Any]:
        """The figure the tower reports (``taught.drift`` of ``tower status``)."""
        model = self.model_figure()
        return {
            "window": self.window,
            "min_dice": self.min_dice,
            **model.to_json(),
            "drifting": self.drifting,
            "dice": [f.to_json() for f in self.figures()],
        }

    def state(self) -> dict[str, Any]:
        """The reads in the window, to keep between runs (:meth:`restore`)."""
        return {
            "dice": {i: list(w) for i, w in self._per_die.items()},
            "recent": [[i, c] for i, c in self._recent],
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        """Take back a :meth:`state`; reads of dice the model does not hold are dropped."""
        for identity, reads in dict(state.get("dice") or {}).items():
            if identity in self._per_die:
                self._per_die[identity].extend(_read(c) for c in reads)
        for identity, conf in state.get("recent") or ():
            if identity in self._per_die:
                self._recent.append((str(identity), _read(conf)))


def _read(value: Any) -> Read:
    if value is None:
        return None
    conf = float(value)
    if not 0.0 <= conf <= 1.0:
        raise ValueError(f"a confidence is 0..1, got {conf}")
    return conf
