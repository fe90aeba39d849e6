"""Where faces come from: one protocol for the RNG, typed-in faces and the tower.

The rules never call ``random`` themselves (d20 does, inside ``Die._add_roll``). They ask
an injected :class:`DiceSource` for a :class:`DiceRequest` of die slots and get printed
faces back. Follow-up throws (an exploding wild die, a focus reroll, a botch reroll) are
new requests whose slots name the slot they follow up (``of_slot``), so the tower can
throw again and read only that die (the red wild die, say) instead of the whole pool.
"""

from __future__ import annotations

import random
import secrets
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple

from .errors import ExtraFacesError, FaceMissingError, RollLimitError
from .faces import check_face, face_set, printed_faces

__all__ = [
    "MAX_DICE",
    "DiceRequest",
    "DiceSource",
    "DieSlot",
    "FixedSource",
    "Purpose",
    "RandomSource",
    "Role",
    "RollBudget",
]

#: At most this many dice (explosions and rerolls included) in one roll or check.
MAX_DICE = 1000


class Purpose(StrEnum):
    """Why a die is being asked for."""

    BASE = "base"  #: part of the initial throw
    EXPLOSION = "explosion"  #: thrown again because ``of_slot`` exploded (a wild 6, ``!``)
    REROLL = "reroll"  #: replaces or follows ``of_slot`` (``r``/``ro``, a botch reroll, a focus reroll)


class Role(StrEnum):
    """What a die is to the rules, so the tower can tell it apart (by colour)."""

    PLAIN = "plain"
    WILD = "wild"  #: Runic Flux's red Wild Die
    TENS = "tens"  #: the percentile tens die of a d% pair
    UNITS = "units"  #: the units die of a d% pair


class _DieSlotFields(NamedTuple):
    slot: int
    die: str  #: kind: "d6", "d10" (0-9), "d10t" (00-90), "d20", or any "dN"
    role: Role = Role.PLAIN
    purpose: Purpose = Purpose.BASE
    of_slot: int | None = None  #: for follow-ups: the slot this throw is about
    label: str = ""  #: short human text, e.g. "wild die explosion 2"


class DieSlot(_DieSlotFields):
    """One die the rules want a face for (immutable).

    ``slot`` numbers every die of one evaluation from 0 in the order asked, so a result,
    a log line and a follow-up can all point at the same die. A NamedTuple rather than a
    frozen dataclass because every die of every roll makes one: construction cost is most
    of the per-die overhead (see ``bench/rules.py``).
    """

    __slots__ = ()

    def __new__(
        cls,
        slot: int,
        die: str,
        role: Role = Role.PLAIN,
        purpose: Purpose = Purpose.BASE,
        of_slot: int | None = None,
        label: str = "",
    ) -> DieSlot:
        face_set(die)  # validates the kind early
        if purpose is not Purpose.BASE and of_slot is None:
            raise ValueError("a follow-up slot must name the slot it follows up (of_slot)")
        return tuple.__new__(cls, (slot, die, role, purpose, of_slot, label))

    def __repr__(self) -> str:
        return (
            f"DieSlot(slot={self.slot}, die={self.die!r}, role={self.role.value}, "
            f"purpose={self.purpose.value}, of_slot={self.of_slot}, label={self.label!r})"
        )


class DiceRequest:
    """A batch of slots thrown together (one physical throw for the tower).

    Immutable by convention; a plain slotted class rather than a frozen dataclass because one
    is built per throw and frozen-dataclass construction was a measurable share of a roll.
    """

    __slots__ = ("reason", "slots")

    def __init__(self, slots: tuple[DieSlot, ...], reason: str = "") -> None:
        self.slots = slots
        self.reason = reason  #: why this throw happens ("initial throw", "wild die exploded")

    def __repr__(self) -> str:
        return f"DiceRequest(slots={self.slots!r}, reason={self.reason!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DiceRequest):
            return NotImplemented
        return self.slots == other.slots and self.reason == other.reason

    def __hash__(self) -> int:
        return hash((self.slots, self.reason))

    def __len__(self) -> int:
        return len(self.slots)

    @property
    def is_follow_up(self) -> bool:
        return any(s.purpose is not Purpose.BASE for s in self.slots)


class DiceSource(ABC):
    """Answers requests with printed faces, one per slot, in slot order.

    Subclasses *must* override :meth:`faces`. They *may* override :meth:`finish` to
    check that nothing was left over when an evaluation is done.
    """

    #: True only for sources that cannot produce a face that is not on the die (the RNG);
    #: faces from people and cameras are always checked.
    faces_are_valid: bool = False

    @abstractmethod
    def faces(self, request: DiceRequest) -> list[int]:
        """Return one printed face per slot of ``request``, in order."""

    def finish(self) -> None:  # noqa: B027 - optional hook, empty by design
        """Called once an evaluation is complete."""


class RandomSource(DiceSource):
    """Faces from an RNG: ``secrets`` by default, or a seeded ``random.Random`` for replays."""

    def __init__(self, seed: int | str | None = None):
        self.seed = seed
        self._rng: random.Random = secrets.SystemRandom() if seed is None else random.Random(seed)

    #: faces come from ``printed_faces`` itself, so the budget may skip re-validating them
    faces_are_valid = True

    def faces(self, request: DiceRequest) -> list[int]:
        slots = request.slots
        if len(slots) == 1:  # the commonest throw of all: one die (a d20, a follow-up)
            return [self._rng.choice(printed_faces(slots[0].die))]
        kind = slots[0].die if slots else ""
        if all(s.die == kind for s in slots):
            # The common NdX throw: one ``choices`` call. Its floor(random() * n) pick is
            # uniform to within n / 2**53, far below any fairness test's resolution.
            return self._rng.choices(printed_faces(kind), k=len(slots)) if slots else []
        choice = self._rng.choice
        return [choice(printed_faces(s.die)) for s in slots]

    def __repr__(self) -> str:
        return f"RandomSource(seed={self.seed!r})"


class FixedSource(DiceSource):
    """Faces a player typed in after rolling by hand, consumed in request order.

    Each face is checked against the die it lands on; running short raises
    :class:`FaceMissingError` naming the die that was wanted; faces left over when the
    evaluation finishes raise :class:`ExtraFacesError`.
    """

    def __init__(self, faces: Iterable[int]):
        self._faces = list(faces)
        self._next = 0

    @property
    def remaining(self) -> list[int]:
        return self._faces[self._next :]

    def faces(self, request: DiceRequest) -> list[int]:
        out: list[int] = []
        for s in request.slots:
            if self._next >= len(self._faces):
                what = s.label or f"{s.die} ({s.purpose.value})"
                raise FaceMissingError(
                    f"not enough faces: {len(self._faces)} given, the roll needs another for {what}"
                )
            out.append(check_face(s.die, self._faces[self._next]))
            self._next += 1
        return out

    def finish(self) -> None:
        if self._next < len(self._faces):
            extra = self._faces[self._next :]
            raise ExtraFacesError(f"{len(extra)} face(s) left over: {', '.join(map(str, extra))}")


@dataclass
class RollBudget:
    """Hands out slot numbers and enforces :data:`MAX_DICE` across every request of one roll.

    Systems and the notation evaluator both build requests through one budget, so a
    runaway explosion stops with :class:`RollLimitError`, never a hang.
    """

    source: DiceSource
    max_dice: int = MAX_DICE
    used: int = 0
    thrown: list[tuple[DieSlot, int]] = field(default_factory=list)

    def slot(
        self,
        die: str,
        *,
        role: Role = Role.PLAIN,
        purpose: Purpose = Purpose.BASE,
        of_slot: int | None = None,
        label: str = "",
    ) -> DieSlot:
        """Reserve the next slot number (counts against the budget)."""
        if self.used >= self.max_dice:
            raise RollLimitError(f"roll needs more than {self.max_dice} dice")
        s = DieSlot(self.used, die, role, purpose, of_slot, label)
        self.used += 1
        return s

    def slots(self, die: str, n: int, *, role: Role = Role.PLAIN, label: str = "") -> list[DieSlot]:
        """Reserve ``n`` base slots of one kind at once (the hot path of ``NdX``)."""
        if self.used + n > self.max_dice:
            raise RollLimitError(f"roll needs more than {self.max_dice} dice")
        face_set(die)
        start = self.used
        self.used += n
        new = tuple.__new__
        return [new(DieSlot, (i, die, role, Purpose.BASE, None, label)) for i in range(start, start + n)]

    def throw(self, slots: Sequence[DieSlot], reason: str = "") -> list[int]:
        """Ask the source for ``slots`` as one throw and record what came back."""
        if not slots:
            return []
        got = self.source.faces(DiceRequest(tuple(slots), reason))
        if len(got) != len(slots):
            raise RollLimitError(f"dice source answered {len(got)} faces for {len(slots)} dice")
        # Validate every face against its die; one set lookup a die on the hot path.
        # (``type(f) is int`` also refuses True/False, which would pass as 1/0.)
        kind = slots[0].die
        if self.source.faces_are_valid:
            pass
        elif all(s.die == kind for s in slots):
            valid = face_set(kind)
            if not all(type(f) is int and f in valid for f in got):
                for s, f in zip(slots, got, strict=True):
                    check_face(s.die, f)  # raises with the full message
        else:
            for s, f in zip(slots, got, strict=True):
                if type(f) is not int or f not in face_set(s.die):
                    check_face(s.die, f)
        self.thrown.extend(zip(slots, got, strict=True))
        return list(got)

    def throw_one(self, die: str, **kw) -> tuple[DieSlot, int]:
        """Reserve and throw a single die; returns its slot and printed face."""
        reason = kw.pop("reason", "")
        s = self.slot(die, **kw)
        return s, self.throw([s], reason)[0]
