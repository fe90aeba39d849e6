"""Modules stay small and keep their private names to themselves.

A module over :data:`MAX_LINES` holds more than one job; a ``_name`` imported from another
module is a helper two modules share without saying so, so it belongs in a public module.
Checked over every package (the rules core, vision with its training code, the firmware) and the
benchmarks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("rules", "vision", "firmware", "bench")
MAX_LINES = 600


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (REPO / folder).rglob("*.py"))


def test_the_folders_hold_modules() -> None:
    assert len(_sources()) > 20


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_module_is_under_the_line_limit(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(REPO)}: {lines} lines"


def private_imports(source: str) -> list[str]:
    """``module:_name`` for each ``from module import _name`` in ``source`` (dunders excepted)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{'.' * node.level}{node.module or ''}:{alias.name}")
    return found


def test_private_imports_are_found() -> None:
    assert private_imports("from .eval import _positive, check\nfrom __future__ import annotations") == [
        ".eval:_positive"
    ]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_module_imports_no_other_modules_private_name(path: Path) -> None:
    assert private_imports(path.read_text(encoding="utf-8")) == []


def test_benchmarks_holds_current_figures_only() -> None:
    """BENCHMARKS.md is a table of current figures, each with its command; history lives elsewhere."""
    size = len((REPO / "BENCHMARKS.md").read_bytes())
    assert size <= 20_000, f"BENCHMARKS.md is {size} bytes: move notes to docs/ or CHANGELOG.md"
