"""hardware/spec.toml is the one source of the values several places quote; every place agrees with it.

Checked against it: the documents (hardware/*.md, wiring.svg, docs/tower.md, README.md), the config's
defaults, the shaker's docstring, the package's mirror of the tower's scale (dicetower.vision.tower_scale),
the simulated camera's tray and die sizes, and tower.scad's parameters and echoed figures. A value changed in
one place and not the others (a pull-down that reads 10 kΩ in one file and 100 kΩ in another, a cable that one
file calls long enough and another too short) fails here, naming the file.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from dicetower.firmware import config as config_module
from dicetower.firmware.config import DEFAULT_CONFIG
from dicetower.vision import tower_scale
from rendering import HARDWARE, Rendered

ROOT = HARDWARE.parent
SPEC = tomllib.loads((HARDWARE / "spec.toml").read_text(encoding="utf-8"))
SVG_NS = "{http://www.w3.org/2000/svg}"
#: Every document a builder reads: checked for the quoted values.
DOCS = [
    *sorted(HARDWARE.glob("*.md")),
    HARDWARE / "wiring.svg",
    ROOT / "docs" / "tower.md",
    ROOT / "README.md",
    ROOT / "systemd" / "README.md",
]
VALUE = r"(\d+(?:\.\d+)?)\s?([kM]?Ω|[µn]F)"


def text_of(path: Path) -> str:
    """A document's text: an SVG's text elements in document order, one line each."""
    if path.suffix == ".svg":
        root = ET.parse(path).getroot()
        return "\n".join(" ".join("".join(el.itertext()).split()) for el in root.iter(f"{SVG_NS}text"))
    return path.read_text(encoding="utf-8")


def svg_pairs(path: Path) -> str:
    """An SVG's text elements joined by spaces, so a reference and the value drawn after it read as one."""
    return text_of(path).replace("\n", " ")


def sentences(path: Path) -> list[str]:
    """A document's sentences and table cells; an SVG's text elements."""
    if path.suffix == ".svg":
        return text_of(path).splitlines()
    return re.split(r"(?<=[.|])\s|\n\n", text_of(path))


def normalised(value: str) -> str:
    number, unit = re.fullmatch(VALUE, value.strip()).groups()  # type: ignore[union-attr]
    return f"{float(number):g} {unit}"


def table_rows(text: str) -> list[list[str]]:
    return [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|")
    ]


def test_the_pins_agree_with_the_config_and_the_pin_table() -> None:
    pins = DEFAULT_CONFIG.pins
    for name, pin in SPEC["pins"].items():
        assert getattr(pins, name) == pin["gpio"], name
    table = table_rows(text_of(HARDWARE / "pins.md"))
    rows = {row[4]: row for row in table if len(row) > 4 and row[4].startswith("`pins.")}
    for name, pin in SPEC["pins"].items():
        row = rows[f"`pins.{name}`"]
        assert (row[1], row[2]) == (f"GPIO{pin['gpio']}", str(pin["header"])), row


def test_every_pin_a_document_names_is_the_tables() -> None:
    by_gpio = {pin["gpio"]: pin["header"] for pin in SPEC["pins"].values()}
    for path in DOCS:
        text = svg_pairs(path) if path.suffix == ".svg" else text_of(path)
        # "pin 11 (GPIO17)" and "GPIO17 (pin 11)" pair a header pin with a GPIO
        pairs = re.findall(r"pin (\d+) \(GPIO(\d+)\)", text)
        pairs += [(p, g) for g, p in re.findall(r"GPIO(\d+) \((?:header )?pin (\d+)\)", text)]
        for header, gpio in pairs:
            assert by_gpio.get(int(gpio)) == int(header), f"{path.name}: GPIO{gpio} on pin {header}"
        # every [pins] block of a config example
        for block in re.findall(r"```toml\n(.*?)```", text, re.S):
            table = tomllib.loads(re.sub(r"(?m)^ +", "", block)).get("pins", {})
            for name, gpio in table.items():
                if name != "factory":
                    assert gpio == SPEC["pins"][name]["gpio"], f"{path.name}: [pins] {name} = {gpio}"


def test_every_part_value_a_document_quotes_is_the_specs() -> None:
    parts = {ref: normalised(value) for ref, value in SPEC["parts"].items()}
    seen: dict[str, set[str]] = {}
    for path in [*DOCS, ROOT / "firmware" / "shaker.py"]:
        text = svg_pairs(path) if path.suffix == ".svg" else text_of(path)
        if path.name == "bom.md":  # the table: "| R2 | 1 | Resistor | 100 kΩ, ¼ W |"
            for row in table_rows(text):
                for ref in re.findall(r"\b[RC]\d+\b", row[0]):
                    quoted = re.match(VALUE, row[3])
                    assert quoted, row
                    assert normalised(quoted.group(0)) == parts[ref], f"bom.md: {ref} is {row[3]}"
                    seen.setdefault(ref, set()).add("bom.md")
        # prose and the drawing: "R2 (100 kΩ)", "R2 100 kΩ", "R5, R6, R7 (330 Ω)", "C2 10 µF"
        for match in re.finditer(rf"\b((?:[RC]\d+(?:, |–))*[RC]\d+)[ (]+(?={VALUE})", text):
            value = re.match(VALUE, text[match.end() :])
            for ref in re.findall(r"[RC]\d+", match.group(1)):
                assert normalised(value.group(0)) == parts[ref], f"{path.name}: {ref} is {value.group(0)}"  # type: ignore[union-attr]
                seen.setdefault(ref, set()).add(path.name)
        # "the 100 kΩ gate pull-down"
        for value in re.findall(rf"{VALUE} gate pull-down", text):
            assert normalised(" ".join(value)) == parts["R2"], f"{path.name}: gate pull-down {value}"
    for ref in parts:
        assert {"bom.md", "wiring.svg"} <= seen.get(ref, set()), (
            f"{ref} is not quoted in bom.md and wiring.svg"
        )
    assert "shaker.py" in seen["R2"]


def test_the_solenoids_limits_agree_with_the_config_and_the_documents() -> None:
    limits = SPEC["solenoid"]
    shaker = DEFAULT_CONFIG.shaker
    for key in ("max_on_ms", "min_off_ms", "duty_window_ms", "max_duty"):
        assert getattr(shaker, key) == limits[key], key
    # docs/tower.md's table of limits
    rows = {
        key.group(1): row[1]
        for row in table_rows(text_of(ROOT / "docs" / "tower.md"))
        if (key := re.match(r"`(\w+)`", row[0]))
    }
    assert rows["max_on_ms"] == f"{limits['max_on_ms']} ms"
    assert rows["min_off_ms"] == f"{limits['min_off_ms']} ms"
    assert rows["max_duty"] == f"{limits['max_duty']:g} of {limits['duty_window_ms'] / 1000:g} s"
    for path in DOCS:
        text = text_of(path).replace("\n", " ")
        for ceiling in re.findall(r"max_on_ms` at (\d+) or less", text):
            assert int(ceiling) == limits["max_on_ms_ceiling"], path.name
        for default in re.findall(r"the default is (\d+)\)", text):
            assert int(default) == limits["max_on_ms"], path.name
        for seconds in re.findall(r"(?:\bgo|\(Q1 off\)) within (?:about )?(\d+(?:\.\d+)?) s", text):
            assert float(seconds) == limits["release_s"], f"{path.name}: released within {seconds} s"
        for pulse in re.findall(r"a (\d+) ms pulse keeps", text):
            assert int(pulse) == limits["max_on_ms"], path.name
    bom = text_of(HARDWARE / "bom.md")
    assert (
        f"{limits['supply_v']} V DC, push (or push-pull) plunger, at most {limits['max_current_a']} A" in bom
    )
    assert limits["max_on_ms_ceiling"] > limits["max_on_ms"]


def scad_parameters() -> dict[str, object]:
    """tower.scad's top-level ``name = literal;`` assignments (numbers, lists of numbers, strings)."""
    text = (HARDWARE / "tower.scad").read_text(encoding="utf-8")
    found = {}
    for name, value in re.findall(r"(?m)^(\w+)\s*=\s*([-\d.\[\], ]+|\"[^\"]*\");", text):
        found[name] = json.loads(value)
    return found


def test_tower_scad_builds_what_the_spec_says() -> None:
    scad, camera = scad_parameters(), SPEC["camera"]
    expected = {
        "camera_hfov": camera["hfov_deg"],
        "sensor_px": camera["sensor_px"],
        "capture_px": camera["capture_px"],
        "px_per_mm": camera["px_per_mm"],
        "die_top_h": camera["die_top_mm"],
        "closest_focus": camera["closest_focus_mm"],
        "cam_depth": camera["depth_mm"],
        "cam_holes": camera["holes_mm"],
        "pi_board": SPEC["pi"]["board_mm"],
        "pi_holes": SPEC["pi"]["holes_mm"],
        "pi_hole_inset": SPEC["pi"]["hole_inset_mm"],
        "perf_board": SPEC["perfboard"]["board_mm"],
        "perf_holes": SPEC["perfboard"]["holes_mm"],
        "tray_d": SPEC["tray"]["inner_d_mm"],
        "liner_t": SPEC["tray"]["liner_mm"],
        "tray_colour": SPEC["tray"]["colour"],
        "liner_colour": SPEC["tray"]["liner_colour"],
    }
    for name, value in expected.items():
        assert scad[name] == value, f"tower.scad {name} = {scad[name]}, spec.toml says {value}"
    # the capture size is the config's default, and the lens's vertical field follows from the horizontal
    assert [DEFAULT_CONFIG.camera.width, DEFAULT_CONFIG.camera.height] == camera["capture_px"]
    (w, h) = camera["sensor_px"]
    vfov = 2 * math.degrees(math.atan(math.tan(math.radians(camera["hfov_deg"] / 2)) * h / w))
    assert vfov == pytest.approx(camera["vfov_deg"], abs=1.5)


def test_the_packages_mirror_of_the_tower_is_the_specs() -> None:
    """spec.toml is not in the wheel: dicetower.vision.tower_scale carries its figures, and must agree."""
    camera = SPEC["camera"]
    assert camera["capture_px"][0] == tower_scale.FRAME_WIDTH
    assert camera["px_per_mm"] == tower_scale.PX_PER_MM
    assert camera["die_top_mm"] == tower_scale.DIE_TOP_MM
    assert camera["lens_height_mm"] == tower_scale.LENS_HEIGHT_MM
    assert SPEC["tray"]["inner_d_mm"] == tower_scale.TRAY_D_MM
    for kind, mm in SPEC["dice_mm"].items():
        assert tower_scale.DICE_MM[kind] == mm, kind
    assert tower_scale.tray_radius_px() == pytest.approx(SPEC["tray"]["inner_d_mm"] / 2 * camera["px_per_mm"])


def test_the_simulated_camera_draws_the_towers_tray_and_dice() -> None:
    sim = pytest.importorskip("dicetower.firmware.cameras.sim")
    assert sim.TOWER.tray_d_mm == SPEC["tray"]["inner_d_mm"]
    assert sim.TOWER.px_per_mm == SPEC["camera"]["px_per_mm"]
    for kind, mm in SPEC["dice_mm"].items():
        px = sim.DIE_PX[kind] * SPEC["camera"]["capture_px"][0] / 640
        assert px / mm == pytest.approx(SPEC["camera"]["px_per_mm"], rel=1e-9), kind


def test_the_documents_quote_one_size_for_each_die_and_the_tray() -> None:
    """A d6's pixels and the tray's millimetres, wherever a document gives them, are the spec's."""
    d6, d20 = round(tower_scale.die_px("d6") or 0), round(tower_scale.die_px("d20") or 0)
    box = tuple(round(v) for v in tower_scale.box_px("d6") or ())
    quoted: dict[str, set[str]] = {}
    for path in [*DOCS, ROOT / "docs" / "vision.md"]:
        text = text_of(path).replace("\n", " ")
        for px in re.findall(r"\bd6(?:'s top face)? (?:is )?(?:about )?(\d+) px", text):
            assert int(px) == d6, f"{path.name}: a d6 of {px} px, the tower's is {d6}"
            quoted.setdefault("d6", set()).add(path.name)
        for px in re.findall(r"\bd20 (?:is )?(?:about )?(\d+) px across", text):
            assert int(px) == d20, f"{path.name}: a d20 of {px} px, the tower's is {d20}"
        for lo, hi in re.findall(r"box is (\d+)[–-](\d+) px", text):
            assert (int(lo), int(hi)) == box, f"{path.name}: a d6's box of {lo}-{hi} px, the tower's is {box}"
            quoted.setdefault("box", set()).add(path.name)
        for mm in re.findall(r"(\d+) mm tray\b", text):
            assert int(mm) == SPEC["tray"]["inner_d_mm"], f"{path.name}: a {mm} mm tray"
    assert {"BUILD.md", "tower.md", "lighting.md", "vision.md"} <= quoted["d6"]
    assert {"BUILD.md", "tower.md"} <= quoted["box"]


def test_the_figures_the_documents_quote_are_the_models(rendered: Rendered) -> None:
    echoes = rendered.echoes
    lens = echoes["lens height above the tray floor"]
    assert round(lens) == SPEC["camera"]["lens_height_mm"]
    assert echoes["pixels per mm at the dice tops"] == pytest.approx(SPEC["camera"]["px_per_mm"], abs=0.01)
    for kind, mm in SPEC["dice_mm"].items():
        px = echoes[f"{kind} across in the photo"]
        assert px == pytest.approx(mm * SPEC["camera"]["px_per_mm"], abs=0.1), kind
    cables, run = SPEC["cables"], echoes["camera cable run"]
    assert cables["camera_pi4"]["mm"] >= run + cables["slack_mm"]
    assert cables["camera_pi5"]["mm"] >= run + cables["slack_mm"]
    assert cables["camera_box"]["mm"] < run, (
        "the camera's own cable would do: the documents say it is too short"
    )
    outline = re.search(r'ECHO: "tray outline for calibrate --tray: ([\d,]+)"', rendered.console)
    assert outline is not None
    allowed = {c["mm"] for c in cables.values() if isinstance(c, dict)} | {round(run)}
    for path in DOCS:
        text = text_of(path)
        for quoted in re.findall(r"(\d+) mm above the tray floor", text.replace("\n", " ")):
            assert int(quoted) == round(lens), f"{path.name} puts the lens {quoted} mm above the tray floor"
        for dioptres in re.findall(r"1 / 0\.(\d+)(?: m)? (?:≈|=) (\d+\.\d)", text):
            assert int(dioptres[0]) == round(lens), path.name
            assert float(dioptres[1]) == pytest.approx(1000 / lens, abs=0.05), path.name
        # every length a sentence about the camera's cable quotes
        for sentence in sentences(path):
            if re.search(r"\b(cable|ribbon)", sentence, re.I):
                for mm in re.findall(r"(\d+) mm(?!²)", sentence):
                    if int(mm) >= 100:
                        assert int(mm) in allowed, (
                            f"{path.name}: a cable of {mm} mm? {sentence.strip()[:120]}"
                        )
        for tray in re.findall(r"--tray ([\d,]{20,})", text):
            assert tray == outline.group(1), f"{path.name}'s tray outline is not the model's"
    assert outline.group(1) in text_of(HARDWARE / "BUILD.md")


def test_the_camera_cable_is_stated_once() -> None:
    """bom.md names the cable and its length; the other documents point to it instead of restating them."""
    cables = SPEC["cables"]
    row = next(r for r in table_rows(text_of(HARDWARE / "bom.md")) if r[2] == "Camera cable")
    assert f"Pi 5: {cables['camera_pi5']['ends']}, {cables['camera_pi5']['mm']} mm" in row[3]
    assert f"Pi 4: {cables['camera_pi4']['ends']}, {cables['camera_pi4']['mm']} mm" in row[3]
    assert (
        f"{cables['camera_box']['mm']} mm cable in the camera's box is {cables['camera_box']['ends']}"
        in row[5]
    )
    assert "too short" in row[5]
    lengths = {cables["camera_pi4"]["mm"], cables["camera_pi5"]["mm"], cables["camera_box"]["mm"]}
    for path in DOCS:
        if path.name == "bom.md":
            continue
        for sentence in sentences(path):
            if re.search(r"\b(cable|ribbon)", sentence, re.I):
                quoted = {int(mm) for mm in re.findall(r"(\d+) mm(?!²)", sentence)}
                assert not quoted & lengths, f"{path.name} restates the cable: {sentence.strip()[:120]}"


def test_the_config_module_documents_the_same_defaults() -> None:
    doc = config_module.__doc__ or ""
    limits = SPEC["solenoid"]
    assert f"max_on_ms = {limits['max_on_ms']} " in doc and f"min_off_ms = {limits['min_off_ms']} " in doc
    for name, pin in SPEC["pins"].items():
        assert re.search(rf"\n\s+{name} = {pin['gpio']}\b", doc), name
