"""Per-face reject rates of each physical die, from what every reading in the roll log saw.

Why: the retry rule never looks at a face, yet when the reader rejects some faces more often
than others, re-throwing until every die is read tilts the counts toward the faces read
best. A fair die thrown until read with face ``f`` rejected at rate ``r_f`` is accepted on
``f`` with probability ``(1 − r_f) / Σ (1 − r_g)`` (:func:`accepted_shares`); the page shows
the rates, the tilt they predict and the rolls a χ² test needs to see it (``docs/server.md``).

What the log can tell (``throws[].attempts``, written by ``tower_supply.attempt_looks``):

- Only a die that has just landed shows a face drawn afresh from the die itself, whatever the
  reader does: a **fresh look** is a die in the first reading after a shake that moved the
  dice. Readings after a tap (the dice kept their faces; the leaning one fell onto a face
  beside the edge it leaned on) and after a jam (nothing moved) see dice already seen and are
  left out, and so is every face of a rejected die that a later reading gives.
- **With the camera's truth** (sim, replay): per face, the fresh looks at a die showing it
  and how many the reader rejected: ``r_f`` with a Wilson interval; a leaning die (no face up)
  is counted apart; a χ² test says whether rejects depend on the face at all.
- **Without it** (a real camera) nobody sees the face of a rejected die. Per face the log holds
  the fresh looks read as that face, whose expected share of all fresh looks is
  ``p_f (1 − r_f)``: a die that lands on 6 less often and a reader that rejects 6 more often
  leave the same log. What is measured exactly is the reject rate per look, face-blind; per
  face, the *apparent* rate ``1 − k · reads_f / looks`` is ``r_f`` only if the die is fair.
  The tilt itself shows in the counts' χ² either way.

Failed rolls count: a die that stays unreadable is what fails them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .stats import chi2_sf, rolls_to_see, wilson_interval

__all__ = [
    "RATIO_FLOOR",
    "RejectCounter",
    "RejectStats",
    "accepted_shares",
    "face_rate_text",
    "max_tilt",
    "reject_lines",
]

#: Reject rates below this count as this much in the per-face ratio, as ``dicetower eval``
#: floors them (``vision.eval.evaluate.REJECT_RATE_FLOOR``): 0 vs 0.4 % is no infinite skew.
RATIO_FLOOR = 0.01


def accepted_shares(rates: Sequence[float]) -> list[float]:
    """The faces a fair die re-thrown until read is accepted on, given per-face reject rates.

    Each throw shows face ``f`` with probability ``1/k`` and is kept with ``1 − r_f``; the
    kept throw's face is therefore ``∝ (1 − r_f)``. This is the tilt when a rejected die's
    next reading is of a new landing; a re-read of the same landing that may succeed
    (``docs/tower.md``) tilts less.
    """
    kept = [1.0 - min(1.0, max(0.0, r)) for r in rates]
    total = sum(kept)
    if total <= 0:
        raise ValueError("every face is always rejected: no throw is ever read")
    return [k / total for k in kept]


def max_tilt(shares: Sequence[float]) -> float:
    """The largest gap between a face's share and a fair die's ``1/k``."""
    return max(abs(s - 1 / len(shares)) for s in shares)


def _ratio(rates: Iterable[float]) -> float | None:
    floored = [max(r, RATIO_FLOOR) for r in rates]
    return max(floored) / min(floored) if len(floored) >= 2 else None


@dataclass
class RejectStats:
    """What the readings of one die identity say about its rejects (module docstring)."""

    die: str
    kind: str
    faces: tuple[int, ...]
    looks: int = 0  #: fresh looks: the die just landed
    rejected: int = 0  #: fresh looks the reader rejected
    reads: dict[int, int] = field(default_factory=dict)  #: fresh looks read as each face
    throws: int = 0  #: throws in which a reading saw the die
    throws_retried: int = 0  #: throws in which a reading rejected it
    truth_looks: dict[int, int] = field(default_factory=dict)  #: fresh looks at each true face
    truth_rejected: dict[int, int] = field(default_factory=dict)
    leaning_looks: int = 0  #: fresh looks at a die leaning, no face up (camera's truth)
    leaning_rejected: int = 0

    @property
    def has_truth(self) -> bool:
        """Did the camera know the face of any fresh look (sim, replay)?"""
        return any(self.truth_looks.get(f, 0) for f in self.faces)

    def face_rates(self) -> dict[int, tuple[float, float, float] | None]:
        """Per face ``(rate, lo, hi)``: from the truth where known, else the apparent rate.

        None for a face with no look at it (truth) or no look at all.
        """
        out: dict[int, tuple[float, float, float] | None] = {}
        k = len(self.faces)
        for f in self.faces:
            if self.has_truth:
                n, u = self.truth_looks.get(f, 0), self.truth_rejected.get(f, 0)
                out[f] = (u / n, *wilson_interval(u, n)) if n else None
            elif self.looks:
                share = self.reads.get(f, 0) / self.looks
                lo, hi = wilson_interval(self.reads.get(f, 0), self.looks)
                out[f] = (max(0.0, 1 - k * share), max(0.0, 1 - k * hi), min(1.0, max(0.0, 1 - k * lo)))
            else:
                out[f] = None
        return out

    def face_p(self) -> float | None:
        """Do rejects depend on the true face? Pearson's χ² of rejects x faces (truth only)."""
        seen = [f for f in self.faces if self.truth_looks.get(f, 0)]
        n = sum(self.truth_looks[f] for f in seen)
        u = sum(self.truth_rejected.get(f, 0) for f in seen)
        if len(seen) < 2 or u == 0 or u == n:
            return None
        rate = u / n
        gaps = (self.truth_rejected.get(f, 0) - self.truth_looks[f] * rate for f in seen)
        chi2 = sum(g * g / self.truth_looks[f] for g, f in zip(gaps, seen, strict=True)) / (rate * (1 - rate))
        return chi2_sf(chi2, len(seen) - 1)

    def to_json(self) -> dict[str, Any]:
        rates = self.face_rates()
        known = [r[0] for r in rates.values() if r is not None]
        shares = (
            accepted_shares([r[0] for r in rates.values() if r is not None])
            if self.has_truth and len(known) == len(self.faces) and min(known) < 1
            else None
        )
        return {
            "looks": self.looks,
            "rejected": self.rejected,
            "reject_rate": self.rejected / self.looks if self.looks else None,
            "ci95": list(wilson_interval(self.rejected, self.looks)),
            "throws": self.throws,
            "throws_retried": self.throws_retried,
            "basis": "truth" if self.has_truth else "apparent",
            "truth_looks": sum(self.truth_looks.get(f, 0) for f in self.faces),
            "leaning_looks": self.leaning_looks,
            "leaning_rejected": self.leaning_rejected,
            "faces": [
                {
                    "face": f,
                    "read": self.reads.get(f, 0),
                    "looks": self.truth_looks.get(f, 0) if self.has_truth else None,
                    "rejected": self.truth_rejected.get(f, 0) if self.has_truth else None,
                    "rate": None if rates[f] is None else rates[f][0],
                    "ci95": None if rates[f] is None else list(rates[f][1:]),
                }
                for f in self.faces
            ],
            "ratio": _ratio(known) if self.has_truth and len(known) == len(self.faces) else None,
            "face_p": self.face_p(),
            "predicted_shares": shares,
            "predicted_tilt": None if shares is None else max_tilt(shares),
            "rolls_to_see_tilt": None if shares is None else rolls_to_see(shares),
        }


class RejectCounter:
    """Reject figures per die identity, counted row by row (done and failed rows), oldest first.

    Rows whose throws hold no ``attempts`` (the RNG's; a log written before readings were
    kept) add nothing. The kind and faces of a die are the fairness table's
    (:meth:`stats`), so a look at a die that never answered a slot is never shown.
    """

    def __init__(self) -> None:
        self._by_die: dict[str, RejectStats] = {}

    def add(self, row: Mapping[str, Any]) -> None:
        for throw in row.get("throws") or ():
            seen: set[str] = set()
            retried: set[str] = set()
            for attempt in throw.get("attempts") or ():
                fresh = attempt.get("after") == "shake"
                for d in attempt.get("dice") or ():
                    die = d.get("die")
                    if not isinstance(die, str):
                        continue
                    stats = self._by_die.setdefault(die, RejectStats(die, "", ()))
                    seen.add(die)
                    face = d.get("face")
                    if face is None:
                        retried.add(die)
                    if fresh:
                        _count_fresh(stats, face, d)
            for die in seen:
                self._by_die[die].throws += 1
            for die in retried:
                self._by_die[die].throws_retried += 1

    def stats(self, die: str, kind: str, faces: Sequence[int]) -> RejectStats | None:
        """The figures of ``die`` counted over its ``faces``; None if no reading saw it."""
        found = self._by_die.get(die)
        if found is None:
            return None
        found.kind, found.faces = kind, tuple(faces)
        return found


def _count_fresh(stats: RejectStats, face: Any, look: Mapping[str, Any]) -> None:
    stats.looks += 1
    if face is None:
        stats.rejected += 1
    elif isinstance(face, int):
        stats.reads[face] = stats.reads.get(face, 0) + 1
    if look.get("cocked"):
        stats.leaning_looks += 1
        stats.leaning_rejected += int(face is None)
        return
    truth = look.get("truth")
    if isinstance(truth, int):
        stats.truth_looks[truth] = stats.truth_looks.get(truth, 0) + 1
        if face is None:
            stats.truth_rejected[truth] = stats.truth_rejected.get(truth, 0) + 1


def _pct(x: float | None, spec: str = ".1f") -> str:
    return "-" if x is None else f"{100 * x:{spec}} %"


def face_rate_text(face: Mapping[str, Any], basis: str) -> str:
    """``2.1 %`` (from the truth) or ``~2.1 %`` (apparent) for one entry of ``to_json()["faces"]``."""
    if face["rate"] is None:
        return "-"
    return ("~" if basis == "apparent" else "") + _pct(face["rate"])


def reject_lines(j: Mapping[str, Any], faces: int) -> list[str]:
    """The terminal lines of one die's ``to_json()``: rates per look, the basis, the predicted tilt."""
    if not j["looks"]:
        return [f"  rejects: no reading after a shake yet ({j['throws']} throws seen)"]
    lo, hi = j["ci95"]
    lines = [
        f"  rejects: {j['rejected']} of {j['looks']} looks after a shake ({_pct(j['reject_rate'], '.2f')}, "
        f"95 % CI {100 * lo:.2f}-{100 * hi:.2f} %); "
        f"{j['throws_retried']} of {j['throws']} throws retried for it",
        "  (a look is each landing, read or not: a die thrown again has more looks than rolls)",
    ]
    if j["basis"] == "truth":
        ratio = "-" if j["ratio"] is None else f"{j['ratio']:.2f}"
        p = "-" if j["face_p"] is None else f"{j['face_p']:.3g}"
        lines.append(
            f"  per face from the camera's truth ({j['truth_looks']} looks): ratio {ratio}, "
            f"rejects depend on the face p={p}; "
            f"leaning {j['leaning_rejected']} of {j['leaning_looks']} rejected"
        )
        if j["predicted_tilt"] is not None:
            see = j["rolls_to_see_tilt"]
            lines.append(
                f"  tilt these rates predict: {100 * j['predicted_tilt']:.2f} points "
                f"(largest |share - 1/{faces}|)"
                + (f", seen by a chi2 test after about {see} rolls" if see else "")
            )
    else:
        lines.append(
            f"  per face ~: 1 - {faces} x (share of looks read as the face); no camera truth, so the face "
            "of a rejected die is unseen and these are reject rates only if the die is fair"
        )
    return lines
