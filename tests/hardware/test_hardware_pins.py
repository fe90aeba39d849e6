"""hardware/: the pin table agrees with the config defaults and the header; the drawing and the parts list
agree with the table.

A builder wires from ``hardware/pins.md`` and ``hardware/wiring.svg`` and the software drives what
``DEFAULT_CONFIG.pins`` names: a pin moved in one and not the other fires the solenoid from the wrong wire.
"""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

HARDWARE = Path(__file__).resolve().parents[2] / "hardware"
SVG_NS = "{http://www.w3.org/2000/svg}"

#: The Raspberry Pi 40-pin header (every model since the B+, Pi 4 and Pi 5 alike): physical pin -> signal.
HEADER: dict[int, str] = {
    1: "3V3", 2: "5V", 3: "GPIO2", 4: "5V", 5: "GPIO3", 6: "GND", 7: "GPIO4", 8: "GPIO14", 9: "GND",
    10: "GPIO15", 11: "GPIO17", 12: "GPIO18", 13: "GPIO27", 14: "GND", 15: "GPIO22", 16: "GPIO23", 17: "3V3",
    18: "GPIO24", 19: "GPIO10", 20: "GND", 21: "GPIO9", 22: "GPIO25", 23: "GPIO11", 24: "GPIO8", 25: "GND",
    26: "GPIO7", 27: "GPIO0", 28: "GPIO1", 29: "GPIO5", 30: "GND", 31: "GPIO6", 32: "GPIO12", 33: "GPIO13",
    34: "GND", 35: "GPIO19", 36: "GPIO16", 37: "GPIO26", 38: "GPIO20", 39: "GND", 40: "GPIO21",
}  # fmt: skip


def markdown_table(text: str, heading: str) -> list[dict[str, str]]:
    """The first table under ``## heading`` as one dict per row, keyed by the header cells."""
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line.strip() for line in section.splitlines() if line.strip().startswith("|")]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    header, separator, *rows = cells
    assert all(set(cell) <= set("-: ") for cell in separator)
    for row in rows:
        assert len(row) == len(header), row
    return [dict(zip(header, row, strict=True)) for row in rows]


@pytest.fixture(scope="module")
def signals() -> list[dict[str, str]]:
    return markdown_table((HARDWARE / "pins.md").read_text(encoding="utf-8"), "Signals")


@pytest.fixture(scope="module")
def power() -> list[dict[str, str]]:
    return markdown_table((HARDWARE / "pins.md").read_text(encoding="utf-8"), "Power and ground")


def config_key(row: dict[str, str]) -> str:
    match = re.fullmatch(r"`pins\.(\w+)`", row["Config key"])
    assert match, row
    return match.group(1)


def bcm(row: dict[str, str]) -> int:
    match = re.fullmatch(r"GPIO(\d+)", row["BCM GPIO"])
    assert match, row
    return int(match.group(1))


def test_each_signal_sits_on_the_header_pin_the_table_names(signals: list[dict[str, str]]) -> None:
    for row in signals:
        assert HEADER[int(row["Header pin"])] == row["BCM GPIO"], row
    assert len({row["Header pin"] for row in signals}) == len(signals)
    assert len({row["BCM GPIO"] for row in signals}) == len(signals)


def test_power_and_ground_rows_name_power_and_ground_pins(power: list[dict[str, str]]) -> None:
    for row in power:
        pins = [int(n) for n in re.findall(r"\d+", row["Header pin"])]
        expected = {"5 V in": "5V", "Ground": "GND", "3.3 V": "3V3"}[row["Function"]]
        assert pins and all(HEADER[pin] == expected for pin in pins), row


def test_the_table_matches_the_config_defaults(signals: list[dict[str, str]]) -> None:
    config = pytest.importorskip(
        "dicetower.firmware.config", reason="dicetower.firmware.config is not in this build"
    )
    pins = config.DEFAULT_CONFIG.pins
    for row in signals:
        assert getattr(pins, config_key(row)) == bcm(row), row
    gpio_fields = {
        f.name
        for f in dataclasses.fields(pins)
        if isinstance(getattr(pins, f.name), int) and f.name != "factory"
    }
    assert gpio_fields == {config_key(row) for row in signals}


def test_the_button_is_wired_to_ground_as_its_pull_up_expects(signals: list[dict[str, str]]) -> None:
    button = next(row for row in signals if config_key(row) == "button")
    assert "pull-up" in button["Direction"] and "active low" in button["Direction"]
    ground_pin = re.search(r"header pin (\d+)", button["Connects to"])
    assert ground_pin and HEADER[int(ground_pin.group(1))] == "GND"


def svg_text(path: Path) -> list[str]:
    root = ET.parse(path).getroot()  # raises on malformed XML
    assert root.tag == f"{SVG_NS}svg"
    return [" ".join("".join(el.itertext()).split()) for el in root.iter(f"{SVG_NS}text")]


def test_wiring_svg_is_well_formed_and_labels_every_signal(signals: list[dict[str, str]]) -> None:
    texts = svg_text(HARDWARE / "wiring.svg")
    joined = "\n".join(texts)
    for row in signals:
        gpio, pin = row["BCM GPIO"], row["Header pin"]
        # The header drawing names every pin; the circuit side says which pin each wire leaves from.
        assert any(text == gpio for text in texts), f"{gpio} is not a pin label in wiring.svg"
        assert f"pin {pin} ({gpio})" in joined, f"no wire in wiring.svg says 'pin {pin} ({gpio})'"


def test_wiring_svg_draws_the_whole_header() -> None:
    texts = set(svg_text(HARDWARE / "wiring.svg"))
    for pin in HEADER:
        assert str(pin) in texts, f"header pin {pin} is not numbered in wiring.svg"


def references(text: str) -> set[str]:
    return set(re.findall(r"\b(?:R|C|D|Q|S|U|F|J|L|LED)\d+\b", text))


def test_every_part_the_table_names_is_drawn_and_in_the_bom(signals: list[dict[str, str]]) -> None:
    named = set().union(*(references(row["Connects to"]) for row in signals))
    assert {"R1", "C2", "Q1", "Q2", "S1"} <= named
    drawn = references("\n".join(svg_text(HARDWARE / "wiring.svg")))
    listed = references((HARDWARE / "bom.md").read_text(encoding="utf-8"))
    assert named <= drawn, f"in pins.md, not in wiring.svg: {sorted(named - drawn)}"
    assert drawn <= listed, f"drawn in wiring.svg, not in bom.md: {sorted(drawn - listed)}"
