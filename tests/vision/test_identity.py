"""Identity: configured dice matched by kind and colour, left to right, stable under a tinted light."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from dicetower.vision.identity import (
    DiceSetError,
    assign,
    identify,
    identify_loaded,
    kind_is_sure,
    white_balance_gains,
)
from dicetower.vision.reading import DieReading, ReadStatus, UnreadableReason
from dicetower.vision.synth.numerals import NumeralStyle, TrayDie, render_tray

FLAT = NumeralStyle(light=0.0, perspective=0.0, tray=(110, 110, 110), marbled=0.0, translucent=0.0)
DICE = [
    TrayDie("d6", 3, "red", "solid"),
    TrayDie("d6", 5, "white", "solid"),
    TrayDie("d10t", 40, "blue", "solid"),
    TrayDie("d10", 7, "blue", "solid"),
    TrayDie("d20", 12, "green", "solid"),
    TrayDie("d6", 2, "red", "solid"),
]
SET = {
    "wild": ("d6", "red"),
    "second_red": ("d6", "red"),
    "skill": ("d6", "white"),
    "tens": ("d10t", "blue"),
    "units": ("d10", "blue"),
    "hit": ("d20", "green"),
}


def _readings(labels: list) -> list[DieReading]:
    return [DieReading(box=d.box, kind=d.die, face=d.face) for d in labels]


def _tint(img: np.ndarray, gains: tuple[float, float, float]) -> np.ndarray:
    return np.clip(img.astype(np.float32) * np.array(gains, np.float32), 0, 255).astype(np.uint8)


def _expected(labels: list) -> dict[int, str]:
    reds = sorted((i for i in (0, 5)), key=lambda i: labels[i].box[0] + labels[i].box[2] / 2)
    return {reds[0]: "wild", reds[1]: "second_red", 1: "skill", 2: "tens", 3: "units", 4: "hit"}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_configured_die_is_found(seed: int) -> None:
    frame, ref, labels = render_tray(seed, DICE, style=FLAT)
    got = identify(_readings(labels), SET, frame, ref)
    assert {g.index: g.name for g in got} == _expected(labels)


@pytest.mark.parametrize("tint", [(0.7, 0.95, 1.25), (1.3, 1.0, 0.75)])
def test_colours_hold_under_a_tinted_light(tint: tuple[float, float, float]) -> None:
    frame, ref, labels = render_tray(4, DICE, style=FLAT)
    frame, ref = _tint(frame, tint), _tint(ref, tint)
    got = identify(_readings(labels), SET, frame, ref)
    assert {g.index: g.name for g in got} == _expected(labels)
    corrected = white_balance_gains(ref) * np.array(tint)  # gains undo the tint: equal channels
    assert np.ptp(corrected) / corrected.mean() < 0.1


def test_without_the_reference_a_strong_tint_misnames_colours() -> None:
    frame, ref, labels = render_tray(4, DICE, style=FLAT)
    frame = _tint(frame, (0.55, 0.9, 1.4))
    blind = identify(_readings(labels), SET, frame, None)
    balanced = identify(_readings(labels), SET, frame, _tint(ref, (0.55, 0.9, 1.4)))
    assert [g.colour for g in blind] != [g.colour for g in balanced]


def test_unconfigured_and_unreadable_dice_match_none() -> None:
    frame, ref, labels = render_tray(5, DICE, style=FLAT)
    dice = _readings(labels)
    dice[1] = DieReading(box=dice[1].box, status=ReadStatus.UNREADABLE, reason=UnreadableReason.COCKED)
    got = identify(dice, {"wild": ("d6", "red"), "hit": ("d20", "blue")}, frame, ref)
    names = [g.name for g in got]
    assert names.count("wild") == 1 and "hit" not in names and names[1] is None
    assert sum(n is None for n in names) == 5


@pytest.mark.parametrize("bad", [{"": ("d6", "red")}, {"a": ("d6",)}, {"a": "d6 red"}])
def test_bad_dice_sets_are_refused(bad: dict) -> None:
    with pytest.raises(DiceSetError):
        identify([], bad)


def _die(x: float, hsv: tuple[int, int, int], kind: str = "d6") -> DieReading:
    return DieReading(box=(x, 10.0, 20.0, 20.0), kind=kind, face=3, hsv=hsv)


PALE_RED = (175, 70, 235)  # named white: pale and bright, yet a few delta E from red
WHITE = (0, 10, 240)


def test_a_die_near_its_configured_colour_is_still_found() -> None:
    """A pale red wild die named white is the wild die when the white die is the skill die."""
    dice = [_die(10, WHITE), _die(60, PALE_RED)]
    got = identify(dice, {"wild": ("d6", "red"), "skill": ("d6", "white")})
    assert [g.colour for g in got] == ["white", "white"]
    assert [g.name for g in got] == ["skill", "wild"]


def test_a_die_far_from_every_configured_colour_matches_none() -> None:
    """A white die is no red die's stand-in, even when the red one is missing."""
    got = identify([_die(10, WHITE)], {"wild": ("d6", "red")})
    assert got[0].name is None


def test_a_numeral_d6_in_the_set_is_a_d6_of_the_reading() -> None:
    got = identify([_die(10, (0, 220, 200))], {"wild": ("d6n", "red")})
    assert got[0].name == "wild"


def test_assign_pairs_at_least_total_cost() -> None:
    """The pairing's total is the least of every pairing (brute force on small matrices)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        n, m = (int(v) for v in rng.integers(1, 6, 2))
        cost = rng.random((n, m))
        got = assign(cost)
        assert len(got) == min(n, m) and len({r for r, _ in got}) == len({c for _, c in got}) == len(got)
        if n <= m:
            best = min(sum(cost[r, p[r]] for r in range(n)) for p in itertools.permutations(range(m), n))
        else:
            best = min(sum(cost[p[c], c] for c in range(m)) for p in itertools.permutations(range(n), m))
        assert sum(cost[r, c] for r, c in got) == pytest.approx(best)


# -- identify_loaded: every located die paired with a loaded die, faces read or not (teaching)

WHITE, RED, PALE_RED, BLUE = (0, 0, 235), (0, 204, 200), (0, 77, 215), (111, 217, 200)


def _located(
    x: float, kind: str, hsv: tuple[int, int, int], colour: str, reason: UnreadableReason | None = None
):
    status = ReadStatus.READ if reason is None else ReadStatus.UNREADABLE
    face = 3 if reason is None else None
    return DieReading((x, 10.0, 40.0, 40.0), kind, face, status, reason, colour=colour, hsv=hsv)


def test_unread_faces_still_pair_each_die_by_its_sure_kind_and_its_colour() -> None:
    low = UnreadableReason.LOW_CONFIDENCE
    dice = [
        _located(0, "d20", BLUE, "blue", low),
        _located(60, "d6", WHITE, "white", low),
        _located(120, "d6", RED, "red"),
    ]
    loaded = [("d6", "red"), ("d6", "white"), ("d20", "blue")]
    assert identify_loaded(dice, loaded) == [2, 1, 0]


def test_a_die_of_an_unsure_kind_is_paired_by_colour_alone_with_what_is_left() -> None:
    unsure = UnreadableReason.KIND_UNSURE
    # the reader guessed d6 for the white d10; the sure d6 keep the d6, the white d10 is what is left
    dice = [
        _located(0, "d6", WHITE, "white", unsure),
        _located(60, "d6", WHITE, "white"),
        _located(120, "d10t", RED, "red"),
    ]
    loaded = [("d6", "white"), ("d10", "white"), ("d10t", "red")]
    assert identify_loaded(dice, loaded) == [1, 0, 2]
    # an unreadable "d6" is the pip reader's answer for any die: its kind is not sure either
    assert not kind_is_sure(_located(0, "d6", WHITE, "white", UnreadableReason.LOW_CONFIDENCE))
    assert kind_is_sure(_located(0, "d20", WHITE, "white", UnreadableReason.LOW_CONFIDENCE))


def test_the_nearest_colour_wins_with_no_threshold_the_count_being_known() -> None:
    dice = [_located(0, "d6", PALE_RED, "white"), _located(60, "d6", WHITE, "white")]
    assert identify_loaded(dice, [("d6", "white"), ("d6", "red")]) == [1, 0]


def test_a_sure_kind_no_loaded_die_is_left_for_is_not_paired() -> None:
    dice = [_located(0, "d10", WHITE, "white"), _located(60, "d6", WHITE, "white")]
    assert identify_loaded(dice, [("d20", "white"), ("d6", "white")]) == [None, 1]
    assert identify_loaded([], [("d6", "white")]) == []
