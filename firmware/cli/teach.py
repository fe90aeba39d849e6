"""``dicetower teach ACTION``: teach the tower its owner's dice (docs/teach.md).

Each action is two small functions: ``_add_<action>(actions)`` adds its parser and
``run_<action>(args)`` runs it, importing what it needs only then, so ``dicetower teach
--help`` stays quick. ``name`` applies a labels file to a teach folder's groups and writes the
labelled ``manifest.jsonl``: the headless twin of the ``/teach`` page of ``dicetower serve``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import COMMANDS
from .teach_collect import add_collect_parser, add_group_parser
from .teach_fit import add_fit_parser

__all__ = ["register", "run_name"]

EXAMPLES = """\
examples:
  dicetower teach collect --tower sim --rolls 300 --out ./teach   roll the loaded dice unattended
  dicetower teach group ./teach                        group each die's crops by face (teach.json)
  dicetower teach name ./teach --labels labels.json   name the groups from a labels file
  dicetower serve --teach ./teach                      name them on http://127.0.0.1:8080/teach
  dicetower teach fit ./teach --out my-dice            fit a taught reader on the named dice

Run 'dicetower teach ACTION --help' for an action's options (docs/teach.md).
"""

NAME_EXAMPLES = """\
examples:
  dicetower teach name ./teach --labels labels.json
  dicetower teach name ./teach --labels fixes.json     a second file corrects the first

labels.json names groups by their index in teach.json and single crops by path (a crop still in
a group is moved out of it); null takes a name back:
  {"blue d20": {"groups": {"0": 17, "1": 4}, "crops": {"crops/blue-d20/00012.png": 9}}}
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "teach",
        help=COMMANDS["teach"],
        description="Teach the tower its owner's dice (docs/teach.md).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="teach_command", metavar="ACTION", required=True)
    add_collect_parser(actions)
    add_group_parser(actions)
    _add_name(actions)
    add_fit_parser(actions)


def _add_name(actions: argparse._SubParsersAction) -> None:
    p = actions.add_parser(
        "name",
        help="name the groups from a labels file and write the labelled manifest.jsonl",
        description=(
            "Apply a labels file to DIR/teach.json (saved, each step counted as the /teach page\n"
            "counts it) and write DIR/manifest.jsonl with a face on every named die."
        ),
        epilog=NAME_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("folder", type=Path, metavar="DIR", help="the teach folder")
    p.add_argument("--labels", type=Path, required=True, metavar="FILE", help="the labels file (JSON)")
    p.set_defaults(func=run_name)


def run_name(args: argparse.Namespace) -> int:
    from ...vision.taught.naming import apply_labels, progress, read_labels, write_labelled
    from .output import escape_controls

    teach = apply_labels(args.folder, read_labels(args.labels))
    summary = write_labelled(args.folder, teach)
    for die in teach.dice:
        p = progress(die)
        work = ", ".join(f"{k} {v}" for k, v in die.work.to_json().items())
        touched = f"touched {p['touched']} of {p['crops']} crops ({100 * p['touched_share']:.1f} %)"
        print(escape_controls(f"{p['text']}; {touched}; {work}"))  # the die's id is teach.json's
    print(
        escape_controls(
            f"wrote {args.folder / 'manifest.jsonl'}: {summary.named} dice named in {summary.lines} photos, "
            f"{summary.unnamed} without a face"
        )
    )
    return 0
