"""``dicetower teach collect`` and ``dicetower teach group``: a teach folder, and its crops grouped.

``collect`` rolls the loaded dice unattended into a teach folder (``docs/teach.md``), stopping
early once ``teach fit`` could accept it (enough held back for its wrong-rate bound, every face of
every die seen often enough, estimated by grouping), and groups the crops at the end (a folder
already named keeps its names: the new crops join their groups). ``group`` groups a teach folder
again, or first makes one of a folder of photos (what ``dicetower record`` writes). The work is
:mod:`dicetower.firmware.collect`'s and :mod:`dicetower.vision.taught`'s; this module parses,
runs and prints. Heavy imports happen inside the run functions: the CLI starts lazily.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .arguments import rate

if TYPE_CHECKING:
    from ...vision.taught.coverage import DieCoverage

__all__ = [
    "CHECK_EVERY",
    "COLLECT_EXAMPLES",
    "GROUP_EXAMPLES",
    "MAX_ROLLS",
    "MIN_PER_FACE",
    "add_collect_parser",
    "add_group_parser",
    "bound_line",
    "run_collect",
    "run_group",
]

#: Most throws one teach folder holds per die: grouping sorts at most this many crops of a die
#: (:data:`dicetower.vision.taught.group.MAX_CROPS`).
MAX_ROLLS = 1500
#: A face is seen often enough at this many crops: what a fit wants (``teach fit --min-per-face``).
MIN_PER_FACE = 8
#: Rolls between two estimates of the faces seen.
CHECK_EVERY = 25

COLLECT_EXAMPLES = """\
examples:
  dicetower teach collect --tower config --rolls 400 --out teach/
  dicetower teach collect --tower config --rolls 400 --out teach/   # again: carries on after its last roll
  dicetower teach collect --tower sim --rolls 30 --out teach-sim/ --sim-seed 1
  dicetower teach collect --tower config --rolls 200 --out teach/ --check-every 0   # no early stop
"""

GROUP_EXAMPLES = """\
examples:
  dicetower teach group teach/                          # after more rolls: new crops join the groups
  dicetower teach group recorded/                       # make a folder dicetower record wrote a teach folder
  dicetower teach group recorded/ --out teach/ --config /etc/dicetower/config.toml
  dicetower teach group teach/ --force --no-sheets      # regroup, dropping the names given so far
"""


def _whole(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {low} to {high}, got {value}")
        return value

    return parse


def add_collect_parser(actions: Any) -> argparse.ArgumentParser:
    """Add ``collect`` to the ``teach`` command's actions."""
    from ...vision.taught.fit import MAX_WRONG

    p = actions.add_parser(
        "collect",
        help="roll the loaded dice unattended into a teach folder (photos, crops, faces unnamed)",
        description="Roll the loaded dice N times through the solenoid's limits; keep each throw's photo "
        "and each die's crop, kind and colour in a teach folder (docs/teach.md), faces not yet named. "
        "Stops early once teach fit could accept the folder: enough rolls held back for its wrong-rate "
        "bound and every face of every die seen often enough (estimated by grouping); Ctrl-C "
        "leaves a complete folder, and running again carries on. Groups the crops at the end.",
        epilog=COLLECT_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--rolls", type=_whole(1, MAX_ROLLS), required=True, metavar="N", help=f"throws, 1..{MAX_ROLLS}"
    )
    p.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="the teach folder (new, or one to carry on)"
    )
    g = p.add_argument_group("tower")
    g.add_argument(
        "--tower", choices=("sim", "config"), required=True, help="the simulated tower or the config file's"
    )
    g.add_argument("--config", metavar="PATH", help="tower config file (default /etc/dicetower/config.toml)")
    g.add_argument("--sim-seed", type=int, metavar="N", help="seed the simulated tray's throws")
    p.add_argument(
        "--resume",
        action="store_true",
        help="insist on carrying on DIR (a teach folder of the same dice is carried on anyway)",
    )
    p.add_argument(
        "--min-per-face",
        type=_whole(1, 1000),
        default=MIN_PER_FACE,
        metavar="N",
        help=f"a face is seen often enough at N crops (default {MIN_PER_FACE}, what a fit wants)",
    )
    p.add_argument(
        "--check-every",
        type=_whole(0, MAX_ROLLS),
        default=CHECK_EVERY,
        metavar="K",
        help=f"check every K rolls whether fit could accept the folder, and stop when it could "
        f"(default {CHECK_EVERY}; 0: never)",
    )
    p.add_argument(
        "--max-wrong",
        type=rate,
        default=MAX_WRONG,
        metavar="RATE",
        help=f"the wrong-rate bound 'teach fit --max-wrong' will use: collect until the held-back rolls can "
        f"show it (default {MAX_WRONG})",
    )
    p.set_defaults(func=run_collect)
    return p


def add_group_parser(actions: Any) -> argparse.ArgumentParser:
    """Add ``group`` to the ``teach`` command's actions."""
    p = actions.add_parser(
        "group",
        help="sort each die's crops into groups by face, without labels (teach.json, contact sheets)",
        description="Sort each die's crops (by kind and colour) into as many groups as it has faces, by how "
        "they look, and write teach.json and a contact sheet per die (one row a group). A folder of photos "
        "(what 'dicetower record' writes) is first made a teach folder: the general reader locates the "
        "dice, each die's crop is cut and its kind and colour named, faces left unnamed. In place, the "
        "record's manifest is kept as manifest.record.jsonl; labelled photos (a dataset) need --out.",
        epilog=GROUP_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "folder", type=Path, metavar="DIR", help="a teach folder, or a folder of photos to make one"
    )
    p.add_argument(
        "--out", type=Path, metavar="DIR", help="a folder of photos: make the teach folder here instead"
    )
    p.add_argument(
        "--config", metavar="PATH", help="a folder of photos: pair its dice with this tower config's dice"
    )
    p.add_argument(
        "--sheets",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="write sheets/<die>.png, one row per group (default: on)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="group every crop anew even if teach.json holds names (they are lost); without it, a named "
        "teach.json keeps its names and the crops it lacks join their nearest groups",
    )
    p.add_argument(
        "--min-per-face",
        type=_whole(1, 1000),
        default=MIN_PER_FACE,
        metavar="N",
        help=f"report the groups of at least N crops (default {MIN_PER_FACE})",
    )
    p.set_defaults(func=run_group)
    return p


def _log(line: str) -> None:
    print(f"dicetower: {line}", file=sys.stderr)


def run_collect(args: argparse.Namespace) -> int:
    from ...vision.taught.fit import HOLD_BACK
    from ...vision.taught.folder import TeachFolder
    from ...vision.taught.group import MAX_CROPS
    from ..collect import Collector, Stop
    from .progress import Progress
    from .tower import opened_tower

    out = Path(args.out)
    with opened_tower(args) as tower:
        if tower.calibration is None:
            raise ValueError(
                "the camera is not calibrated: run 'dicetower tower calibrate' with the tray empty"
            )
        loaded = [(d.kind, d.colour) for d in tower.dice]
        folder = TeachFolder.open(out, loaded, resume=args.resume)
        before = folder.lines
        per_throw = max(Counter(loaded).values())
        if (before + args.rolls) * per_throw > MAX_CROPS:
            most = max(MAX_CROPS // per_throw - before, 0)
            raise ValueError(
                f"--rolls {args.rolls}: grouping sorts at most {MAX_CROPS} crops a die, and {out} would hold "
                f"{(before + args.rolls) * per_throw} of one; roll at most {most} more"
            )
        if before:
            _log(f"{out}: carrying on after {before} rolls, at roll {folder.next_roll}")
        folder.use_reference(tower.calibration.reference)
        collector = Collector(
            tower,
            folder,
            min_per_face=args.min_per_face,
            check_every=args.check_every,
            hold_back=HOLD_BACK,
            max_wrong=args.max_wrong,
        )
        progress = Progress(sys.stderr, "teach collect", args.rolls, unit="rolls")
        try:
            result = collector.run(args.rolls, progress.step)
        finally:
            progress.close()
    # the tower is closed, its solenoid off, before the grouping's seconds
    ended = {
        Stop.ROLLS: "",
        Stop.EARLY: "; stopped early: enough rolls held back for fit's bound, and every face of every die "
        "seen often enough (estimated by grouping)",
        Stop.INTERRUPTED: "; interrupted: the folder is complete, and running again carries on",
        Stop.FAILURES: f"; stopped: {result.failed} throws failed in a row (last: {result.last_failure})",
    }[result.stop]
    print(f"{out}: {result.written} rolls kept, {result.failed} failed{ended}; {folder.lines} rolls in all")
    if not folder.lines:
        return 1
    print(f"  {bound_line(folder.lines, len(loaded), args.max_wrong, out)}")
    _group_and_report(out, force=False, sheets=True, min_per_face=args.min_per_face)
    if result.stop is Stop.INTERRUPTED:
        return 130
    return 1 if result.stop is Stop.FAILURES else 0


def bound_line(photos: int, dice_per_photo: int, max_wrong: float, folder: Path) -> str:
    """What fit's held-back bound says of ``photos`` rolls: enough, or about how many more to roll."""
    from ...vision.taught.enough import dice_to_show, held_back_photos, rolls_to_show
    from ...vision.taught.fit import HOLD_BACK

    need = dice_to_show(max_wrong)
    held = held_back_photos(photos, HOLD_BACK) * dice_per_photo
    head = (
        f"teach fit holds back the latest {HOLD_BACK:.0%} of the rolls: {held} dice; showing at most "
        f"{max_wrong:.1%} wrong takes {need}"
    )
    more = rolls_to_show(photos, dice_per_photo, HOLD_BACK, max_wrong)
    if not more:
        return f"{head}: enough"
    return f"{head}: roll about {more} more (dicetower teach collect ... --out {folder} carries on)"


def _group_and_report(folder: Path, *, force: bool, sheets: bool, min_per_face: int) -> None:
    from ...vision.taught.coverage import die_coverage
    from ...vision.taught.grouped import group_folder, has_names
    from ...vision.taught.naming import TEACH_FILE as TEACH

    if not force and has_names(folder):
        _extend_and_report(folder, sheets=sheets, min_per_face=min_per_face)
        return
    grouped = group_folder(folder, force=force, sheets=sheets, log=_log)
    covers = [die_coverage(folder, die, groups, min_per_face) for die, groups in grouped]
    _report(covers)
    where = f"; contact sheets in {folder / 'sheets'}" if sheets else ""
    print(f"{folder / TEACH}: {len(grouped)} dice grouped{where}")
    print(f"next: name the groups on the /teach page of 'dicetower serve --teach {folder}'")


def _extend_and_report(folder: Path, *, sheets: bool, min_per_face: int) -> None:
    """A named folder: its new crops join its groups, every name kept; a saved manifest follows."""
    from ...vision.taught.coverage import die_coverage
    from ...vision.taught.extend import extend_folder
    from ...vision.taught.grouped import folder_crops
    from ...vision.taught.naming import TEACH_FILE as TEACH
    from ...vision.taught.naming import UNNAMED_MANIFEST, write_labelled

    extended = extend_folder(folder, sheets=sheets, log=_log)
    new = sum(e.new for e in extended)
    if not new:
        print(
            f"{folder / TEACH}: every crop is in a group already, names kept; "
            f"'dicetower teach group {folder} --force' groups every crop anew (the names are lost)"
        )
        return
    found = {d.id: d for d in folder_crops(folder)}
    _report([die_coverage(folder, found[e.die.id], e.die.groups, min_per_face) for e in extended])
    for e in extended:
        if e.new:
            print(
                f"  {e.die.id}: {e.new} new crops, {e.into_named} in named groups, "
                f"{e.new - e.into_named - e.loose} in unnamed groups, {e.loose} loose"
            )
    print(f"{folder / TEACH}: {new} new crops added to the groups, every name kept")
    if (folder / UNNAMED_MANIFEST).exists():  # named and saved before: the manifest follows the names
        summary = write_labelled(folder)
        print(f"{folder / 'manifest.jsonl'}: {summary.named} dice named, {summary.unnamed} without a face")
    print(
        f"next: look over the new crops on the /teach page of 'dicetower serve --teach {folder}' and save, "
        f"then 'dicetower teach fit {folder} --out MODEL'"
    )


def _report(covers: list[DieCoverage]) -> None:
    for cover in covers:
        print(f"  {cover.describe()}")
        if not cover.done:
            print(f"    {cover.hint()}")


def _loaded_from(config_path: str | None) -> tuple[Any, list[tuple[str, str]] | None]:
    """The reader and loaded dice for a folder of photos: the config's, or the general reader's guess."""
    if config_path is None:
        from ...vision.reader import open_reader

        return open_reader(numerals=True), None
    from ..config import load_config
    from ..tower import reader_for_tray

    cfg = load_config(config_path)
    return reader_for_tray(cfg.dice.dice, cfg.camera.tray_colour), [(d.kind, d.colour) for d in cfg.dice.dice]


def run_group(args: argparse.Namespace) -> int:
    from ...vision.manifest import read_manifest
    from ...vision.taught.convert import convert_folder, finish_cut_off, is_teach_folder

    folder = Path(args.folder)
    if folder.is_dir():
        finish_cut_off(folder)  # a conversion in place cut off between its renames
    if not (folder / "manifest.jsonl").is_file():
        raise FileNotFoundError(
            f"{folder}: no manifest.jsonl (a teach folder, or a folder dicetower record wrote)"
        )
    if is_teach_folder(list(read_manifest(folder, unnamed=True))):
        if args.out is not None:
            raise ValueError(f"{folder} is a teach folder already: --out is for a folder of photos")
        if args.config is not None:
            raise ValueError(
                f"{folder} is a teach folder already: its dice are named; --config is for photos"
            )
    else:
        reader, loaded = _loaded_from(args.config)
        done = convert_folder(folder, args.out, reader=reader, loaded=loaded, log=_log)
        dice = ", ".join(
            f"{n} {c} {k}" if n > 1 else f"{c} {k}" for (k, c), n in sorted(Counter(done.dice).items())
        )
        left = "; ".join(f"{n} ({why})" for why, n in done.skipped.most_common())
        how = "in place (the record's manifest kept as manifest.record.jsonl)" if done.in_place else "made"
        print(f"{done.folder}: a teach folder {how}: {done.lines} photos of {dice}")
        if left:
            print(f"  photos left out: {left}")
        folder = done.folder
    _group_and_report(folder, force=args.force, sheets=args.sheets, min_per_face=args.min_per_face)
    return 0
