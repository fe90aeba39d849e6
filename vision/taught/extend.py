"""New crops of a named teach folder added to its groups, every name kept.

Why not group again: a teach folder collected on (``teach collect`` carrying on, because ``teach
fit`` wanted more rolls) already has names, and grouping anew makes new groups the names cannot
follow. So each die's new crops (the manifest's crops after those ``teach.json`` lists) are
compared with its groups, with the likeness the grouping uses (:func:`~.group.crops_likeness`):

- a new crop joins the group it is most like on average, as average linkage would join it;
- unless its likeness to that group lies nearer its likeness to the next group than the group's
  own crops' (the least of each old member's mean likeness to the rest of its group; for a group
  of one crop, the median of the die's other groups'): a crop between two groups is left
  *loose*, unnamed, for the owner to name alone.

The names, the loose crops and their names, and the owner's work counts stay as they were. A
``teach.json`` whose crops are not the first crops of the manifest (a folder of other rolls) cannot
be extended: the caller says to group anew.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .features import Backbone, NetworkSpec, backbone_for
from .group import contact_sheet, crops_likeness
from .grouped import FolderDie, TeachFileError, crop_images, folder_crops
from .naming import TEACH_FILE, DieTeach, TaughtCrop, Teach, load_teach, save_teach
from .teaching import slug

__all__ = ["Extended", "assign_new", "extend_folder"]


@dataclass(frozen=True)
class Extended:
    """One die after :func:`extend_folder`: how many crops were new, how many joined a named group."""

    die: DieTeach
    new: int  #: crops added
    into_named: int  #: of them, crops that joined a named group
    loose: int  #: of them, crops left loose


def _typical(likeness: np.ndarray, members: Sequence[int]) -> float:
    """The least a member of ``members`` is like the rest of them, on average (-inf: one member)."""
    if len(members) < 2:
        return -np.inf
    sub = likeness[np.ix_(members, members)]
    means = (sub.sum(axis=1) - np.diag(sub)) / (len(members) - 1)
    return float(means.min())


def assign_new(
    likeness: np.ndarray, groups: Sequence[Sequence[int]], new: Sequence[int]
) -> tuple[list[list[int]], list[int]]:
    """``(groups, loose)``: ``groups`` with each of ``new`` joined to its nearest, and those left loose.

    ``likeness`` covers every crop (old and new); ``groups`` hold old crops only (module docstring).
    """
    floors = [_typical(likeness, g) for g in groups]
    held = [f for f in floors if np.isfinite(f)]
    single_floor = float(np.median(held)) if held else -np.inf
    out = [list(g) for g in groups]
    loose: list[int] = []
    for c in new:
        if not groups:
            loose.append(c)
            continue
        means = [float(likeness[c, list(g)].mean()) for g in groups]
        order = np.argsort(means)[::-1]
        best = int(order[0])
        runner_up = means[int(order[1])] if len(groups) > 1 else -np.inf
        floor = floors[best] if np.isfinite(floors[best]) else single_floor
        if means[best] - runner_up < floor - means[best]:
            loose.append(c)
        else:
            out[best].append(c)
    return out, loose


def _extend_die(
    folder: Path, die: DieTeach, found: FolderDie, backbones: dict[NetworkSpec, Backbone], sheets: bool
) -> Extended:
    old = [(c.crop, c.line, c.index) for c in die.crops]
    refs = [(c.crop, c.line, c.index) for c in found.crops]
    if refs[: len(old)] != old:
        raise TeachFileError(
            f"{folder / TEACH_FILE}: the {die.id}'s crops are not the manifest's first crops of it; "
            "'dicetower teach group --force' groups every crop anew (the names are lost)"
        )
    if len(refs) == len(old):
        return Extended(die, 0, 0, 0)
    spec = backbone_for(die.kind)
    if spec not in backbones:
        backbones[spec] = Backbone(spec)
    images = crop_images(folder, found)
    likeness = crops_likeness(backbones[spec], images, kind=die.kind)
    new = list(range(len(old), len(refs)))
    groups, loose = assign_new(likeness, die.groups, new)
    named = {c for g, f in zip(groups, die.names, strict=True) if f is not None for c in g}
    extended = replace(
        die,
        crops=die.crops + tuple(TaughtCrop(*r) for r in refs[len(old) :]),
        groups=tuple(tuple(g) for g in groups),
        loose=die.loose + tuple(loose),
        loose_faces=die.loose_faces + (None,) * len(loose),
    )
    if sheets:
        title = f"{die.id}: {len(images)} crops in {len(groups)} groups, one row a group"
        contact_sheet(images, groups, folder / "sheets" / f"{die.slug}.png", title)
    return Extended(extended, len(new), sum(c in named for c in new), len(loose))


def extend_folder(
    folder: str | Path, *, sheets: bool = True, log: Callable[[str], None] | None = None
) -> list[Extended]:
    """Add the manifest's crops that ``teach.json`` lacks to its groups; write it (module docstring).

    Every die of the manifest must be a die of ``teach.json`` and the other way round.
    """
    folder = Path(folder)
    teach = load_teach(folder)
    found = {slug(d.id): d for d in folder_crops(folder)}
    listed = {d.slug for d in teach.dice}
    if set(found) != listed:
        raise TeachFileError(
            f"{folder / TEACH_FILE}: lists other dice than the manifest "
            f"({', '.join(sorted(listed))} against {', '.join(sorted(found))}); "
            "'dicetower teach group --force' groups every crop anew (the names are lost)"
        )
    backbones: dict[NetworkSpec, Backbone] = {}
    out = [_extend_die(folder, d, found[d.slug], backbones, sheets) for d in teach.dice]
    if any(e.new for e in out):
        for e in out:
            if e.new and log is not None:
                log(
                    f"{e.die.id}: {e.new} new crops: {e.into_named} joined named groups, "
                    f"{e.new - e.into_named - e.loose} unnamed groups, {e.loose} left loose"
                )
        save_teach(folder, Teach(tuple(e.die for e in out)))
    return out
