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
