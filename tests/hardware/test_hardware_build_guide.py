"""hardware/BUILD.md takes a builder from parts to a first roll, and every command it gives exists.

Each ``dicetower`` command in its code blocks is parsed by the real CLI parser (an unknown subcommand or
option fails as it would on the Pi), each subcommand it names answers ``--help``, its config example passes
``dicetower tower config --check``, and the files and pictures it points to are there.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from dicetower.firmware.cli import build_parser, main
from rendering import HARDWARE

GUIDE = HARDWARE / "BUILD.md"
TEXT = GUIDE.read_text(encoding="utf-8")


def code_lines() -> list[str]:
    """Every line of the guide's shell code blocks, without prompts and comments (blocks may be indented)."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", TEXT, re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line.strip())
            if line:
                lines.append(line)
    return lines


def dicetower_commands() -> list[list[str]]:
    """The arguments of each ``dicetower ...`` command, in code blocks and in the text's code spans (the shell
    function's definition left out)."""
    commands = []
    spans = re.findall(r"(?<!`)`(dicetower [^`]+)`(?!`)", TEXT)
    for line in [*code_lines(), *spans]:
        for part in re.split(r"&&|;", line):
            words = shlex.split(part)
            if words and words[0] == "dicetower" and not part.strip().startswith("dicetower()"):
                commands.append(words[1:])
    return commands


def test_the_guide_has_every_step_and_the_troubleshooting() -> None:
    headings = re.findall(r"^## (.+)$", TEXT, re.M)
    for step in ("Print", "driver board", "Assemble", "Set up the Pi", "Calibrate", "Teach", "First roll"):
        assert any(step in h for h in headings), f"no step about {step!r}: {headings}"
    trouble = TEXT.split("## Troubleshooting", 1)[1]
    for problem in ("solenoid does not fire", "camera is not found", "unreadable"):
        assert problem in trouble, problem
    for package in ("python3-venv", "python3-picamera2", "python3-lgpio"):
        assert re.search(rf"apt install -y [^\n]*{package}", TEXT), package
    assert "--system-site-packages" in TEXT
    assert "systemd/dicetower.service" in TEXT and "systemctl enable dicetower" in TEXT


@pytest.mark.parametrize("args", dicetower_commands(), ids=" ".join)
def test_each_dicetower_command_parses(args: list[str]) -> None:
    try:
        parsed = build_parser().parse_args(args)
    except SystemExit as exc:  # argparse refuses: an unknown command or option
        pytest.fail(f"dicetower {' '.join(args)}: the CLI refuses it (exit {exc.code})")
    assert getattr(parsed, "func", None) is not None, args


def test_the_guide_names_calibrate_teach_and_a_roll_on_the_tower() -> None:
    commands = [" ".join(c) for c in dicetower_commands()]
    assert any(c.startswith("tower calibrate") for c in commands)
    assert any(c.startswith("teach collect") and "--tower config" in c for c in commands)
    assert any(c.startswith("teach fit") for c in commands)
    assert any(c.startswith("roll ") and "--tower config" in c for c in commands)


def test_each_subcommand_the_guide_names_answers_help(capsys: pytest.CaptureFixture[str]) -> None:
    paths = set()
    for args in dicetower_commands():
        words = [w for w in args if not w.startswith("-")]
        paths.add(tuple(words[:2]) if words[0] in ("tower", "teach") else (words[0],))
    assert len(paths) >= 6
    for path in sorted(paths):
        with pytest.raises(SystemExit) as exc:
            main([*path, "--help"])
        assert exc.value.code == 0, path
        assert "usage: dicetower " + " ".join(path) in capsys.readouterr().out


def test_the_config_example_passes_the_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```toml\n(.*?)```", TEXT, re.S)
    assert blocks
    config = tmp_path / "config.toml"
    config.write_text(re.sub(r"(?m)^ +", "", blocks[0]), encoding="utf-8")
    assert main(["tower", "config", "--check", str(config)]) == 0, capsys.readouterr()
    assert "picamera2 camera, lgpio pins" in capsys.readouterr().out


def test_the_files_and_pages_it_points_to_exist() -> None:
    for target in re.findall(r"\]\(([^)#:]+)\)", TEXT):
        assert (GUIDE.parent / target).exists(), target
    assert "python3 hardware/render.py" in TEXT and (HARDWARE / "render.py").is_file()
    for path in re.findall(r"/opt/dicetower/src/(systemd/[\w.]+)", TEXT):
        assert (HARDWARE.parent / path).is_file(), path


def test_every_documented_pi_install_brings_the_teach_extra() -> None:
    """§6 runs ``teach fit``, which needs the ``teach`` extra: each page that installs on the Pi installs it,
    and the extra holds every package fit checks for before it starts."""
    from dicetower.vision.taught.ready import TEACH_PACKAGES

    root = HARDWARE.parent
    pages = {
        "hardware/BUILD.md": TEXT,
        "docs/tower.md": (root / "docs" / "tower.md").read_text(encoding="utf-8"),
        "systemd/README.md": (root / "systemd" / "README.md").read_text(encoding="utf-8"),
        "README.md": (root / "README.md").read_text(encoding="utf-8"),
    }
    for page, text in pages.items():
        pi = text if page != "README.md" else text.split("On a Pi:", 1)[1].split("\n\n", 1)[0]
        installs = re.findall(r"pip install [^\n`]*", pi)
        assert installs, page
        for line in installs:
            if "dev,bench" in line or "[mqtt]" in line:
                continue
            assert "[teach]" in line, f"{page}: {line}"
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    extra = re.search(r"(?ms)^teach = \[(.*?)^\]", pyproject)
    assert extra is not None
    for package in TEACH_PACKAGES:
        assert f'"{package}' in extra.group(1), package
