"""``dicetower teach fit FOLDER --out MODEL``: a taught reader from a labelled folder.

FOLDER is any folder in the manifest format with faces named: a teach folder after
``dicetower teach name``, or photos labelled by hand. The fit, its held-back figures and its
refusals are :mod:`dicetower.vision.taught.fit`'s; this module parses, runs and prints. Before
the fit's minutes of work it checks what the fit would refuse for at the end
(:mod:`dicetower.vision.taught.ready`): the ``teach`` extra's packages, the faces named too few
times and too few held-back dice, saying how many more rolls each die needs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .arguments import rate

__all__ = ["EXAMPLES", "add_fit_parser", "check_ready", "run_fit"]

EXAMPLES = """\
examples:
  dicetower teach fit teach/ --out my-dice
  dicetower teach fit recordings/ --out my-dice --tray recordings/images/empty.png
  dicetower teach fit ../shared/datasets/skovy-d6-crops --out skovy --max-wrong 1 --crops
  dicetower eval my-dice/held-back --taught my-dice   # prints the card's held-back counts
"""


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value <= 10_000:
        raise argparse.ArgumentTypeError(f"expected 1 to 10000, got {value}")
    return value


def add_fit_parser(actions: Any) -> argparse.ArgumentParser:
    """Add ``fit`` to the ``teach`` command's actions."""
    from ...vision.taught.fit import HOLD_BACK, MAX_WRONG, MIN_PER_FACE

    p = actions.add_parser(
        "fit",
        help="fit a taught reader on a folder of named dice",
        description="Learn the tray, each taught die's body and a reader for its faces from a labelled "
        "folder (manifest format); hold back its latest rolls to set each die's abstention threshold, "
        "and write the held-back figures into the model's card (taught.json).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("folder", type=Path, metavar="FOLDER", help="a folder with manifest.jsonl, faces named")
    p.add_argument("--out", type=Path, required=True, metavar="MODEL", help="the taught model's folder")
    p.add_argument(
        "--hold-back",
        type=_share,
        default=HOLD_BACK,
        metavar="SHARE",
        help=f"share of each die's latest photos held back (default {HOLD_BACK})",
    )
    p.add_argument(
        "--min-per-face",
        type=_count,
        default=MIN_PER_FACE,
        metavar="N",
        help=f"refuse when a face was named fewer times (default {MIN_PER_FACE})",
    )
    p.add_argument(
        "--max-wrong",
        type=rate,
        default=MAX_WRONG,
        metavar="RATE",
        help=f"refuse when the held-back wrong rate could be over RATE (95 %% bound; default {MAX_WRONG})",
    )
    p.add_argument(
        "--seen-faces-only",
        action="store_true",
        help="teach only the faces named (photos that show some faces); the die then answers only those",
    )
    p.add_argument(
        "--tray", type=Path, metavar="PHOTO", help="a photo of the empty tray (default: the folder's)"
    )
    p.add_argument(
        "--crops",
        action="store_true",
        help="each image without a box is one die's crop (else such images are photos and each die is"
        " located, unless they are crop-sized)",
    )
    p.add_argument(
        "--fitted-reader",
        action="store_true",
        help="also train a face reader on each die's own crops (needs the teach-net extra; minutes per die),"
        " and keep it where it reads more held-back dice right than the head",
    )
    p.add_argument("--force", action="store_true", help="replace a taught model already in --out")
    p.set_defaults(func=run_fit)
    return p


def _check_out(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"--out {out}: not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        if (out / "taught.json").is_file():
            raise FileExistsError(f"--out {out}: holds a taught model; --force replaces it")
        raise FileExistsError(f"--out {out}: not empty; choose a new folder")


def check_ready(args: argparse.Namespace, log: Any) -> None:
    """Refuse, before any long work, what the fit would refuse at its end (module docstring)."""
    from ...vision.taught.ready import TEACH_PACKAGES, fit_readiness, missing_packages

    missing = missing_packages()
    if missing:
        listed = ", ".join(f"{name} ({TEACH_PACKAGES[name]})" for name in missing)
        raise ModuleNotFoundError(
            f"teach fit needs the teach extra: pip install 'dicetower[teach]' (missing: {listed})"
        )
    ready = fit_readiness(
        args.folder,
        hold_back=args.hold_back,
        min_per_face=args.min_per_face,
        max_wrong=args.max_wrong,
        seen_faces_only=args.seen_faces_only,
    )
    if ready.dice and not ready.ready:  # no named die at all: the fit's own refusal says so
        for die in ready.dice:
            log(die.describe(args.min_per_face))
        raise ValueError(ready.summary())


def run_fit(args: argparse.Namespace) -> int:
    from ...vision.taught.fit import FitOptions, fit_model
    from .output import escape_controls

    if not (args.folder / "manifest.jsonl").is_file():
        raise FileNotFoundError(f"{args.folder}: no manifest.jsonl (a labelled folder, docs/teach.md)")
    _check_out(args.out, args.force)
    options = FitOptions(
        hold_back=args.hold_back,
        min_per_face=args.min_per_face,
        max_wrong=args.max_wrong,
        seen_faces_only=args.seen_faces_only,
        tray=args.tray,
        crops=args.crops,
        fitted_readers=args.fitted_reader,
    )
    command = f"dicetower teach fit {args.folder} --out {args.out}"

    def log(message: str) -> None:  # notes name dice and files from the folder
        print(f"dicetower: {escape_controls(message)}", file=sys.stderr)

    check_ready(args, log)
    result = fit_model(args.folder, args.out, options, log=log, command=command)
    held = result.card["held_back"]
    out = escape_controls(str(result.out))
    print(f"{out}: {len(result.card['dice'])} taught dice, fitted in {result.seconds:.0f} s")
    for die in result.card["dice"]:
        name = escape_controls(die["id"])  # the colour names of the folder's manifest
        print(f"  {name}: {_figures_line(die['figures'])}; threshold {die['threshold']:.3f}")
        if "fallback" in die["figures"]:
            print(f"    {_fallback_line(die['figures']['fallback'])}")
        if "readers" in die["figures"]:
            which = "fitted reader" if die["reader"] == "fitted" else "head"
            print(f"    reads by its {which}: {escape_controls(die['figures']['readers']['why'])}")
    why_none = result.card.get("fitted_readers", {}).get("why_none")
    if why_none:
        print(f"  no fitted face readers: {escape_controls(why_none)}")
    print(f"  all: {_figures_line(held)}")
    shown = result.card["held_back_photos"]
    print(
        f"  the {shown['photos']} held-back photos, read end to end: dicetower eval"
        f" {result.out / shown['folder']} --taught {result.out}"
    )
    return 0


def _fallback_line(f: dict[str, Any]) -> str:
    verdict = "taken" if f["used"] else "not taken"
    return (
        f"the general answer where unsure: right {f['right']}, wrong {f['wrong']} of {f['asked']}"
        f" left unreadable: {verdict}"
    )


def _figures_line(f: dict[str, Any]) -> str:
    lo, hi = f["right_interval"]
    missed = f" ({f['missed']} not found)" if f.get("missed") else ""
    return (
        f"held back {f['dice']}: right {f['right']} ({lo:.1%} to {hi:.1%}), wrong {f['wrong']}"
        f" (at most {f['wrong_upper']:.1%}), unreadable {f['unreadable']}{missed}"
    )
