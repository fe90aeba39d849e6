"""The README's commands: each parses as the CLI takes it; what it writes in the checkout is git-ignored."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from dicetower.firmware.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]

#: options whose value is a file or folder the command writes
WRITES = ("--out", "--annotate", "--save", "--save-failures", "--data")


def _commands() -> list[list[str]]:
    """Every ``dicetower`` command line in the README's shell blocks, as argv (comments cut)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            for start in [i for i, w in enumerate(words) if w.endswith("dicetower")]:
                end = next((i for i in range(start + 1, len(words)) if words[i] == "&&"), len(words))
                out.append(words[start + 1 : end])
    return out


def _written(argv: list[str]) -> list[str]:
    paths = [argv[i + 1] for i, w in enumerate(argv[:-1]) if w in WRITES]
    if argv[:1] == ["record"]:
        paths.append(next(w for w in argv[1:] if not w.startswith("-")))
    return paths


COMMANDS = _commands()


def test_the_readme_has_commands_that_write() -> None:
    assert len(COMMANDS) >= 15
    assert {p for argv in COMMANDS for p in _written(argv)} >= {"recorded", "out.png", "my-reader"}


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_every_readme_command_parses(argv: list[str]) -> None:
    if "--help" in argv:
        return
    args = build_parser().parse_args(argv)
    assert callable(args.func)


def test_what_the_readme_commands_write_is_git_ignored() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for path in sorted({p for argv in COMMANDS for p in _written(argv)}):
        if path.startswith(("../", "/")):
            continue  # outside the checkout
        probe = path.rstrip("/") + ("/x" if not Path(path).suffix else "")
        done = subprocess.run(
            ["git", "check-ignore", "-q", "--no-index", probe], cwd=ROOT, capture_output=True, check=False
        )
        assert done.returncode == 0, f"{path} (written by a README command) is not git-ignored"


def test_the_sample_photo_is_small_and_reads_as_the_readme_says(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's ``read`` example works on a fresh checkout: its photo is in the repository."""
    from dicetower.firmware.cli import main

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    line = re.search(r"dicetower read (docs/img/\S+\.jpg) .*# (\d+) dice: ([\d ]+)", text)
    assert line is not None, "the README's read example names no sample photo"
    photo, count, faces = ROOT / line.group(1), int(line.group(2)), line.group(3).split()
    assert photo.is_file() and photo.stat().st_size < 60_000
    assert f"]({line.group(1)})" in text  # shown, too
    assert main(["read", str(photo)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"{count} dice: {' '.join(faces)}"


def test_the_readme_names_the_folders_its_commands_make() -> None:
    """A command reads a folder another README command writes, by the same name."""
    written = {p.rstrip("/") for argv in COMMANDS for p in _written(argv)}
    for argv in COMMANDS:
        if argv[:1] in (["calibrate"], ["eval"]):
            for folder in [w for w in argv[1:] if not w.startswith("-")]:
                assert folder.startswith("../") or folder.rstrip("/") in written, argv
