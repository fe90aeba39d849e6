"""Taught readers on real photos: each die (or set) taught on its first photos, read on its later ones.

The protocol ``../shared/README.md`` asks for, as an owner would use teaching: per die or set,
photos in capture order; the first third teaches (``dicetower teach fit``), a gap of
:data:`GAP` is skipped (near-duplicate neighbours of the last taught photo), and the rest is
read (``dicetower eval --taught``). Photos of one roll never fall on both sides.

What a *die* is, per dataset (:func:`units`):

- ``rsandrini-d20``: one physical d20, told by its colour; each video (background, face) is cut
  in capture order, so a die is taught each of its faces on the first third of that face's
  frames. Each photo's die is boxed against the photo's border (``single_die_box``, as the
  numeral training finds it). The six dice and their videos are listed in
  :data:`RSANDRINI_DICE` (looked at by eye: body colour, ink colour and speckle); each die shows
  only some faces, so each reader answers only among those (``--seen-faces-only``). Its photos
  carry no boxes: the fit locates the die in each (:mod:`dicetower.vision.taught.located`).
- ``matteop65-d6-wood``, ``skovy-d6-crops``, ``tomitomi3-gray-d6``: one set each; capture order
  is the frame number within each capture run (file-name prefix), the file's timestamp, and the
  index within each face's 200 images.
- ``byler-d6`` and ``epanemu-dice3`` mix many sets: one unit each, split by photo in file
  order (epanemu's augmented copies of one photo kept together by its source number).

The general networks trained on some of these sets' train splits (docs/numerals.md,
the d6 reader's card), which flatters their taught figures; ``skovy-d6-crops`` was in no
general network's training, nor were the rsandrini-d20 *test* videos (reported apart).

Each line says whether the card held (:func:`card_honesty`): the later photos' wrong rate under
the card's 95 % bound, and their right rate not more than :data:`RIGHT_SLACK` below the card's
lower bound, dice not found counted as not right on both sides.

Run: ``python -m dicetower.vision.training.taught.protocol --out runs/taught`` (one JSON line per
unit).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...eval.evaluate import label_box, match_dice
from ...eval.splits import background_of
from ...imageio import ImageError, load_image_info
from ...manifest import LabelledDie, ManifestEntry, read_manifest, write_manifest_line
from ...reader import open_reader
from ...reading import DiceReader

__all__ = [
    "GAP",
    "RIGHT_SLACK",
    "RSANDRINI_DICE",
    "TEACH_SHARE",
    "Unit",
    "capture_order",
    "card_honesty",
    "units",
    "write_unit",
]

#: Share of each run's photos that teaches, and the gap skipped after it.
TEACH_SHARE = 1 / 3
GAP = 0.1
#: How far below the card's lower bound the later right rate may lie and the card still hold.
RIGHT_SLACK = 0.05
#: rsandrini-d20's six physical dice and their videos (background prefix + face), by eye.
RSANDRINI_DICE: dict[str, tuple[str, ...]] = {
    "orange-white": ("color1", "off-angle_1", "top_10", "top_15"),
    "salmon": ("wood3", "wood7"),
    "orange-black": ("color13", "off-angle_5", "top_20", "wood9", "wood14"),
    "purple": ("color7", "off-angle_17", "top_11", "wood11", "wood12"),
    "black": ("color8", "top_1", "wood2", "wood5"),
    "blue-gold": ("color15", "off-angle_15", "top_9", "wood18", "wood20"),
}
#: Datasets whose units are single sets (no per-die split).
SETS = ("matteop65-d6-wood", "skovy-d6-crops", "tomitomi3-gray-d6", "byler-d6", "epanemu-dice3")


@dataclass
class Unit:
    """One die or set: its teaching photos and its reading photos, in capture order."""

    dataset: str
    name: str
    teach: list[ManifestEntry]
    read: list[ManifestEntry]
    seen_faces_only: bool = False


def _capture_key(dataset: str, relpath: str) -> tuple[str, int | str]:
    """(run, position) of a photo in capture order (positions compare within a dataset)."""
    name = relpath.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if dataset.startswith("tomitomi"):  # 00000 .. 00199, then 00200_00000 .. : 200 a face
        i = int(name.split("_")[0])
        return (str(i // 200), i % 200)
    if dataset.startswith("matteop65"):
        m = re.match(r"([a-z]+)_(\d+)", name)
        return (m.group(1), int(m.group(2))) if m else (name, 0)
    if dataset.startswith("skovy"):
        m = re.match(r"WIN_(\d+)_(\d+)_(\d+)_(\d+)", name)
        return ("", int("".join(m.groups()))) if m else ("", 0)
    if dataset.startswith("epanemu"):
        m = re.match(r"dice_(\d+)", name, re.IGNORECASE)
        return ("", int(m.group(1)) if m else 10**9)
    if dataset.startswith("rsandrini"):
        m = re.search(r"(\d+)$", name)
        return (background_of(relpath), int(m.group(1)) if m else 0)
    return ("", name)  # byler-d6: file names are capture timestamps


def capture_order(dataset: str, entries: Sequence[ManifestEntry]) -> list[ManifestEntry]:
    """``entries`` of ``dataset`` in the order their photos were taken, run by run."""
    return sorted(entries, key=lambda e: (*_capture_key(dataset, e.relpath), e.relpath))


def _cut(
    entries: list[ManifestEntry], dataset: str, run_of=None
) -> tuple[list[ManifestEntry], list[ManifestEntry]]:
    """Teach the first third of each run, skip the gap, read the rest."""
    runs: dict[object, list[ManifestEntry]] = {}
    for e in entries:
        run, _pos = _capture_key(dataset, e.relpath)
        key = run_of(e) if run_of is not None else run
        runs.setdefault(key, []).append(e)
    teach: list[ManifestEntry] = []
    read: list[ManifestEntry] = []
    for members in runs.values():
        positions = sorted({_capture_key(dataset, e.relpath)[1] for e in members})
        rank = {p: i / len(positions) for i, p in enumerate(positions)}
        for e in members:
            at = rank[_capture_key(dataset, e.relpath)[1]]
            if at < TEACH_SHARE:
                teach.append(e)
            elif at >= TEACH_SHARE + GAP:
                read.append(e)
    key = lambda e: (_capture_key(dataset, e.relpath)[1], e.relpath)  # noqa: E731
    return sorted(teach, key=key), sorted(read, key=key)


def units(datasets: Path, names: Sequence[str]) -> list[Unit]:
    """The units of the named datasets (see the module docstring)."""
    out: list[Unit] = []
    for name in names:
        folder = datasets / name
        entries = [e for e in read_manifest(folder) if e.dice]
        if name == "rsandrini-d20":
            die_of = {video: die for die, videos in RSANDRINI_DICE.items() for video in videos}
            by_die: dict[str, list[ManifestEntry]] = {}
            for e in entries:
                video = f"{background_of(e.relpath)[4:]}{e.dice[0].face}"
                if video in die_of:
                    by_die.setdefault(die_of[video], []).append(e)
            for die, members in sorted(by_die.items()):
                teach, read = _cut(members, name, run_of=lambda e: (background_of(e.relpath), e.dice[0].face))
                out.append(Unit(name, die, teach, read, seen_faces_only=True))
        elif name in SETS:
            teach, read = _cut(entries, name)
            out.append(Unit(name, name, teach, read))
        else:
            raise ValueError(f"no protocol for {name}")
    return out


def located(entries: list[ManifestEntry], reader: DiceReader) -> list[ManifestEntry]:
    """``entries`` with each label's box the one the general reader located (as a tower collects).

    Why: a taught head reads crops cut where the locator puts the die; crops cut at a hand-drawn
    box (matteop65's cover the pips only) would teach it another framing. Labels the locator
    did not find are left out.
    """
    out = []
    for e in entries:
        try:
            info = load_image_info(e.image)
        except ImageError:
            continue
        reading = reader.read(info.frame)
        h, w = info.frame.shape[:2]
        boxes = [label_box(d, w, h, info.scale) for d in e.dice]
        matched, _extra = match_dice(boxes, [r.centres for r in reading.dice])
        dice = []
        for d, j in zip(e.dice, matched, strict=True):
            if j is not None:
                box = tuple(v / info.scale for v in reading.dice[j].box)
                dice.append(LabelledDie(d.die, d.face, box, d.cocked, d.colour))  # type: ignore[arg-type]
        if dice:
            out.append(ManifestEntry(e.image, tuple(dice), e.line, e.relpath, e.reference, e.manifest))
    return out


def card_honesty(card: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """The later photos' figures (eval's JSON) against the card's held-back interval and bound."""
    held = card["held_back"]
    n = later["dice"]
    right = later["correct"] / n if n else 0.0
    wrong = later["wrong"] / n if n else 0.0
    return {
        "later_dice": n,
        "later_right_rate": round(right, 4),
        "card_right_interval": held["right_interval"],
        "right_holds": right >= held["right_interval"][0] - RIGHT_SLACK,
        "later_wrong_rate": round(wrong, 4),
        "card_wrong_upper": held["wrong_upper"],
        "wrong_holds": wrong <= held["wrong_upper"],
    }


def write_unit(entries: list[ManifestEntry], out: Path) -> Path:
    """A manifest folder of ``entries`` under ``out`` (photos copied in; paths stay relative)."""
    if out.exists():
        shutil.rmtree(out)
    (out / "images").mkdir(parents=True)
    with open(out / "manifest.jsonl", "w", encoding="utf-8") as fh:
        for e in entries:
            rel = f"images/{e.image.name}"
            shutil.copyfile(e.image, out / rel)
            write_manifest_line(fh, rel, list(e.dice))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m dicetower.vision.training.taught.protocol", description=__doc__
    )
    ap.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--out", type=Path, default=Path("runs/taught"))
    ap.add_argument("--sets", default="rsandrini-d20," + ",".join(SETS))
    ap.add_argument(
        "--fitted-reader", action="store_true", help="fit as `teach fit --fitted-reader` does (needs torch)"
    )
    a = ap.parse_args(argv)
    from ...taught.fit import FitOptions, fit_model
    from .read_units import read_unit

    for unit in units(a.datasets, [s for s in a.sets.split(",") if s]):
        base = a.out / unit.dataset / unit.name
        if unit.dataset == "rsandrini-d20":  # photos without boxes: the fit locates each die
            teach = write_unit(unit.teach, base / "teach")
            read = write_unit(unit.read, base / "read")
        else:
            teach = write_unit(located(unit.teach, open_reader()), base / "teach")
            read = write_unit(unit.read, base / "read")
        options = FitOptions(
            max_wrong=1.0,
            seen_faces_only=unit.seen_faces_only,
            min_per_face=1,
            fitted_readers=a.fitted_reader,
        )
        result = fit_model(teach, base / "model", options, log=lambda m: print(m, file=sys.stderr))
        figures = read_unit(read, base / "model", unit.dataset, compare=True)
        line = {
            "dataset": unit.dataset,
            "unit": unit.name,
            "teach_photos": len(unit.teach),
            "read_photos": len(unit.read),
            "fit_seconds": round(result.seconds, 1),
            "input": result.card.get("input"),
            "held_back": result.card["held_back"],
            "held_back_by_reader": {d["id"]: d["figures"].get("readers") for d in result.card["dice"]},
            "fitted_readers": result.card.get("fitted_readers"),
            **figures,
            "card_honesty": card_honesty(result.card, figures["end_to_end"]),
        }
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
