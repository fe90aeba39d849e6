"""A teach folder's crops grouped by face, without labels: ``teach.json`` and the contact sheets.

Why a file of groups: naming each face once is a minute's work, naming each crop an hour's. Each
die of the folder (a kind and colour: dice of one kind and colour are one die to the tower) has
its crops sorted into as many groups as it has faces (:func:`~.group.group_crops`), largest
first, and ``teach.json`` (schema ``dicetower.teach/1``, ``docs/teach.md``) lists them with no
names yet, for the ``/teach`` page or a labels file to name. A contact sheet per die shows one
row per group, for a person to look at.

Grouping again replaces the groups, so a ``teach.json`` that already holds names is kept unless
the caller forces it (the names would point at groups that no longer exist). The file is
:mod:`.naming`'s: built as its :class:`~.naming.Teach` and written by :func:`~.naming.save_teach`,
so what the grouping writes is what naming reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import VisionError
from ..imageio import ImageError, load_image
from ..kinds import LABELS, faces_of
from ..manifest import read_manifest
from .features import Backbone, NetworkSpec, backbone_for
from .folder import HINTS, read_side_file
from .group import MAX_CROPS, contact_sheet, group_crops
from .naming import TEACH_FILE, DieTeach, TaughtCrop, Teach, TeachError, load_teach, save_teach
from .teaching import die_id, slug

__all__ = [
    "CropRef",
    "FolderDie",
    "TeachFileError",
    "crop_images",
    "folder_crops",
    "group_die",
    "group_folder",
    "has_names",
    "hint_counts",
    "unnamed_die",
]


class TeachFileError(VisionError, ValueError):
    """A ``teach.json`` that grouping must not replace, or a folder it cannot group."""


@dataclass(frozen=True)
class CropRef:
    """One crop of a die: its file (relative to the folder), manifest line (1-based), die index."""

    crop: str
    line: int
    index: int
    image: str = ""  #: the line's photo, as the manifest names it


@dataclass
class FolderDie:
    """One die (kind, colour) of a teach folder and its crops in manifest order."""

    kind: str
    colour: str
    crops: list[CropRef] = field(default_factory=list)
    per_throw: int = 1  #: dice of this kind and colour in one throw (two white d6: 2)

    @property
    def id(self) -> str:
        return die_id(self.kind, self.colour)

    @property
    def faces(self) -> tuple[int, ...]:
        return faces_of(self.kind)


def folder_crops(folder: str | Path) -> list[FolderDie]:
    """The dice of a teach folder's manifest and their crops, in the table's kind order, then colour."""
    dice: dict[tuple[str, str], FolderDie] = {}
    for entry in read_manifest(folder, unnamed=True):
        counts: dict[tuple[str, str], int] = {}
        for i, d in enumerate(entry.dice):
            if not d.crop:
                raise TeachFileError(
                    f"{entry.where()}: dice[{i}] has no crop: not a teach folder (dicetower teach group "
                    "makes one from a folder of photos)"
                )
            key = (d.die, d.colour)
            die = dice.setdefault(key, FolderDie(*key))
            die.crops.append(CropRef(d.crop, entry.line, i, entry.relpath))
            counts[key] = counts.get(key, 0) + 1
        for key, n in counts.items():
            dice[key].per_throw = max(dice[key].per_throw, n)
    return sorted(dice.values(), key=lambda d: (LABELS.index(d.kind), d.colour))


def hint_counts(folder: str | Path, die: FolderDie) -> dict[int, int]:
    """How often the general reader read each face of ``die`` surely (``hints.jsonl``): a hint only."""
    hints = read_side_file(Path(folder) / HINTS)
    counts: dict[int, int] = {}
    for ref in die.crops:
        faces = hints.get(ref.image, {}).get("faces")
        face = faces[ref.index] if isinstance(faces, list) and ref.index < len(faces) else None
        if isinstance(face, int) and not isinstance(face, bool):
            counts[face] = counts.get(face, 0) + 1
    return counts


def has_names(folder: str | Path) -> bool:
    """Does ``folder``'s ``teach.json`` name any group or crop (or can it not be read)?"""
    if not (Path(folder) / TEACH_FILE).is_file():
        return False
    try:
        teach = load_teach(folder)
    except (TeachError, OSError):
        return True  # unreadable: it may hold names; only --force replaces it
    return any(f is not None for d in teach.dice for f in (*d.names, *d.loose_faces))


def crop_images(folder: Path, die: FolderDie) -> list[np.ndarray]:
    """``die``'s crops as BGR images, in order; a crop that cannot be read is a :class:`TeachFileError`."""
    images = []
    for ref in die.crops:
        try:
            images.append(load_image(folder / ref.crop))
        except ImageError as exc:
            raise TeachFileError(f"{die.id}: crop of manifest line {ref.line}: {exc}") from None
    return images


def group_die(
    folder: str | Path,
    die: FolderDie,
    backbones: dict[NetworkSpec, Backbone] | None = None,
    images: list[np.ndarray] | None = None,
) -> list[list[int]]:
    """``die``'s crops (indices) grouped by face, largest group first.

    ``backbones`` caches the general networks between calls (each loads in a fraction of a second,
    a check every few rolls adds up); ``images`` are the crops when already loaded.
    """
    if len(die.crops) > MAX_CROPS:
        raise TeachFileError(
            f"{die.id}: {len(die.crops)} crops; grouping takes at most {MAX_CROPS} a die: "
            "teach on fewer rolls"
        )
    spec = backbone_for(die.kind)
    cache = backbones if backbones is not None else {}
    if spec not in cache:
        cache[spec] = Backbone(spec)
    crops = images if images is not None else crop_images(Path(folder), die)
    return group_crops(cache[spec], crops, len(die.faces), kind=die.kind)


def unnamed_die(die: FolderDie, groups: Sequence[Sequence[int]]) -> DieTeach:
    """``die`` and its ``groups`` as :mod:`.naming` holds a die, no group named yet."""
    crops = tuple(TaughtCrop(c.crop, c.line, c.index) for c in die.crops)
    held = tuple(tuple(g) for g in groups)
    return DieTeach(die.id, slug(die.id), die.kind, die.colour, die.faces, crops, held, (None,) * len(held))


def group_folder(
    folder: str | Path,
    *,
    force: bool = False,
    sheets: bool = True,
    log: Callable[[str], None] | None = None,
) -> list[tuple[FolderDie, list[list[int]]]]:
    """Group every die of the teach folder, write ``teach.json`` and (``sheets``) ``sheets/<slug>.png``.

    A ``teach.json`` that names groups is refused (:class:`TeachFileError`) unless ``force``.
    Returns each die with its groups.
    """
    folder = Path(folder)
    if not force and has_names(folder):
        raise TeachFileError(
            f"{folder / TEACH_FILE}: holds names; grouping again loses them (--force groups anyway)"
        )
    dice = folder_crops(folder)
    if not dice:
        raise TeachFileError(f"{folder}: no dice in the manifest to group")
    slugs = [slug(d.id) for d in dice]
    if len(set(slugs)) != len(slugs):
        raise TeachFileError(f"{folder}: two dice share a crops folder ({', '.join(d.id for d in dice)})")
    backbones: dict[NetworkSpec, Backbone] = {}
    out: list[tuple[FolderDie, list[list[int]]]] = []
    for die, name in zip(dice, slugs, strict=True):
        images = crop_images(folder, die)
        groups = group_die(folder, die, backbones, images)
        if sheets:
            title = f"{die.id}: {len(images)} crops in {len(groups)} groups, one row a group"
            contact_sheet(images, groups, folder / "sheets" / f"{name}.png", title)
        if log is not None:
            log(f"{die.id}: {len(images)} crops in {len(groups)} groups")
        out.append((die, groups))
    save_teach(folder, Teach(tuple(unnamed_die(die, groups) for die, groups in out)))
    return out
