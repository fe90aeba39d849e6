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
from operator import itemgetter
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
    is built per throw and frozen-dataclass construction is a measurable share of a roll.
    """

    __slots__ = ("kind", "reason", "slots")

    def __init__(self, slots: tuple[DieSlot, ...], reason: str = "", kind: str | None = None) -> None:
        self.slots = slots
        self.reason = reason  #: why this throw happens ("initial throw", "wild die exploded")
        #: the one die kind every slot shares, when whoever built the request knows it (the
        #: budget's ``NdX`` throw does), so a source need not look at each slot; None: look
        self.kind = kind

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
    """Faces from an RNG: ``secrets`` by default, or a seeded ``random.Random`` for replays.

    A throw of several dice of one kind (``10d10``) draws random *bytes* and maps each
    accepted byte to a face through a 256-entry table in C (:func:`_byte_table`): bytes at or
    above the largest multiple of the face count are rejected, so every face is exactly
    equally likely. That is a third of the cost of ``choices()``, whose per-die Python
    loop is most of a plain roll. A seeded source still replays: the same seed and the same
    requests give the same faces. The byte mapping is part of what a seed means, so a replay
    holds within one version of dicetower, not across versions.
    """

    def __init__(self, seed: int | str | None = None):
        self.seed = seed
        self._rng: random.Random = secrets.SystemRandom() if seed is None else random.Random(seed)

    #: faces come from ``printed_faces`` itself, so the budget may skip re-validating them
    faces_are_valid = True

    def faces(self, request: DiceRequest) -> list[int]:
        kind = request.kind
        slots = request.slots
        if len(slots) == 1:  # the commonest throw of all: one die (a d20, a follow-up)
            return [self._rng.choice(printed_faces(kind or slots[0].die))]
        if kind is None:
            if not slots:
                return []
            kinds = set(map(_DIE, slots))
            if len(kinds) > 1:  # a mixed throw (a wild die with the pool): one die at a time
                choice = self._rng.choice
                return [choice(printed_faces(s.die)) for s in slots]
            kind = kinds.pop()
        return self.same_kind(kind, len(slots))

    def same_kind(self, kind: str, n: int) -> list[int]:
        """``n`` faces of one die kind (the common ``NdX`` throw, and every single die)."""
        if n == 1:  # one die: ``choice`` is cheaper than a byte draw
            return [self._rng.choice(printed_faces(kind))]
        if n <= 0:
            return []
        table = _BYTE_TABLES.get(kind)
        if table is None:
            table = _byte_table(kind)
            if table is None:  # faces that do not fit a byte (a d300): the RNG's own choice
                faces = printed_faces(kind)
                return self._rng.choices(faces, k=n)
        mapping, rejected = table
        getrandbits = self._rng.getrandbits  # ``randbytes(m)`` is ``getrandbits(8m).to_bytes(m)``
        # a few spare bytes, so one draw nearly always covers the rejections (at most 127 in 256)
        m = n + 4 + (n >> 3)
        got = getrandbits(m << 3).to_bytes(m, "little").translate(mapping, rejected)
        if len(got) >= n:
            return list(got[:n])
        out = list(got)
        for _ in range(_MAX_DRAWS):  # each round keeps at least half its bytes on average
            m = 2 * (n - len(out))
            out.extend(getrandbits(m << 3).to_bytes(m, "little").translate(mapping, rejected))
            if len(out) >= n:
                return out[:n]
        choice, faces = self._rng.choice, printed_faces(kind)  # unreachable in practice; stays bounded
        out.extend(choice(faces) for _ in range(n - len(out)))
        return out

    def __repr__(self) -> str:
        return f"RandomSource(seed={self.seed!r})"


_DIE = itemgetter(1)  #: a DieSlot's kind, read in C
_MAX_DRAWS = 64
_BYTE_TABLES: dict[str, tuple[bytes, bytes] | None] = {}


def _byte_table(kind: str) -> tuple[bytes, bytes] | None:
    """``(mapping, rejected)`` for ``bytes.translate``: byte -> face, and the bytes to throw away.

    ``None`` when a face does not fit in a byte. Memoised per kind; the kinds are bounded by
    :data:`~dicetower.rules.faces.MAX_SIDES`, and a table is 512 bytes.
    """
    try:
        return _BYTE_TABLES[kind]
    except KeyError:
        pass
    faces = printed_faces(kind)  # validates the kind
    n = len(faces)
    table: tuple[bytes, bytes] | None = None
    if faces[-1] < 256 and n <= 256:
        accept = 256 - 256 % n  # the largest multiple of n that fits: bytes below it are uniform
        table = (
            bytes(faces[b % n] if b < accept else 0 for b in range(256)),
            bytes(range(accept, 256)),
        )
    _BYTE_TABLES[kind] = table
    return table


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


#: Base slots (plain role, no label) are immutable and the same for every roll, so they are
#: built once per kind and sliced out: ``NdX`` then costs one C-level slice, not N tuples.
#: Bounded: at most ``_CACHED_KINDS`` kinds, each up to slot ``_CACHED_SLOTS``.
_BASE_SLOTS: dict[str, tuple[DieSlot, ...]] = {}
_CACHED_KINDS = 32
_CACHED_SLOTS = 1024


def _base_slots(die: str, start: int, end: int) -> tuple[DieSlot, ...]:
    """Base slots ``start..end-1`` of kind ``die`` (validated, plain role, no label)."""
    run = _BASE_SLOTS.get(die)
    if run is not None and end <= len(run):
        return run[start:end]
    face_set(die)  # validates the kind before anything is cached under it
    new = tuple.__new__
    base, plain = Purpose.BASE, Role.PLAIN
    if end > _CACHED_SLOTS or (run is None and len(_BASE_SLOTS) >= _CACHED_KINDS):
        return tuple([new(DieSlot, (i, die, plain, base, None, "")) for i in range(start, end)])
    size = min(_CACHED_SLOTS, max(end, 2 * len(run or ()), 16))
    run = tuple([new(DieSlot, (i, die, plain, base, None, "")) for i in range(size)])
    _BASE_SLOTS[die] = run
    return run[start:end]


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

    def _room(self, n: int) -> tuple[int, int]:
        """The slot numbers ``start, end`` the next ``n`` dice would take; refuses past the budget."""
        start = self.used
        end = start + n
        if end > self.max_dice:
            raise RollLimitError(f"roll needs more than {self.max_dice} dice")
        return start, end

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
        used, end = self._room(1)
        if purpose is Purpose.BASE and role is Role.PLAIN and not label and of_slot is None:
            s = _base_slots(die, used, end)[0]
        else:
            s = DieSlot(used, die, role, purpose, of_slot, label)
        self.used = end
        return s

    def slots(self, die: str, n: int, *, role: Role = Role.PLAIN, label: str = "") -> list[DieSlot]:
        """Reserve ``n`` base slots of one kind at once (the hot path of ``NdX``)."""
        start, end = self._room(n)
        if role is Role.PLAIN and not label:
            got = list(_base_slots(die, start, end))
        else:
            face_set(die)
            new = tuple.__new__
            got = [new(DieSlot, (i, die, role, Purpose.BASE, None, label)) for i in range(start, end)]
        self.used = end
        return got

    def follow_ups(
        self, die: str, purpose: Purpose, of_slots: Sequence[int], role: Role = Role.PLAIN
    ) -> list[DieSlot]:
        """Reserve one follow-up slot of kind ``die`` for each slot number in ``of_slots``.

        The rerolls and explosions of one round; what :meth:`slot` does per die, checked once.
        """
        start, end = self._room(len(of_slots))
        if purpose is Purpose.BASE:
            raise ValueError("a follow-up slot needs a follow-up purpose (explosion or reroll)")
        if die not in _BASE_SLOTS:
            face_set(die)  # validates the kind (a cached kind was validated when cached)
        new = tuple.__new__
        got = [new(DieSlot, (i, die, role, purpose, o, "")) for i, o in enumerate(of_slots, start)]
        self.used = end
        return got

    def _ask(self, slots: tuple[DieSlot, ...], reason: str, kind: str | None = None) -> list[int]:
        """One request to the source: check its answer (count; faces unless it vouches) and record it."""
        source = self.source
        got = list(source.faces(DiceRequest(slots, reason, kind)))
        if len(got) != len(slots):
            raise RollLimitError(f"dice source answered {len(got)} faces for {len(slots)} dice")
        if not source.faces_are_valid:
            _check_faces(slots, got)
        self.thrown.extend(zip(slots, got, strict=True))
        return got

    def throw(self, slots: Sequence[DieSlot], reason: str = "") -> list[int]:
        """Ask the source for ``slots`` as one throw and record what came back."""
        return self._ask(tuple(slots), reason) if slots else []

    def throw_base(self, die: str, n: int, reason: str = "") -> tuple[tuple[DieSlot, ...], list[int]]:
        """Reserve ``n`` base slots of kind ``die`` and throw them: :meth:`slots` + :meth:`throw` in one.

        The hot path of every ``NdX`` term: the slots come from a shared cache and the request
        says which one kind they all are, so the source need not look at each slot.
        """
        start, end = self._room(n)
        if n <= 0:
            face_set(die)  # "0d6" throws nothing, but "0dX" of an unknown kind is still refused
            return (), []
        run = _BASE_SLOTS.get(die)
        slots = run[start:end] if run is not None and end <= len(run) else _base_slots(die, start, end)
        self.used = end
        return slots, self._ask(slots, reason, die)

    def throw_follow_ups(
        self, die: str, purpose: Purpose, of_slots: Sequence[int], reason: str = ""
    ) -> tuple[tuple[DieSlot, ...], list[int]]:
        """Reserve and throw one follow-up die of kind ``die`` per slot in ``of_slots``, as one request.

        :meth:`follow_ups` + :meth:`throw`, with the request saying which kind every slot is.
        """
        slots = tuple(self.follow_ups(die, purpose, of_slots))
        return (slots, self._ask(slots, reason, die)) if slots else ((), [])

    def throw_one(self, die: str, **kw) -> tuple[DieSlot, int]:
        """Reserve and throw a single die; returns its slot and printed face."""
        reason = kw.pop("reason", "")
        s = self.slot(die, **kw)
        return s, self.throw([s], reason)[0]


def _check_faces(slots: Sequence[DieSlot], got: Sequence[int]) -> None:
    """Validate every face against its die; one set lookup a die (``type(f) is int`` refuses bools)."""
    kind = slots[0].die
    if len(set(map(_DIE, slots))) == 1:
        valid = face_set(kind)
        if all(type(f) is int and f in valid for f in got):
            return
    for s, f in zip(slots, got, strict=True):
        if type(f) is not int or f not in face_set(s.die):
            check_face(s.die, f)  # raises with the full message
