"""The taught reader's running figure: the drift rule on made-up confidences (vision/taught/drift.py)."""

from __future__ import annotations

import pytest
from dicetower.vision.reading import DieReading, Reading, ReadStatus, UnreadableReason
from dicetower.vision.taught.drift import MIN_DICE, WINDOW, Baseline, DriftMonitor, reads_of

#: 97 right of 100 held back: Clopper-Pearson 95 % interval 91.5 % to 99.4 %.
BLUE = Baseline("blue d20", "d20", "blue", 0.8, 100, 97, (0.9148, 0.9938))
WHITE = Baseline("white d6", "d6", "white", 0.6, 60, 60, (0.9404, 1.0))
OVERALL = Baseline("", "", "", 0.0, 160, 157, (0.9462, 0.9961))


def _monitor() -> DriftMonitor:
    return DriftMonitor([BLUE, WHITE], OVERALL)


def _feed(monitor: DriftMonitor, die: str, sure: int, unsure: int) -> None:
    monitor.add_reads([(die, 0.99)] * sure + [(die, 0.3)] * unsure)


def test_a_reader_as_sure_as_when_taught_is_not_drifting() -> None:
    m = _monitor()
    _feed(m, "blue d20", 49, 1)
    blue = m.figures()[0]
    assert (blue.recent, blue.sure, blue.share) == (50, 49, 0.98)
    assert not blue.drifting and not m.drifting and m.messages() == []


def test_a_die_read_surely_far_less_often_is_drifting_and_named() -> None:
    m = _monitor()
    _feed(m, "blue d20", 20, 30)
    assert m.drifting
    assert m.messages() == [
        "the blue d20 is read surely 40 % of the time (20 of 50 recent) against 97 % when taught"
    ]
    report = m.to_json()
    assert report["drifting"] is True
    blue = report["dice"][0]
    assert blue["id"] == "blue d20" and blue["sure_share"] == 0.4 and blue["held_back_right_rate"] == 0.97
    assert blue["sure_interval"][1] < blue["held_back_interval"][0]
    assert report["dice"][1] == {**report["dice"][1], "recent": 0, "drifting": False}


@pytest.mark.parametrize(
    ("sure", "drifting"),
    [
        (45, False),  # 90 %: its interval (78 % to 97 %) still reaches the held-back one (from 91.5 %)
        (40, True),  # 80 %: at most 90 %, below 91.5 %
    ],
)
def test_a_dip_is_drifting_only_when_the_intervals_part(sure: int, drifting: bool) -> None:
    m = _monitor()
    _feed(m, "blue d20", sure, WINDOW - sure)
    assert m.figures()[0].drifting is drifting


def test_too_few_reads_judge_nothing() -> None:
    m = _monitor()
    _feed(m, "white d6", 0, MIN_DICE - 1)
    assert not m.drifting
    _feed(m, "white d6", 0, 1)
    assert m.drifting


def test_the_window_forgets_older_reads() -> None:
    m = _monitor()
    _feed(m, "white d6", 0, WINDOW)
    assert m.drifting
    _feed(m, "white d6", WINDOW, 0)  # taught again, or the light put back
    assert not m.drifting and m.figures()[1].recent == WINDOW


def test_the_model_drifts_when_no_die_has_enough_reads_alone() -> None:
    m = _monitor()
    _feed(m, "blue d20", 2, 13)
    _feed(m, "white d6", 2, 13)
    assert not any(f.drifting for f in m.figures())
    assert m.model_figure().drifting and m.drifting
    assert m.messages() == [
        "the taught dice are read surely 13 % of the time (4 of 30 recent) against 98 % when taught"
    ]


def test_a_die_not_recognised_by_its_body_is_not_read_surely() -> None:
    m = _monitor()
    m.add_reads([("white d6", None)] * 30)
    white = m.figures()[1]
    assert white.unrecognised == 30 and white.sure == 0 and white.mean_confidence is None
    assert "30 not recognised" in white.message()


def test_a_confidence_under_the_die_threshold_is_not_sure() -> None:
    m = _monitor()
    m.add_reads([("white d6", 0.65), ("blue d20", 0.65)])
    blue, white = m.figures()
    assert white.sure == 1 and blue.sure == 0  # thresholds 0.6 and 0.8
    assert white.mean_confidence == pytest.approx(0.65)


def test_reads_of_a_frame_count_dice_named_as_taught_but_not_recognised() -> None:
    def die(colour: str, kind: str = "d6", reason: UnreadableReason | None = None) -> DieReading:
        status = ReadStatus.READ if reason is None else ReadStatus.UNREADABLE
        return DieReading((0, 0, 10, 10), kind, 3 if reason is None else None, status, reason, 0.9, colour)

    reading = Reading(
        (
            die("white"),
            die("white"),
            die("white"),
            die("white", reason=UnreadableReason.CUT_OFF),  # a fact of the photo: never re-read
            die("red"),
            die("blue", "d20"),
        )
    )
    colourless = Baseline("d20", "d20", "", 0.8, 10, 10, (0.69, 1.0))
    reads = reads_of(reading, [("white d6", 0.97)], [WHITE, colourless])
    assert reads == [("white d6", 0.97), ("white d6", None), ("white d6", None)]


def test_the_figure_is_kept_and_taken_back() -> None:
    m = _monitor()
    _feed(m, "blue d20", 20, 30)
    m.add("a die no longer taught", 0.5)  # ignored
    again = _monitor()
    again.restore(m.state())
    assert again.to_json() == m.to_json() and again.drifting
    with pytest.raises(ValueError, match="is 0"):
        _monitor().restore({"dice": {"blue d20": [7.0]}})


def test_from_a_card() -> None:
    card = {
        "held_back": {"dice": 36, "right": 36, "right_interval": [0.9026, 1.0]},
        "dice": [
            {
                "id": "white d6",
                "kind": "d6",
                "colour": "white",
                "threshold": 0.5,
                "figures": {"dice": 36, "right": 36, "right_interval": [0.9026, 1.0]},
            }
        ],
    }
    m = DriftMonitor.from_card(card)
    assert m.dice["white d6"] == Baseline("white d6", "d6", "white", 0.5, 36, 36, (0.9026, 1.0))
    assert m.overall.held_back == 36
    with pytest.raises(ValueError, match="min_dice"):
        DriftMonitor.from_card(card, window=10, min_dice=20)


def test_a_card_read_end_to_end_is_judged_by_the_share_its_heads_read_surely() -> None:
    """The live tower sees the dice each head read and how surely: the card's end-to-end figures
    say the same of the held-back photos, so drift compares those, not the right rate (which
    counts dice the locator never found, invisible to the live figure)."""
    die = {
        "id": "blue d20",
        "kind": "d20",
        "colour": "blue",
        "threshold": 0.9,
        # 40 of 100 held-back dice right (many not found), but 98 of 100 read by its head read surely
        "figures": {
            "dice": 100,
            "right": 40,
            "right_interval": [0.303, 0.503],
            "read_by_die": 100,
            "sure": 98,
        },
    }
    m = DriftMonitor.from_card({"dice": [die], "held_back": {"dice": 100, "right": 40}})
    assert m.dice["blue d20"].right == 98 and m.dice["blue d20"].interval[0] > 0.9
    assert m.overall.held_back == 100 and m.overall.right == 98
    m.add_reads([("blue d20", 0.95)] * 30 + [("blue d20", 0.5)] * 20)  # 60 % sure: below 98 %
    assert m.drifting and "60 %" in m.messages()[0] and "98 %" in m.messages()[0]
    old = {**die, "figures": {"dice": 100, "right": 40, "right_interval": [0.303, 0.503]}}
    assert DriftMonitor.from_card({"dice": [old]}).dice["blue d20"].right == 40  # an older card: right rate
