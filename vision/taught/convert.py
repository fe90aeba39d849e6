"""A folder of photos made a teach folder: what ``dicetower record`` wrote, grouped like a collect.

Why: a tower may have recorded its dice before teaching existed, or a person may have photos in
the manifest format. Such a folder holds photos (and, from the simulated camera, their truth) but
no crops and no colour names. Converting it reads each photo with the general reader (faces need
not be read), pairs each located die with a loaded die (:func:`~..identity.identify_loaded`), cuts
its crop and writes a manifest line without faces; labelled faces go to ``truth.jsonl``.

The loaded dice are the caller's (``--config``) or, without them, the dice most photos show by
kind and colour name: a white die a photo names ``translucent`` is still the white die when the
other photos show one. A photo whose dice are not those (one missing, one extra), or with a die
that shows no face squarely up (:data:`~..reading.NOT_FLAT`), is left out and counted.

**In place or into a new folder.** In place (the default) adds ``crops/`` and the side files and
replaces ``manifest.jsonl``, keeping the record's as ``manifest.record.jsonl``: nothing is copied,
which suits a Pi's card. The new manifest is written under a temporary name and renamed when
whole, so a cut-off conversion leaves the record as it was. A folder whose photos are labelled
(a dataset ``dicetower eval`` and the replay camera read) is never converted in place: ``out``
makes the teach folder beside it, its photos linked (or copied) in, and the dataset unchanged.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..identity import identify_loaded, kind_is_sure
from ..imageio import ImageError, load_image
from ..kinds import label_of
from ..manifest import ManifestEntry, read_manifest
from ..reading import NOT_FLAT, DiceReader, Reading, ReadStatus
from .folder import HINTS, MANIFEST, TRUTH, NewDie, TeachFolder, TeachFolderError, crop_png, truth_faces

__all__ = [
    "CONVERTING",
    "RECORD_MANIFEST",
    "Conversion",
    "convert_folder",
    "finish_cut_off",
    "infer_loaded",
    "is_teach_folder",
    "teaching_pairing",
]

#: Where the record's own manifest is kept once a folder is converted in place.
RECORD_MANIFEST = "manifest.record.jsonl"
#: The new manifest while it is written (renamed over ``manifest.jsonl`` when whole).
CONVERTING = ".manifest.converting.jsonl"


@dataclass
class Conversion:
    """What a conversion did: the lines written, the photos left out and why, the dice it used."""

    folder: Path
    lines: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    dice: list[tuple[str, str]] = field(default_factory=list)
    in_place: bool = True


def is_teach_folder(entries: Sequence[ManifestEntry]) -> bool:
    """Do these lines make a teach folder (every die with its crop) rather than a folder of photos?"""
    dice = [d for e in entries for d in e.dice]
    return bool(dice) and all(d.crop for d in dice)


def infer_loaded(readings: Sequence[Reading]) -> list[tuple[str, str]]:
    """The dice (kind, colour name) most readings show, counting only those whose every die lies flat
    and is of a sure kind (any reading, when none is)."""
    clean = [
        r for r in readings if r.dice and all(d.reason not in NOT_FLAT and kind_is_sure(d) for d in r.dice)
    ]
    sets = Counter(
        tuple(sorted((label_of(d.kind), d.colour) for d in r.dice)) for r in (clean or readings) if r.dice
    )
    if not sets:
        return []
    return list(sets.most_common(1)[0][0])


def teaching_pairing(reading: Reading, loaded: Sequence[tuple[str, str]]) -> tuple[str | None, list[int]]:
    """``(why left out, loaded index per die)``: a photo counts when its dice are the loaded dice,
    each flat, each paired with one of them."""
    if len(reading.dice) != len(loaded):
        return f"{len(reading.dice)} dice found, {len(loaded)} loaded", []
    if any(d.reason in NOT_FLAT for d in reading.dice):
        return "a die not lying flat", []
    pairing = identify_loaded(reading.dice, loaded)
    if None in pairing:
        return "a die of a kind not loaded", []
    return None, [i for i in pairing if i is not None]


def _place(src: Path, dst: Path) -> None:
    """``dst`` as a hard link to ``src`` where the file system allows, else a copy."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        return
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def finish_cut_off(folder: Path) -> None:
    """A conversion in place cut off between its two renames: its new manifest was whole, so finish."""
    if not (folder / MANIFEST).exists() and (folder / RECORD_MANIFEST).is_file():
        if (folder / CONVERTING).is_file():
            os.replace(folder / CONVERTING, folder / MANIFEST)
        else:
            os.replace(folder / RECORD_MANIFEST, folder / MANIFEST)


def convert_folder(
    src: str | Path,
    out: str | Path | None = None,
    *,
    reader: DiceReader,
    loaded: Sequence[tuple[str, str]] | None = None,
    log: Callable[[str], None] | None = None,
) -> Conversion:
    """Make the folder of photos ``src`` a teach folder, in place or (``out``) beside it.

    ``reader`` locates the dice; ``loaded`` are the dice (kind, colour) to pair them with, inferred
    from the photos when None. Raises :class:`~.folder.TeachFolderError` for a folder that is
    already a teach folder, or a labelled one to be converted in place.
    """
    src = Path(src)
    in_place = out is None or Path(out).resolve() == src.resolve()
    if in_place:
        finish_cut_off(src)
    entries = list(read_manifest(src, unnamed=True))
    if not entries:
        raise TeachFolderError(f"{src}: the manifest names no photos")
    if is_teach_folder(entries):
        raise TeachFolderError(f"{src}: already a teach folder")
    if any(d.crop for e in entries for d in e.dice):
        raise TeachFolderError(f"{src}: some dice have crops and some not: neither a teach folder nor photos")
    if in_place and any(d.face is not None for e in entries for d in e.dice):
        raise TeachFolderError(
            f"{src}: its photos are labelled (a dataset eval and replay read): give --out DIR for the teach "
            f"folder, so {src} stays as it is"
        )
    target = src if in_place else Path(str(out))
    if in_place:  # what a conversion cut off before its renames left: a folder of photos has none
        for name in (CONVERTING, TRUTH, HINTS):
            (src / name).unlink(missing_ok=True)
    if not in_place and target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise TeachFolderError(f"{target}: exists and is not an empty folder; convert into a new one")
    readings = []
    for n, entry in enumerate(entries, 1):
        readings.append(_read(entry, reader))
        if log is not None and n % 100 == 0:
            log(f"read {n} of {len(entries)} photos")
    dice = list(loaded) if loaded is not None else infer_loaded([r for r in readings if r is not None])
    done = Conversion(target, dice=dice, in_place=in_place)
    if not dice:
        raise TeachFolderError(f"{src}: no dice found in its photos")
    folder = TeachFolder(target, manifest=CONVERTING if in_place else MANIFEST)
    for entry, reading in zip(entries, readings, strict=True):
        if reading is None:
            done.skipped["the photo cannot be read"] += 1
            continue
        why, pairing = teaching_pairing(reading, dice)
        if why is not None:
            done.skipped[why] += 1
            continue
        frame = load_image(entry.image)
        paired = zip(reading.dice, pairing, strict=True)
        new = [NewDie(*dice[i], d.box, crop_png(frame, d.box)) for d, i in paired]
        truth = truth_faces([d.box for d in reading.dice], entry.dice) if entry.dice else None
        hints = [d.face if d.status is ReadStatus.READ else None for d in reading.dice]
        reference = entry.reference.relative_to(src.resolve()).as_posix() if entry.reference else None
        if not in_place:
            _place(entry.image, target / entry.relpath)
            if reference is not None and entry.reference is not None:
                _place(entry.reference, target / reference)
        folder.reference = reference
        folder.add(None, new, truth=truth, hints=hints, image=entry.relpath)
        done.lines += 1
    if not done.lines:
        if in_place:
            for name in (CONVERTING, TRUTH, HINTS):
                (src / name).unlink(missing_ok=True)
        why = "; ".join(f"{n}: {reason}" for reason, n in done.skipped.most_common())
        raise TeachFolderError(f"{src}: no photo shows the dice {_names(dice)} ({why})")
    if in_place:
        os.replace(src / MANIFEST, src / RECORD_MANIFEST)
        os.replace(src / CONVERTING, src / MANIFEST)
    return done


def _names(dice: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{colour} {kind}" for kind, colour in dice)


def _read(entry: ManifestEntry, reader: DiceReader) -> Reading | None:
    try:
        frame = load_image(entry.image)
        reference = load_image(entry.reference) if entry.reference is not None else None
    except ImageError:
        return None
    return reader.read(frame, reference)
