"""Dice sources and the roll budget: the contract every rule asks its dice through."""

from __future__ import annotations

import pytest
from dicetower.rules import (
    DiceRequest,
    DiceSource,
    DieSlot,
    ExtraFacesError,
    FaceMissingError,
    FaceRangeError,
    FixedSource,
    Purpose,
    RandomSource,
    Role,
    RollBudget,
    RollLimitError,
    roll,
)
from dicetower.rules.faces import printed_faces


class RecordingSource(DiceSource):
    """A real source that remembers each request (a stand-in for the tower's camera)."""

    def __init__(self, inner: DiceSource):
        self.inner = inner
        self.requests: list[DiceRequest] = []
        self.finished = 0

    def faces(self, request: DiceRequest) -> list[int]:
        self.requests.append(request)
        return self.inner.faces(request)

    def finish(self) -> None:
        self.finished += 1
        self.inner.finish()


def test_fixed_source_hands_out_faces_in_order_and_checks_them() -> None:
    src = FixedSource([3, 0, 70])
    req = DiceRequest((DieSlot(0, "d6"), DieSlot(1, "d10"), DieSlot(2, "d10t", Role.TENS)))
    assert src.faces(req) == [3, 0, 70]
    assert src.remaining == []
    src.finish()


def test_fixed_source_errors() -> None:
    with pytest.raises(FaceRangeError):
        FixedSource([7]).faces(DiceRequest((DieSlot(0, "d6"),)))
    with pytest.raises(FaceRangeError):
        FixedSource([10]).faces(DiceRequest((DieSlot(0, "d10"),)))  # a d10 prints 0-9
    with pytest.raises(FaceMissingError, match="d20"):
        FixedSource([]).faces(DiceRequest((DieSlot(0, "d20"),)))
    src = FixedSource([1, 2])
    src.faces(DiceRequest((DieSlot(0, "d6"),)))
    with pytest.raises(ExtraFacesError, match="2"):
        src.finish()


@pytest.mark.parametrize("kind", ["d4", "d6", "d10", "d10t", "d20", "d7"])
def test_random_source_faces_are_printed_faces(kind: str) -> None:
    src = RandomSource(seed=3)
    slots = tuple(DieSlot(i, kind) for i in range(300))
    got = src.faces(DiceRequest(slots))
    assert set(got) <= set(printed_faces(kind))
    assert len(set(got)) == len(printed_faces(kind))  # 300 throws show every face


def test_random_source_seed_replays() -> None:
    req = DiceRequest(tuple(DieSlot(i, "d20") for i in range(50)))
    assert RandomSource(seed=9).faces(req) == RandomSource(seed=9).faces(req)
    assert RandomSource(seed=9).faces(req) != RandomSource(seed=10).faces(req)


def test_budget_numbers_slots_and_stops_at_the_limit() -> None:
    budget = RollBudget(FixedSource([1, 2]), max_dice=2)
    a = budget.slot("d6")
    b = budget.slot("d6", purpose=Purpose.REROLL, of_slot=0)
    assert (a.slot, b.slot, b.of_slot) == (0, 1, 0)
    with pytest.raises(RollLimitError):
        budget.slot("d6")
    assert budget.throw([a, b]) == [1, 2]
    assert budget.thrown == [(a, 1), (b, 2)]


def test_follow_up_slot_must_name_its_slot() -> None:
    with pytest.raises(ValueError):
        DieSlot(1, "d6", purpose=Purpose.EXPLOSION)


def test_notation_asks_the_source_per_throw_and_calls_finish_once() -> None:
    src = RecordingSource(FixedSource([6, 2, 5, 1, 3]))
    # 3d6r1!: initial throw (6, 2, 5) has no 1 to reroll; the 6 explodes into a 1, which is
    # not rerolled (r applies to the initial dice only), so the 3 is left over
    with pytest.raises(ExtraFacesError):
        roll("3d6r1!", source=src)
    assert [len(r) for r in src.requests] == [3, 1]
    assert not src.requests[0].is_follow_up
    assert src.requests[1].is_follow_up
    assert src.requests[1].slots[0].of_slot == 0
    assert src.finished == 1


def test_percentile_pairs_are_asked_as_tens_and_units() -> None:
    src = RecordingSource(FixedSource([90, 9, 0, 0]))
    assert roll("2d%", source=src).total == 99
    (req,) = src.requests
    assert [(s.die, s.role) for s in req.slots] == [
        ("d10t", Role.TENS),
        ("d10", Role.UNITS),
        ("d10t", Role.TENS),
        ("d10", Role.UNITS),
    ]


def test_rerolled_pair_names_both_old_slots() -> None:
    src = RecordingSource(FixedSource([0, 0, 50, 5]))
    assert roll("d%r0", source=src).total == 55
    follow = src.requests[1].slots
    assert [(s.purpose, s.of_slot, s.role) for s in follow] == [
        (Purpose.REROLL, 0, Role.TENS),
        (Purpose.REROLL, 1, Role.UNITS),
    ]
