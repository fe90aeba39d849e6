"""docs/foundry.md takes a new user from installing the module to the first real-dice roll, and every step
it gives is checked: each command runs or parses, each setting and state it names is the module's, and the
versions it states are module.json's."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from dicetower.firmware.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
GUIDE = (REPO / "docs" / "foundry.md").read_text(encoding="utf-8")
MODULE = json.loads((REPO / "foundry" / "module.json").read_text(encoding="utf-8"))
LANG = json.loads((REPO / "foundry" / "lang" / "en.json").read_text(encoding="utf-8"))


def shell_lines() -> list[str]:
    return [
        line.strip()
        for block in re.findall(r"```sh\n(.*?)```", GUIDE, re.S)
        for line in block.splitlines()
        if line.strip()
    ]


def test_the_guide_has_every_step() -> None:
    headings = re.findall(r"^## (.+)$", GUIDE, re.M)
    for step in ("Build", "Install", "reach the tower", "Point the module", "Choose the tower", "first roll"):
        assert any(step in h for h in headings), (step, headings)


@pytest.mark.parametrize(
    "line", [line for line in shell_lines() if line.startswith("python3 foundry/build.py")]
)
def test_each_build_command_runs(line: str, tmp_path: Path) -> None:
    args = shlex.split(line)[1:]
    subprocess.run([sys.executable, *args, "--out", str(tmp_path)], cwd=REPO, check=True, capture_output=True)
    assert (tmp_path / "dicetower-foundry.zip").is_file()
    assert "dist/dicetower-foundry.zip" in GUIDE  # where the guide says it lands without --out


@pytest.mark.parametrize("line", [line for line in shell_lines() if line.startswith("dicetower ")])
def test_each_dicetower_command_parses(line: str) -> None:
    try:
        parsed = build_parser().parse_args(shlex.split(line)[1:])
    except SystemExit as exc:
        pytest.fail(f"{line}: the CLI refuses it (exit {exc.code})")
    assert parsed.func is not None


def test_the_settings_table_is_the_modules() -> None:
    table = re.findall(r"^\| ([A-Z][^|]+?) \| ", GUIDE.split("## 4.", 1)[1], re.M)
    names = {v for k, v in LANG.items() if k.endswith(".name")}
    assert table and set(table) - {"setting"} == names
    assert f"**{LANG['DICETOWER.method']}**" in GUIDE


def test_the_states_versions_and_endpoints_are_the_modules() -> None:
    states = re.search(
        r"STATES = Object.freeze\(\[(.*?)\]\)", (REPO / "foundry/scripts/status.mjs").read_text()
    )
    for state in re.findall(r'"(\w+)"', states.group(1)):
        assert f"**{state}**" in GUIDE, state
    compat = MODULE["compatibility"]
    assert f"v{compat['minimum']} to v{compat['maximum']}" in GUIDE
    for key in ("minimum", "verified", "maximum"):
        assert f"{key}` {compat[key]}" in GUIDE
    tower_js = (REPO / "foundry/scripts/tower.mjs").read_text()
    for path in ("/api/tower", "/api/rolls", "/ws"):
        assert path in tower_js and path in GUIDE
