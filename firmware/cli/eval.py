"""``dicetower eval DIR [DIR...]``: read every labelled photo of a folder and score the reader.

Each folder holds ``manifest.jsonl`` (see ``docs/vision.md``). The metrics and the matching
rule are defined in :mod:`dicetower.vision.eval.evaluate`; this module only runs and prints them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, TextIO

import cv2

from ...vision.eval.errata import errata_for
from ...vision.eval.evaluate import EvalError, FolderReport, PhotoResult, evaluate_folder, select_entries
from ...vision.imageio import ImageError, load_image
from ...vision.reader import import_reader, open_reader
from ...vision.reading import DiceReader
from . import COMMANDS
from .arguments import positive_int
from .progress import Progress

__all__ = ["MAX_SAVED_FAILURES", "check_labelled_folders", "register", "run"]

#: At most this many failed photos are saved per folder by ``--save-failures``.
MAX_SAVED_FAILURES = 2000

EXAMPLES = """\
examples:
  dicetower eval ../shared/datasets/byler-d6
  dicetower eval ../shared/datasets/*-d6 --json --split test
  dicetower eval recordings/ --save-failures failures --limit 50
  dicetower eval ../shared/datasets/byler-d6 --split val --models my-reader
  dicetower eval ../shared/datasets/byler-d6 --split test --errata vision/training/errata
  dicetower eval my-teach-folder --taught my-dice --json
"""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "eval",
        help=COMMANDS["eval"],
        description="Read every photo listed in each folder's manifest.jsonl and report accuracy, "
        "confidently-wrong and reject rates, per-face figures and the median read time.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("folders", nargs="+", metavar="DIR", type=Path, help="folder with manifest.jsonl")
    p.add_argument("--json", action="store_true", help="print one JSON object per folder (one a line)")
    p.add_argument(
        "--save-failures", metavar="OUT", type=Path, help="write annotated photos and crops of failures"
    )
    p.add_argument("--limit", metavar="N", type=positive_int, help="read N photos per folder, spread evenly")
    p.add_argument("--split", choices=("train", "val", "test"), help="only photos of this split")
    p.add_argument(
        "--kinds", metavar="KIND[,KIND]", type=_kinds, help="only labels of these die kinds (e.g. d6)"
    )
    p.add_argument(
        "--reader",
        metavar="MODULE:NAME",
        help="score another reader instead of the built-in one: a class or object with read(frame, ...),"
        " e.g. dicetower.vision.eval.baseline:ClassicReader",
    )
    p.add_argument(
        "--models",
        metavar="DIR",
        type=Path,
        help="read with the candidate d6_reader.onnx/.json and/or detector.onnx in DIR "
        "(a model DIR lacks is the shipped one)",
    )
    p.add_argument(
        "--numerals",
        action="store_true",
        help="also read numeral d6, d10, d10t and d20 "
        "(on by itself when the labels scored hold a d10, d10t or d20)",
    )
    p.add_argument(
        "--taught",
        metavar="MODEL",
        type=Path,
        help="read the dice a taught model knows with their own readers (dicetower teach fit); "
        "other dice with the general reader",
    )
    p.add_argument(
        "--errata",
        metavar="DIR",
        type=Path,
        help="score against labels corrected by DIR/<folder name>.jsonl where there is one "
        "(vision/eval/errata.py; the repo's are in vision/training/errata); the report says how many",
    )
    p.add_argument(
        "--no-familiar",
        action="store_true",
        help="read every d6 the general reader is sure of, familiar or not "
        "(to measure the unfamiliar-die check, vision/faces/familiar.py)",
    )
    p.set_defaults(func=run)


def _kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    if not kinds or not all(re.fullmatch(r"d\d+t?", k) for k in kinds):
        raise argparse.ArgumentTypeError(f"kinds are like d6,d20: got {text!r}")
    return kinds


def check_labelled_folders(folders: list[Path], errata: Path | None) -> None:
    """Refuse, before any photo is read, a folder without a manifest or a missing errata folder."""
    for folder in folders:
        if not (folder / "manifest.jsonl").is_file():
            raise ImageError(f"{folder}: no manifest.jsonl (expected one JSON object per photo)")
    if errata is not None and not errata.is_dir():
        raise EvalError(f"--errata {errata}: no such folder (it holds <folder name>.jsonl files)")


def check_scored(folder: Path, photos: int, errors: int, examples: list[str]) -> None:
    """Refuse a folder that gave nothing to score: a 0 % table would read as a result."""
    if photos == 0:
        raise EvalError(f"{folder}: no photos to score (the manifest is empty, or --split/--kinds left none)")
    if errors == photos:
        first = f"; first: {examples[0]}" if examples else ""
        raise EvalError(f"{folder}: none of its {photos} photos could be read{first}")


def open_eval_reader(args: argparse.Namespace, numeral_kinds: list[str]) -> DiceReader:
    """The reader ``args`` ask for: another one (``--reader``), a taught one, or the built-in one."""
    if args.reader is not None:
        return import_reader(args.reader)
    if args.taught is not None:
        from ...vision.taught.model import TaughtModel
        from ...vision.taught.reader import open_taught_reader

        model = TaughtModel(args.taught)
        untaught = sorted(set(numeral_kinds) - model.kinds())
        taught = open_taught_reader(model, models=args.models, numerals=args.numerals or bool(untaught))
        taught.general.faces.check_familiar &= not args.no_familiar
        return taught
    return open_reader(
        args.models, numerals=args.numerals or bool(numeral_kinds), familiar=not args.no_familiar
    )


def run(args: argparse.Namespace) -> int:
    check_labelled_folders(args.folders, args.errata)
    if args.reader is not None and args.models is not None:
        raise EvalError("--models and --reader cannot be combined: --models sets the built-in reader's files")
    if args.reader is not None and args.no_familiar:
        raise EvalError(
            "--no-familiar and --reader cannot be combined: it turns off the built-in reader's check"
        )
    if args.reader is not None and args.taught is not None:
        raise EvalError("--taught and --reader cannot be combined: --taught reads with the built-in reader")
    chosen = []
    for folder in args.folders:
        errata = errata_for(folder, args.errata) if args.errata is not None else []
        entries = select_entries(folder, split=args.split, limit=args.limit, kinds=args.kinds, errata=errata)
        chosen.append((folder, errata, entries))
    numeral_kinds = sorted({d.die for _f, _e, entries in chosen for e in entries for d in e.dice} - {"d6"})
    if args.reader is None and numeral_kinds and not args.numerals:
        # a folder of d20 photos read as pip d6 would score 0 % for a reason the table does not say
        held = ", ".join(numeral_kinds)
        print(f"dicetower: the labels hold {held}: reading with --numerals", file=sys.stderr)
    reader = open_eval_reader(args, numeral_kinds)
    for folder, errata, entries in chosen:
        name = folder.resolve().name
        report = FolderReport(name)
        saved = 0
        progress = Progress(sys.stderr, name, len(entries))
        try:
            for i, result in enumerate(evaluate_folder(folder, reader, entries=entries), 1):
                report.add(result)
                if args.save_failures is not None and result.failed and saved < MAX_SAVED_FAILURES:
                    save_failure(args.save_failures / name, result)
                    saved += 1
                progress.step(i)
        finally:
            progress.close()
        check_scored(folder, report.photos, report.errors, report.error_examples)
        for example in report.error_examples:
            print(f"dicetower: warning: {example}", file=sys.stderr)
        data = report.to_json()
        if args.errata is not None:
            chosen = {e.relpath for e in entries}
            data["labels_corrected"] = sum(1 for e in errata if e.image in chosen)
        if args.json:
            print(json.dumps(data), flush=True)
        else:
            print_report(data)
    return 0


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def _interval(d: dict[str, Any]) -> str:
    lo, hi = d["accuracy_interval"]
    groups = d["groups"]
    return f"95% interval {_pct(lo)} to {_pct(hi)}, {groups} photo group{'s' if groups != 1 else ''}"


def print_report(d: dict[str, Any], out: TextIO | None = None) -> None:
    """The human-readable form of one folder's ``--json`` object."""
    out = out or sys.stdout
    ms = f"{d['median_ms']:.1f} ms" if d["median_ms"] is not None else "-"
    parts = [
        f"{d['dataset']}: {d['photos']} photos, {d['dice']} dice",
        f"correct {d['correct']} ({_pct(d['accuracy'])}, {_interval(d)})",
        f"wrong {d['wrong']} ({_pct(d['wrong_rate'])}, at most {_pct(d['wrong_rate_upper'])})",
        f"rejected {d['rejected']} ({_pct(d['reject_rate'])})",
        f"missed {d['missed']}",
        f"false positives {d['false_positives']} (read as a face {d['false_positives_read']})",
        f"reject ratio {d['reject_ratio']:.2f} (bias p {d['reject_bias_p']:.2f})",
        f"median {ms}/photo",
    ]
    print(" | ".join(parts), file=out)
    for kind, faces in d["per_face"].items():
        cells = "  ".join(
            f"{f}: {_pct(v['accuracy'])} (rej {_pct(v['reject_rate'])}, n={v['dice']})"
            for f, v in faces.items()
        )
        print(f"  {kind} per face  {cells}", file=out)
    views = d.get("per_view", {})
    if set(views) - {"none"}:  # which threshold set read them (vision/view.py)
        cells = "  ".join(
            f"{view}: {v['dice']} dice, {v['correct']} correct, {v['wrong']} wrong, {v['rejected']} rejected"
            for view, v in views.items()
        )
        print(f"  by view  {cells}", file=out)
    if d.get("rejected_by_reason"):
        cells = ", ".join(f"{reason} {n}" for reason, n in d["rejected_by_reason"].items())
        print(f"  rejected by reason  {cells}", file=out)
    if d["cocked"]["dice"]:
        c = d["cocked"]
        counts = f"rejected {c['rejected']}, read {c['read']}, missed {c['missed']}"
        print(f"  cocked: {c['dice']} ({counts})", file=out)
    if "labels_corrected" in d:
        print(
            f"  labels corrected by errata: {d['labels_corrected']} (scored against the corrections)",
            file=out,
        )
    if d["errors"]:
        print(f"  photos that failed to load or read: {d['errors']}", file=out)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:80]


def save_failure(out_dir: Path, result: PhotoResult) -> None:
    """Write the annotated photo and a crop of each failed die under ``out_dir``."""
    from ...vision.eval.annotate import annotate_result, crop_box

    out_dir.mkdir(parents=True, exist_ok=True)
    stem = _slug(result.entry.relpath.rsplit(".", 1)[0] if result.entry.relpath else result.entry.image.stem)
    try:
        frame = load_image(result.entry.image)
    except ImageError:
        (out_dir / f"{stem}.error.txt").write_text((result.error or "unreadable photo") + "\n")
        return
    cv2.imwrite(str(out_dir / f"{stem}.png"), annotate_result(frame, result))
    for i, s in enumerate(result.scored):
        if not s.right:
            name = f"{stem}_{i}_{s.verdict}_L{s.label.face}_R{_slug(s.read_text)}.png"
            cv2.imwrite(str(out_dir / name), crop_box(frame, s.box))
    for j, d in enumerate(result.false_positives):
        cv2.imwrite(str(out_dir / f"{stem}_fp{j}.png"), crop_box(frame, d.box))
