"""hardware/perfboard.md: the driver board can be built as laid out, and is the circuit of wiring.svg.

Each pin's hole is on the 2.54 mm grid of the board spec.toml gives, clear of the corner screws; no hole is
used twice; each part's leads are at the pitch its package has; and the nets join what the circuit joins (the
solenoid's flyback diode across it, the gate network, the pull-downs, the sources on ground).
"""

from __future__ import annotations

import itertools
import math
import re
import tomllib
from collections import defaultdict

import pytest
from rendering import HARDWARE

SPEC = tomllib.loads((HARDWARE / "spec.toml").read_text(encoding="utf-8"))
TEXT = (HARDWARE / "perfboard.md").read_text(encoding="utf-8")
PITCH = 2.54
ROWS = "ABCDEFGHIJKLMNOPQRS"
#: The lead spacing of each part, in holes: a TO-220's adjacent legs, a ¼ W resistor or an axial diode lying
#: flat (10.16 mm), a 5 mm radial capacitor or a 5.08 mm terminal.
LEADS = {"Q": 1, "R": 4, "D": 4, "C": 2, "X": 2}


def layout() -> list[tuple[str, str, str, str]]:
    """(ref, pin, hole, net) for each row of the table; a row without a ref continues the part above."""
    rows, ref = [], ""
    for line in TEXT.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and re.fullmatch(r"\d+[A-S]", cells[3]):
            ref = cells[0] or ref
            rows.append((ref, cells[2], cells[3], cells[4]))
    return rows


def position(hole: str) -> tuple[int, int]:
    """``"10E"`` as (column, row), both from 1."""
    match = re.fullmatch(r"(\d+)([A-S])", hole)
    assert match, hole
    return int(match.group(1)), ROWS.index(match.group(2)) + 1


def nets() -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for ref, pin, _hole, net in layout():
        out[net].add(f"{ref}.{pin}")
    return out


def test_every_hole_is_on_the_board_clear_of_the_screws_and_used_once() -> None:
    width, height = SPEC["perfboard"]["board_mm"]
    columns, rows = int(width // PITCH), int(height // PITCH)
    assert (columns, rows) == (27, len(ROWS)), "the grid the table names is not the board's"
    holes = [hole for _ref, _pin, hole, _net in layout()]
    assert len(holes) == len(set(holes)), [h for h in holes if holes.count(h) > 1]
    for hole in holes:
        column, row = position(hole)
        assert 1 <= column <= columns and 1 <= row <= rows, hole
        corner = (column <= 2 or column > columns - 2) and (row <= 2 or row > rows - 2)
        assert not corner, f"{hole} is under a corner screw"


def test_each_parts_leads_are_at_its_pitch() -> None:
    pins: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for ref, _pin, hole, _net in layout():
        pins[ref].append(position(hole))
    for ref, holes in pins.items():
        step = LEADS[ref[0]]
        expected = 3 if ref[0] == "Q" else 2
        assert len(holes) == expected, ref
        for a, b in itertools.pairwise(holes):
            assert math.dist(a, b) == step, f"{ref}: leads {a} and {b} are not {step} holes apart"
            assert a[0] == b[0] or a[1] == b[1], f"{ref}: its leads are not in a line"


def test_the_board_carries_what_the_parts_list_puts_on_it() -> None:
    refs = {ref for ref, *_ in layout()}
    assert refs == {"Q1", "Q2", "D1", "D2", "C1", "C2", "R1", "R2", "R3", "R4"} | {
        f"X{i}" for i in range(1, 7)
    }
    bom = (HARDWARE / "bom.md").read_text(encoding="utf-8")
    assert "Carries Q1, Q2, D1, D2, C1, C2 and R1–R4" in bom
    assert re.search(r"\| 6 \| Screw terminals \| 2-way, 5\.08 mm pitch \|", bom)
    assert "[perfboard.md](perfboard.md)" in (HARDWARE / "BUILD.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("net", "pins"),
    [
        ("+12V", {"X1.1", "X2.1", "X3.1", "X4.1", "D1.K", "C1.+"}),
        ("GND", {"X1.2", "X4.2", "X6.1", "X6.2", "Q1.S", "Q2.S", "C1.−", "R2.2", "D2.A", "R4.2"}),
        ("SOL−", {"X2.2", "Q1.D", "D1.A"}),  # the flyback diode across the solenoid, stripe to +12 V
        ("LIGHT−", {"X3.2", "Q2.D"}),
        ("GPIO17", {"X5.1", "R1.1"}),
        ("N1", {"R1.2", "C2.1"}),
        ("GATE1", {"C2.2", "Q1.G", "R2.1", "D2.K"}),  # C2 couples the gate; R2 and D2 to ground
        ("GPIO25", {"X5.2", "R3.1"}),
        ("GATE2", {"R3.2", "Q2.G", "R4.1"}),
    ],
)
def test_each_net_joins_what_the_circuit_joins(net: str, pins: set[str]) -> None:
    assert nets()[net] == pins


def test_no_net_is_left_with_one_pin() -> None:
    assert all(len(pins) >= 2 for pins in nets().values()), nets()
