"""The budget's and the RNG's hot paths keep the contract of the slow ones they stand in for.

``RollBudget.throw_base``/``throw_follow_ups`` (one call per ``NdX`` throw or follow-up round),
the shared cache of base slots, and ``RandomSource``'s byte-table draw must give the same
slots, the same checks and fair, replayable faces.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest
from dicetower.rules import (
    DiceRequest,
    DiceSource,
    DieSlot,
    FaceRangeError,
    FixedSource,
    Purpose,
    RandomSource,
    Role,
    RollBudget,
    RollLimitError,
)
from dicetower.rules.faces import printed_faces


class Answering(DiceSource):
    """A real source that answers every request with the faces it was built with."""

    def __init__(self, answer: list):
        self.answer = answer
        self.requests: list[DiceRequest] = []

    def faces(self, request: DiceRequest) -> list[int]:
        self.requests.append(request)
        return list(self.answer)


@pytest.mark.parametrize("kind", ["d2", "d6", "d7", "d10", "d10t", "d20", "d129", "d255", "d256", "d1000"])
def test_random_faces_of_one_kind_are_fair(kind: str) -> None:
    faces = printed_faces(kind)
    n = 200 * len(faces) if len(faces) <= 20 else 40 * len(faces)
    got = RandomSource(seed=kind).faces(DiceRequest(tuple(DieSlot(i, kind) for i in range(n))))
    assert len(got) == n
    assert all(type(f) is int for f in got)
    counts = Counter(got)
    assert set(counts) <= set(faces)
    # each face count is binomial(n, 1/k): within 5 sigma (a biased table would be far off)
    k = len(faces)
    mean, sigma = n / k, math.sqrt(n * (1 / k) * (1 - 1 / k))
    assert all(abs(counts[f] - mean) <= 5 * sigma for f in faces), counts.most_common(3)
    # and overall fit: chi-square with k-1 degrees of freedom, within 5 sigma of its mean
    chi2 = sum((counts[f] - mean) ** 2 / mean for f in faces)
    assert chi2 <= (k - 1) + 5 * math.sqrt(2 * (k - 1))


def test_large_throw_with_many_rejections_still_fills_every_slot() -> None:
    # a d129 rejects half the bytes, so one draw cannot cover 500 dice: the refill rounds run
    got = RandomSource(seed=4).same_kind("d129", 500)
    assert len(got) == 500 and set(got) <= set(printed_faces("d129"))


def test_kind_hint_gives_the_same_faces_as_looking_at_the_slots() -> None:
    slots = tuple(DieSlot(i, "d6") for i in range(12))
    assert RandomSource(seed=5).faces(DiceRequest(slots)) == RandomSource(seed=5).faces(
        DiceRequest(slots, "", "d6")
    )


def test_mixed_kinds_in_one_request_get_their_own_faces() -> None:
    slots = tuple(DieSlot(i, kind) for i, kind in enumerate(["d4", "d10t", "d20", "d6"] * 50))
    got = RandomSource(seed=6).faces(DiceRequest(slots))
    assert all(f in printed_faces(s.die) for s, f in zip(slots, got, strict=True))


def test_secure_random_source_draws_bytes_too() -> None:
    got = RandomSource().same_kind("d6", 600)
    assert len(got) == 600 and set(got) == set(printed_faces("d6"))


def test_seeded_throws_replay_and_differ_between_seeds() -> None:
    def throw(seed: int) -> list[int]:
        budget = RollBudget(RandomSource(seed))
        return (
            budget.throw_base("d6", 30, "x")[1]
            + budget.throw_follow_ups("d6", Purpose.REROLL, [0, 1], "y")[1]
        )

    assert throw(1) == throw(1)
    assert throw(1) != throw(2)


def test_cached_base_slots_equal_freshly_built_ones() -> None:
    budget = RollBudget(FixedSource([]), max_dice=5000)
    budget.used = 3
    got = budget.slots("d8", 4)
    assert got == [DieSlot(i, "d8") for i in range(3, 7)]
    assert budget.used == 7
    assert budget.slot("d8") == DieSlot(7, "d8")
    # past the cached range, and for a kind never seen: built on the spot, the same values
    assert budget.slots("d8", 1500)[-1] == DieSlot(1507, "d8")
    for sides in range(2, 80):  # more kinds than the cache keeps
        kind = f"d{sides}"
        assert RollBudget(FixedSource([])).slots(kind, 2) == [DieSlot(0, kind), DieSlot(1, kind)]


def test_labelled_and_role_slots_are_not_taken_from_the_cache() -> None:
    budget = RollBudget(FixedSource([]))
    assert budget.slots("d6", 2, role=Role.WILD, label="wild")[1] == DieSlot(1, "d6", Role.WILD, label="wild")
    assert budget.slot("d6", label="x") == DieSlot(2, "d6", label="x")


@pytest.mark.parametrize("kind", ["d0", "d1001", "x6", "d10tt", "d6t"])
def test_unknown_kinds_are_refused_by_every_hot_path(kind: str) -> None:
    budget = RollBudget(FixedSource([1, 1, 1]))
    with pytest.raises(ValueError):
        budget.slots(kind, 2)
    with pytest.raises(ValueError):
        budget.throw_base(kind, 2)
    with pytest.raises(ValueError):
        budget.throw_base(kind, 0)
    with pytest.raises(ValueError):
        budget.follow_ups(kind, Purpose.EXPLOSION, [0])
    with pytest.raises(ValueError):
        budget.slot(kind)


def test_follow_ups_name_their_slots_and_need_a_follow_up_purpose() -> None:
    budget = RollBudget(FixedSource([]))
    budget.slots("d6", 3)
    got = budget.follow_ups("d6", Purpose.EXPLOSION, [2, 0])
    assert got == [
        DieSlot(3, "d6", purpose=Purpose.EXPLOSION, of_slot=2),
        DieSlot(4, "d6", purpose=Purpose.EXPLOSION, of_slot=0),
    ]
    with pytest.raises(ValueError):
        budget.follow_ups("d6", Purpose.BASE, [0])


def test_hot_paths_count_against_the_dice_limit() -> None:
    budget = RollBudget(FixedSource([1] * 10), max_dice=5)
    with pytest.raises(RollLimitError):
        budget.throw_base("d6", 6)
    budget.throw_base("d6", 4)
    with pytest.raises(RollLimitError):
        budget.throw_follow_ups("d6", Purpose.REROLL, [0, 1])
    assert budget.used == 4


def test_hot_paths_check_what_the_source_answers() -> None:
    with pytest.raises(RollLimitError, match="answered 1 faces for 2 dice"):
        RollBudget(Answering([3])).throw_base("d6", 2)
    with pytest.raises(RollLimitError, match="answered 3 faces for 2 dice"):
        RollBudget(Answering([3, 3, 3])).throw_follow_ups("d6", Purpose.REROLL, [0, 1])
    with pytest.raises(FaceRangeError, match="face 7 is not on a d6"):
        RollBudget(Answering([3, 7])).throw_base("d6", 2)
    with pytest.raises(FaceRangeError):
        RollBudget(Answering([True, 2])).throw_base("d6", 2)  # a bool is not a face
    with pytest.raises(FaceRangeError, match="d10t"):
        RollBudget(Answering([5])).throw_follow_ups("d10t", Purpose.EXPLOSION, [0])


def test_hot_paths_send_a_real_request_and_log_the_throw() -> None:
    src = Answering([4, 5])
    budget = RollBudget(src)
    slots, faces = budget.throw_base("d6", 2, "initial throw")
    assert faces == [4, 5]
    follow, again = budget.throw_follow_ups("d6", Purpose.REROLL, [1, 0], "reroll r<6")
    assert again == [4, 5]
    first, second = src.requests
    assert (first.slots, first.reason, first.kind) == (tuple(slots), "initial throw", "d6")
    assert not first.is_follow_up and second.is_follow_up
    assert [(s.slot, s.of_slot, s.purpose) for s in second.slots] == [
        (2, 1, Purpose.REROLL),
        (3, 0, Purpose.REROLL),
    ]
    assert budget.thrown == [(slots[0], 4), (slots[1], 5), (follow[0], 4), (follow[1], 5)]
    assert budget.throw_base("d6", 0) == ((), [])
