"""No import circle among dicetower's modules, and the layers import only downwards.

A circle makes import order matter and hides which module owns a name. Every import counts,
at module level and inside functions alike (an import deferred into a function still closes
a circle, only later); those under ``if TYPE_CHECKING:`` are never run, so they do not. The
layers are the project's:
``rules`` knows nothing of images or pins (standard library only), ``vision`` nothing of
pins or rules; ``firmware`` composes both. Inside ``firmware``, the HTTP server is a caller of
the roll service (``rolls``), the log and the event stream, as MQTT and the hub are: none of
those imports it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FOLDERS = {"rules": "dicetower.rules", "vision": "dicetower.vision", "firmware": "dicetower.firmware"}


def module_files() -> dict[str, Path]:
    """``dicetower.x.y`` -> its source file, for every module of the three packages."""
    out: dict[str, Path] = {}
    for folder, package in FOLDERS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = list(path.relative_to(REPO / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([package, *parts])] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module, deferred: bool) -> list[ast.Import | ast.ImportFrom]:
    """Import statements run when the module is imported: top level, and inside module-level
    ``if``/``try``/``with`` blocks and class bodies, never under ``if TYPE_CHECKING:``.
    With ``deferred``, also those inside functions (run when the function is first called)."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if deferred:
                stack.extend(node.body)
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                stack.extend(node.body)
            stack.extend(node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                stack.extend(handler.body)
        elif isinstance(node, ast.With | ast.ClassDef):
            stack.extend(node.body)
    return found


def imports_of(name: str, path: Path, known: set[str], deferred: bool = False) -> set[str]:
    """The dicetower modules ``name`` imports (at module level unless ``deferred``)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _imports(ast.parse(path.read_text(encoding="utf-8")), deferred):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            stem = node.module or ""
            start = (f"{base}.{stem}" if stem else base) if node.level else stem
            # `from pkg import mod` depends on the module pkg.mod; `from mod import name` on mod
            targets = [
                f"{start}.{alias.name}" if f"{start}.{alias.name}" in known else start for alias in node.names
            ]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of names (first == last), or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    for root in sorted(graph):
        if root in state:
            continue
        path: list[str] = [root]
        iters = [iter(sorted(graph[root]))]
        state[root] = 1
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(sorted(graph.get(nxt, ()))))
    return None


def import_graph(deferred: bool = False) -> dict[str, set[str]]:
    files = module_files()
    known = set(files)
    return {name: imports_of(name, path, known, deferred) for name, path in files.items()}


def test_the_graph_sees_real_imports() -> None:
    graph = import_graph()
    assert "dicetower.rules.notation.parser" in graph["dicetower.rules.notation.evaluate"]
    assert "dicetower.rules.errors" in graph["dicetower.rules"]


def test_find_cycle_finds_a_planted_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_among_dicetower_modules() -> None:
    cycle = find_cycle(import_graph(deferred=True))
    assert cycle is None, " -> ".join(cycle or ())


def test_imports_inside_functions_are_followed(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from . import other\n")
    known = {"pkg.m", "pkg.other"}
    assert imports_of("pkg.m", module, known, deferred=True) == {"pkg.other"}
    assert imports_of("pkg.m", module, known) == set()


def _absolute_imports(path: Path) -> set[str]:
    """Top-level names of everything ``path`` imports by absolute name, at any depth."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [
        # the rules core knows nothing of images or pins
        ("dicetower.rules", ("dicetower.vision", "dicetower.firmware")),
        # vision knows nothing of pins or rules
        ("dicetower.vision", ("dicetower.rules", "dicetower.firmware")),
        # MQTT and the hub use the roll service, the log and the event stream, never the HTTP server's insides
        ("dicetower.firmware.mqtt", ("dicetower.firmware.server",)),
        ("dicetower.firmware.hub", ("dicetower.firmware.server",)),
        # the roll service and its peers stand on their own: the HTTP server is one of their callers
        ("dicetower.firmware.rolls", ("dicetower.firmware.server",)),
        ("dicetower.firmware.rolllog", ("dicetower.firmware.server",)),
        ("dicetower.firmware.events", ("dicetower.firmware.server",)),
        ("dicetower.firmware.outputs", ("dicetower.firmware.server",)),
        ("dicetower.firmware.web", ("dicetower.firmware.server",)),
    ],
)
def test_layers_import_only_downwards(layer: str, forbidden: tuple[str, ...]) -> None:
    graph = import_graph(deferred=True)
    wrong = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if name.startswith(layer)
        for target in targets
        if target.startswith(forbidden)
    )
    assert wrong == []


def test_the_rules_core_needs_nothing_but_the_standard_library() -> None:
    allowed = set(sys.stdlib_module_names) | {"__future__", "dicetower"}
    rules = {name: path for name, path in module_files().items() if name.startswith("dicetower.rules")}
    extra = {name: sorted(_absolute_imports(path) - allowed) for name, path in rules.items()}
    assert {name: names for name, names in extra.items() if names} == {}


def test_absolute_imports_are_found_at_any_depth(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import os.path\nfrom . import x\n\ndef f():\n    from numpy import zeros\n")
    assert _absolute_imports(module) == {"os", "numpy"}
