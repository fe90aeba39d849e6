"""One slot shape: every document that names a die writes its slot through ``slot_json``."""

from __future__ import annotations

from dicetower.rules import FixedSource, Flag, RolledDie, get_system, roll, run_check
from dicetower.rules.result import slot_json
from dicetower.rules.source import DieSlot, Purpose, Role

SLOT_KEYS = ["slot", "die", "role", "purpose", "of_slot", "label"]


def test_a_slot_is_written_with_its_kind_as_die() -> None:
    slot = DieSlot(3, "d6", Role.WILD, Purpose.EXPLOSION, of_slot=1, label="wild die explosion 1")
    assert slot_json(slot) == {
        "slot": 3,
        "die": "d6",
        "role": "wild",
        "purpose": "explosion",
        "of_slot": 1,
        "label": "wild die explosion 1",
    }
    assert list(slot_json(DieSlot(0, "d20"))) == SLOT_KEYS


def test_a_rolled_die_is_its_slot_and_what_it_showed() -> None:
    die = RolledDie(DieSlot(0, "d10t", Role.TENS, label="d100 tens"), 70, 70, frozenset({Flag.KEPT}))
    j = die.to_json()
    assert {k: j[k] for k in SLOT_KEYS} == slot_json(die.slot)
    assert list(j) == [*SLOT_KEYS, "face", "value", "flags"]
    assert (j["face"], j["value"], j["flags"]) == (70, 70, ["kept"])


def test_notation_and_checks_write_the_same_slot_keys() -> None:
    rolled = roll("2d6+1", source=FixedSource([3, 4])).to_json()["dice"]
    check = run_check(get_system("wizard-quest"), "pool", FixedSource([6, 1]), {"level": 2}).to_json()["dice"]
    for d in [*rolled, *check]:
        assert list(d)[: len(SLOT_KEYS)] == SLOT_KEYS
    assert check[0]["label"] == "pool die 1"  # the rules' own words for the die travel with it
