"""Every help page: it has examples, each example parses, and no page shows raw markup.

The pages are found by walking the argparse tree that ``build_parser()`` builds (every
subcommand and every action under it), plus the pages ``check`` and ``odds`` print for
themselves, each system and each check: a command added later is walked without a list here.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex

import pytest
from dicetower.firmware.cli import build_parser, main
from dicetower.firmware.cli.check import parse_check_args
from dicetower.rules.systems import get_system, system_names

#: what help text must never show: RST roles and literals, Markdown code and emphasis
RAW_MARKUP = re.compile(r"``|`[^`\s][^`]*`|:(?:class|func|meth|mod|attr|data|ref):|\*\*|\.\. \w+::")


def _pages(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path in the tree under ``parser``, the top level included."""
    out = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _pages(sub, (*path, name))
    return out


def _system_pages() -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for command in ("check", "odds"):
        for name in system_names():
            out.append((command, name))
            out += [(command, name, check) for check in get_system(name).checks]
    return out


TREE = _pages(build_parser())
PAGES = TREE + _system_pages()


def _help(path: tuple[str, ...]) -> str:
    """What ``dicetower PATH --help`` prints, as a user's shell runs it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            code = main([*path, "--help"])
        except SystemExit as exc:
            code = exc.code
    assert code in (0, None), path
    return out.getvalue()


def _examples(text: str) -> list[str]:
    """The command lines of a page's examples: ``examples:`` sections and ``example:`` lines.

    An example is an indented line that starts with ``dicetower``; its description follows
    two spaces or more, or a ``#``.
    """
    found = []
    in_section = False
    for line in text.splitlines():
        if line.strip() == "examples:":
            in_section = True
            continue
        if in_section and line and not line.startswith(" "):
            in_section = False
        body = line.strip()
        if body.startswith("example: "):
            body = body.removeprefix("example: ")
        elif not in_section:
            continue
        if body.startswith("dicetower "):
            found.append(re.split(r"\s{2,}|\s#", body, maxsplit=1)[0])
    return found


def test_the_walk_finds_every_action() -> None:
    # the walk is what the checks below stand on: it must reach the nested actions
    for path in [("tower", "config"), ("log", "verify"), ("log", "export"), ("teach", "fit"), ("fairness",)]:
        assert path in TREE
    assert len(TREE) >= 27


@pytest.mark.parametrize("path", TREE, ids=lambda p: " ".join(p) or "dicetower")
def test_every_page_of_the_tree_has_an_examples_section(path: tuple[str, ...]) -> None:
    text = _help(path)
    assert "\nexamples:\n" in text, f"dicetower {' '.join(path)} --help has no examples"
    assert _examples(text), path
    if path:  # each page's examples show its own command
        assert any(shlex.split(e)[1 : 1 + len(path)] == list(path) for e in _examples(text)), path


@pytest.mark.parametrize("path", PAGES, ids=lambda p: " ".join(p) or "dicetower")
def test_every_example_parses(path: tuple[str, ...]) -> None:
    examples = _examples(_help(path))
    if len(path) == 2 and path[0] in ("check", "odds"):  # a system's page: one example per check
        assert len(examples) == sum(bool(c.example) for c in get_system(path[1]).checks.values())
    else:
        assert examples, path
    for example in examples:
        argv = shlex.split(example)[1:]
        if "--help" in argv:
            continue  # a help page: walked on its own
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                args = build_parser().parse_args(argv)
            except SystemExit:
                pytest.fail(f"{example!r} does not parse: {err.getvalue()}")
        if args.command in ("check", "odds"):  # their options are parsed in a second pass
            parsed = parse_check_args(args, args.command)
            assert isinstance(parsed, tuple), example
        else:
            assert callable(args.func), example


@pytest.mark.parametrize("path", PAGES, ids=lambda p: " ".join(p) or "dicetower")
def test_no_page_shows_raw_markup(path: tuple[str, ...]) -> None:
    text = _help(path)
    assert not RAW_MARKUP.search(text), (path, RAW_MARKUP.search(text))


def test_the_markup_probe_catches_what_it_is_for() -> None:
    for raw in ("``verify`` exits 1", "see :class:`Tower`", "**bold**", "run `dicetower`"):
        assert RAW_MARKUP.search(raw), raw
    for plain in ("dicetower log verify", "a 'quoted' word", "4d6kh3+2 * 2", "--bias 0.1 = +10 %"):
        assert not RAW_MARKUP.search(plain), plain


def test_prose_on_every_help_page_is_wrapped_to_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A description written as one long string reads as a paragraph; examples and tables stay whole."""
    monkeypatch.setenv("COLUMNS", "100")
    for path in TREE:
        for line in _help(path).splitlines():
            if not line[:1].isspace() and not line.startswith("usage:"):  # usage is argparse's
                assert len(line) <= 100, (path, line)
    page = _help(("teach", "collect"))
    paragraph = page.split("\n\n")[1]
    assert paragraph.count("\n") >= 3 and paragraph.startswith("Roll the loaded dice N times")
    assert "  dicetower teach collect --tower sim" in page  # the examples, as written
