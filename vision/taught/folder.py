"""A teach folder on disk (``docs/teach.md``): photos, crops, manifest lines and side files.

Why written this way: a collect runs unattended for an hour and may be stopped at any moment
(Ctrl-C, a power cut, a fault). Each throw's photo and crops go in through a temporary file and
a rename, then its side-file lines, and last its manifest line, appended, flushed and synced.
The manifest is the folder's commit: a line names only files already whole, and a throw cut off
before its line leaves files no line names, which the next throw of that number overwrites. So
a stopped folder is a complete, shorter one, and :meth:`TeachFolder.open` carries on from its
last line.

Two side files sit beside the manifest, one line per manifest line, matched by ``image``:

- ``truth.jsonl``: the faces the camera knows were up (the simulated and replay cameras), per
  die in the manifest's order. For tests and benchmarks that score grouping and naming; nothing
  in the product names a die from it.
- ``hints.jsonl``: the faces the general reader read surely, per die (null where it was unsure).
  A hint for people: the general reader reads untaught dice poorly.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..errors import VisionError
from ..eval.evaluate import match_dice
from ..faces.pips import crop_die
from ..files import write_atomic
from ..imageio import ImageError, load_image
from ..manifest import LabelledDie, ManifestEntry, read_manifest, write_manifest_line
from .teaching import die_id, slug

__all__ = [
    "CROP_SIDE",
    "HINTS",
    "MANIFEST",
    "MAX_ROLL",
    "TRUTH",
    "NewDie",
    "TeachFolder",
    "TeachFolderError",
    "crop_png",
    "folder_dice",
    "read_side_file",
    "truth_faces",
]

MANIFEST = "manifest.jsonl"
TRUTH = "truth.jsonl"
HINTS = "hints.jsonl"
#: Roll numbers are written in five digits.
MAX_ROLL = 99_999
#: Side (px) of a teaching crop: larger than any general network reads, so each can scale it down.
CROP_SIDE = 128
#: What a collect cut off before its first manifest line may have left (nothing a line names).
_STARTED = frozenset({"images", "crops", MANIFEST, TRUTH, HINTS})
_ROLL = re.compile(r"images/roll-(\d{5})\.jpg")


class TeachFolderError(VisionError, ValueError):
    """A folder that cannot be collected into: not a teach folder, or one of other dice."""


@dataclass(frozen=True)
class NewDie:
    """One die of a throw to add: its loaded kind and colour, its box and its crop (PNG)."""

    kind: str
    colour: str
    box: tuple[float, float, float, float]
    crop: bytes

    @property
    def id(self) -> str:
        return die_id(self.kind, self.colour)


def crop_png(frame: np.ndarray, box: Sequence[float]) -> bytes:
    """A die's crop as PNG: cut from the raw frame at the reader's margin
    (:func:`~dicetower.vision.faces.pips.crop_die`), lossless, so grouping and naming see the die
    as the reader does and no JPEG blocks are learnt as part of a face."""
    crop = crop_die(frame, tuple(float(v) for v in box), size=CROP_SIDE)  # type: ignore[arg-type]
    ok, data = cv2.imencode(".png", crop)
    if not ok:  # pragma: no cover - a small BGR crop always encodes
        raise ValueError("cannot encode a die's crop as PNG")
    return data.tobytes()


def folder_dice(entries: Sequence[ManifestEntry]) -> Counter[tuple[str, str]]:
    """The dice (kind, colour) of a teach folder and how many of each a throw holds (its last line)."""
    if not entries:
        return Counter()
    return Counter((d.die, d.colour) for d in entries[-1].dice)


def read_side_file(path: Path) -> dict[str, dict[str, Any]]:
    """A side file's lines by ``image`` (a torn or foreign line is skipped: it names no photo)."""
    out: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return out
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("image"), str):
            out[obj["image"]] = obj
    return out


def truth_faces(boxes: Sequence[Sequence[float]], labels: Sequence[LabelledDie]) -> list[int | None]:
    """The face the camera knows for each located box: its labelled die, matched as eval matches them
    (:func:`~dicetower.vision.eval.evaluate.match_dice`: the nearest centre within a label's box)."""
    located = [[(b[0] + b[2] / 2, b[1] + b[3] / 2)] for b in boxes]
    label_boxes = [tuple(d.box) for d in labels if d.box is not None]
    boxed = [d for d in labels if d.box is not None]
    matched, _extra = match_dice(label_boxes, located)  # type: ignore[arg-type]
    faces: list[int | None] = [None] * len(boxes)
    for label, j in zip(boxed, matched, strict=True):
        if j is not None:
            faces[j] = label.face
    return faces


def _describe(dice: Counter[tuple[str, str]]) -> str:
    return ", ".join(f"{n} {die_id(k, c)}" if n > 1 else die_id(k, c) for (k, c), n in sorted(dice.items()))


def _cut_torn_tail(path: Path) -> None:
    """Drop a last line without its newline (a write cut off by a power cut), so the rest reads."""
    if not path.is_file():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        write_atomic(path, data[: data.rfind(b"\n") + 1])


class TeachFolder:
    """A teach folder being written: ``TeachFolder.open(DIR, dice)``, then :meth:`add` per throw.

    ``dice`` are the loaded dice as (kind, colour), one entry per die. A missing or empty DIR is
    started; a teach folder of the same dice is carried on (numbering after its last line); any
    other folder is refused with :class:`TeachFolderError`.
    """

    def __init__(
        self, root: Path, entries: Sequence[ManifestEntry] = (), *, manifest: str = MANIFEST
    ) -> None:
        self.root = root
        #: the file lines are appended to (a conversion writes a temporary one, renamed when whole)
        self.manifest = manifest
        self.lines = len(entries)
        self.images = {e.relpath for e in entries}
        numbers = [int(m.group(1)) for e in entries if (m := _ROLL.fullmatch(e.relpath))]
        self.last_roll = max(numbers, default=0)
        self.reference: str | None = None

    @classmethod
    def open(cls, root: str | Path, dice: Sequence[tuple[str, str]], *, resume: bool = False) -> TeachFolder:
        """Start or carry on the teach folder ``root`` for ``dice``; ``resume`` insists on carrying on."""
        root = Path(root)
        if root.exists() and not root.is_dir():
            raise TeachFolderError(f"{root}: not a folder")
        manifest = root / MANIFEST
        if manifest.is_file():
            _cut_torn_tail(manifest)
        entries = list(read_manifest(root, unnamed=True)) if manifest.is_file() else []
        if not entries:
            if resume:
                raise TeachFolderError(f"{root}: no throw to resume; leave out --resume to start it")
            if root.is_dir() and {p.name for p in root.iterdir()} - _STARTED:
                raise TeachFolderError(f"{root}: not empty and not a teach folder; collect into a new folder")
            # empty, or a collect cut off before its first line: what it wrote is written again
            (root / "images").mkdir(parents=True, exist_ok=True)
            return cls(root)
        if any(not d.crop for e in entries for d in e.dice) or not any(e.dice for e in entries):
            raise TeachFolderError(
                f"{root}: a folder of photos, not a teach folder: 'dicetower teach group {root}' makes it "
                "one, or collect into a new folder"
            )
        have, want = folder_dice(entries), Counter((k, c) for k, c in dice)
        if have != want:
            raise TeachFolderError(
                f"{root}: a teach folder of other dice ({_describe(have)}); the tower holds "
                f"{_describe(want)}: collect into a new folder"
            )
        folder = cls(root, entries)
        folder._trim_side_files()
        return folder

    def _trim_side_files(self) -> None:
        """Keep the side files' lines whose photo the manifest names (a throw cut off adds none)."""
        for name in (TRUTH, HINTS):
            path = self.root / name
            _cut_torn_tail(path)
            lines = read_side_file(path)
            if set(lines) - self.images:
                kept = "".join(json.dumps(v) + "\n" for k, v in lines.items() if k in self.images)
                write_atomic(path, kept.encode())

    @property
    def next_roll(self) -> int:
        return self.last_roll + 1

    def use_reference(self, reference: np.ndarray) -> str:
        """Name the empty-tray photo the next lines are read against, writing it if it is new.

        The same calibration keeps ``images/empty.png``; a new one (the camera moved, the light
        changed) between runs is kept beside it as ``images/empty-2.png`` and so on, so each line
        names the reference its photo was taken with.
        """
        k = 1
        while True:
            name = "images/empty.png" if k == 1 else f"images/empty-{k}.png"
            path = self.root / name
            if not path.is_file():
                ok, png = cv2.imencode(".png", reference)
                if not ok:
                    raise ValueError("cannot encode the empty-tray reference as PNG")
                write_atomic(path, png.tobytes())
                break
            try:
                same = np.array_equal(load_image(path), reference)
            except ImageError:
                same = False
            if same:
                break
            k += 1
        self.reference = name
        return name

    def add(
        self,
        photo: bytes | None,
        dice: Sequence[NewDie],
        *,
        truth: Sequence[int | None] | None = None,
        hints: Sequence[int | None] | None = None,
        image: str | None = None,
    ) -> str:
        """Add one throw: its photo (JPEG; None with ``image``, a photo already in the folder), each
        die's crop, the side-file lines, then the manifest line. Returns the photo's name.

        ``truth`` (the camera's faces, when it knows them) and ``hints`` (the general reader's sure
        faces) give one face or None per die of ``dice``.
        """
        for name, faces in ((TRUTH, truth), (HINTS, hints)):
            if faces is not None and len(faces) != len(dice):
                raise ValueError(f"{name}: {len(faces)} faces for {len(dice)} dice")
        if image is None:
            if self.next_roll > MAX_ROLL:
                raise TeachFolderError(f"{self.root}: {MAX_ROLL} rolls is the most a teach folder numbers")
            number = self.next_roll
            image = f"images/roll-{number:05d}.jpg"
            if photo is None:
                raise ValueError("a new throw needs its photo")
            write_atomic(self.root / image, photo)
            stem = f"{number:05d}"
        else:  # a photo already in the folder: its crops are named by the line (photos' names may repeat)
            stem = f"{self.lines + 1:05d}"
        labels = []
        taken: Counter[str] = Counter()
        for die in dice:
            folder = slug(die.id)
            taken[folder] += 1
            crop = f"crops/{folder}/{stem}" + ("" if taken[folder] == 1 else f"-{taken[folder]}") + ".png"
            (self.root / crop).parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.root / crop, die.crop)
            labels.append(LabelledDie(die.kind, None, die.box, colour=die.colour, crop=crop))
        for name, faces in ((TRUTH, truth), (HINTS, hints)):
            if faces is not None:
                self._append(name, {"image": image, "faces": list(faces)})
        with open(self.root / self.manifest, "a", encoding="utf-8") as fh:
            write_manifest_line(fh, image, labels, reference=self.reference)
            fh.flush()
            os.fsync(fh.fileno())
        self.lines += 1
        self.images.add(image)
        if (m := _ROLL.fullmatch(image)) is not None:
            self.last_roll = max(self.last_roll, int(m.group(1)))
        return image

    def _append(self, name: str, obj: dict[str, Any]) -> None:
        with open(self.root / name, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj) + "\n")
            fh.flush()
