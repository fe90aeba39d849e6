"""The project's format for labelled / recorded photos: ``manifest.jsonl``.

Same format as ``../shared/datasets/*/manifest.jsonl`` (see its README): one JSON object a
line, ``{"image": "images/x.jpg", "dice": [{"die": "d6", "face": 5, "box": [x, y, w, h]}]}``;
``box`` absent means the whole photo is one die. The tower writes its recorded rolls in this
format, the replay camera plays it, and ``dicetower eval`` reads it.

Optional extensions (ignored by readers that do not know them, never written when unset):

* per die, ``"cocked": true``: the die leans (on a wall or another die) and no face is up.
  ``face`` is then the face most toward the camera, for information; the right answer for
  a reader is "unreadable" and ``dicetower eval`` scores it that way;
* per line, ``"reference": "images/empty_1.png"``: a photo of the empty tray under the same
  light, handed to the reader as its ``reference``;
* per die, ``"colour": "blue"`` (the die's colour name, which tells it from other dice of its kind)
  and ``"crop": "crops/blue-d20/00001.png"`` (a picture of the die alone, cut when it was read):
  a teach folder (``dicetower teach``) writes both;
* per die, no ``face``: a die not yet named, in a teach folder. Only :func:`read_manifest` with
  ``unnamed=True`` accepts it; everything that scores readings refuses it, naming the die.

Every line is checked before any photo is read, and a bad one is an error naming the file, the
line and the field (``manifest.jsonl:7: bad manifest line: dice[1].face: 7 is not on a d6
(faces 1-6)``): a wrong
label silently scored would move the figures. ``die`` is one of :data:`DIE_FACES` (the kinds
``../shared/datasets`` uses), ``face`` one printed on it, ``box`` four finite numbers with
``x, y >= 0`` and a positive size (and inside the photo: :func:`check_boxes`, once it is read),
``cocked`` a JSON ``true``/``false``. ``image`` and ``reference`` are paths relative to the
manifest's folder that stay inside it once resolved, symlinks included: a manifest from
elsewhere (the replay camera, the server) cannot make the reader open ``/etc/shadow``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import VisionError
from .kinds import LABELS, faces_of

__all__ = [
    "DIE_FACES",
    "MAX_DICE_PER_PHOTO",
    "MAX_ENTRIES",
    "MAX_LINE_CHARS",
    "LabelledDie",
    "ManifestEntry",
    "ManifestError",
    "check_boxes",
    "read_manifest",
    "write_manifest_line",
]

#: A manifest larger than this many lines is refused (bounds memory and eval time).
MAX_ENTRIES = 1_000_000
#: A manifest line longer than this is refused before it is parsed.
MAX_LINE_CHARS = 1_000_000
#: More labelled dice than this in one photo is refused (a tray holds a few dozen at most).
MAX_DICE_PER_PHOTO = 1000
#: Longest colour name a die may carry.
MAX_NAME_CHARS = 40
#: How far (photo pixels) a box may reach past the photo's edge: labels are written to 0.1 px.
BOX_EDGE_SLACK = 0.5

#: The die kinds a label may name, and the faces printed on each (from the table of kinds).
DIE_FACES: dict[str, frozenset[int]] = {label: frozenset(faces_of(label)) for label in LABELS}


class ManifestError(VisionError, ValueError):
    """A manifest line that cannot be used; names the file and line."""


@dataclass(frozen=True)
class LabelledDie:
    die: str
    face: int | None  #: None: not yet named (a teach folder read with ``unnamed=True``)
    box: tuple[float, float, float, float] | None = None  #: None: the whole photo is this die
    cocked: bool = False  #: no face is up; the right reading is "unreadable"
    colour: str = ""  #: the die's colour name, when the writer knew it
    crop: str = ""  #: the die's own picture, relative to the manifest's folder

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"die": self.die}
        if self.face is not None:
            d["face"] = self.face
        if self.box is not None:
            d["box"] = [round(float(v), 1) for v in self.box]
        if self.cocked:
            d["cocked"] = True
        if self.colour:
            d["colour"] = self.colour
        if self.crop:
            d["crop"] = self.crop
        return d


@dataclass(frozen=True)
class ManifestEntry:
    image: Path  #: absolute path of the photo
    dice: tuple[LabelledDie, ...]
    line: int  #: 1-based line in the manifest, for error messages
    relpath: str = ""  #: the ``image`` field as written (relative to the manifest's folder)
    reference: Path | None = None  #: absolute path of the empty-tray photo, if given
    manifest: Path | None = None  #: the manifest file this line is from, for error messages

    def where(self) -> str:
        """``path/manifest.jsonl:LINE``, or the image when the entry was not read from a file."""
        return f"{self.manifest}:{self.line}" if self.manifest is not None else str(self.image)


class _Bad(VisionError, ValueError):
    """One field's problem: ``field`` names it (``dice[1].face``)."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field}: {problem}")


def _faces_text(kind: str) -> str:
    faces = sorted(DIE_FACES[kind])
    step = f" in steps of {faces[1] - faces[0]}" if faces[1] - faces[0] != 1 else ""
    return f"faces {faces[0]}-{faces[-1]}{step}"


def _die(d: object, at: str, folder: Path, root: Path, unnamed: bool = False) -> LabelledDie:
    if not isinstance(d, dict):
        raise _Bad(at, f"each die is a JSON object, got {_json_type(d)}")
    kind = d.get("die")
    if not isinstance(kind, str) or kind not in DIE_FACES:
        got = "missing" if "die" not in d else repr(kind)
        raise _Bad(f"{at}.die", f"{got} is not a die kind (one of {', '.join(DIE_FACES)})")
    face = d.get("face")
    if "face" not in d and not unnamed:
        raise _Bad(f"{at}.face", "missing (a die of a teach folder not yet named: dicetower teach name)")
    if face is not None or not unnamed:
        if isinstance(face, bool) or not isinstance(face, int):
            raise _Bad(f"{at}.face", f"must be an integer, got {_json_type(face)} {_short(face)}")
        if face not in DIE_FACES[kind]:
            raise _Bad(f"{at}.face", f"{face} is not on a {kind} ({_faces_text(kind)})")
    box = d.get("box")
    if box is not None:
        if not isinstance(box, list) or len(box) != 4:
            raise _Bad(f"{at}.box", f"must be [x, y, width, height], got {_short(box)}")
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in box):
            raise _Bad(f"{at}.box", f"must be four numbers, got {_short(box)}")
        box = tuple(float(v) for v in box)
        if not all(math.isfinite(v) for v in box):
            raise _Bad(f"{at}.box", f"must be finite numbers, got {_short(box)}")
        if box[0] < 0 or box[1] < 0:
            raise _Bad(f"{at}.box", f"x and y must be at least 0, got {_short(box)}")
        if box[2] <= 0 or box[3] <= 0:
            raise _Bad(f"{at}.box", f"width and height must be positive, got {_short(box)}")
    cocked = d.get("cocked", False)
    if not isinstance(cocked, bool):
        raise _Bad(f"{at}.cocked", f"must be true or false, got {_json_type(cocked)} {_short(cocked)}")
    colour = d.get("colour", "")
    if not isinstance(colour, str) or len(colour) > MAX_NAME_CHARS:
        raise _Bad(f"{at}.colour", f"must be a colour name, got {_json_type(colour)} {_short(colour)}")
    crop = d.get("crop", "")
    if crop != "":
        _inside(folder, root, crop, f"{at}.crop")
    return LabelledDie(kind, face, box, cocked, colour, crop)


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _short(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, tuple) else json.dumps(list(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _inside(folder: Path, root: Path, value: object, field: str) -> Path:
    """``folder / value`` resolved (symlinks too), refused unless it stays inside ``root``."""
    if not isinstance(value, str) or not value:
        raise _Bad(field, "must be a non-empty path")
    if "\0" in value:
        raise _Bad(field, "path holds a NUL character")
    rel = Path(value)
    if rel.is_absolute():
        raise _Bad(field, f"{_short(value)} is absolute; paths are relative to the manifest's folder")
    try:
        path = (folder / rel).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise _Bad(field, f"{_short(value)} cannot be resolved: {exc}") from None
    if not path.is_relative_to(root):
        raise _Bad(field, f"{_short(value)} is outside the manifest's folder {root}")
    return path


def _parse_line(
    folder: Path, raw: str, lineno: int, source: Path, root: Path | None = None, unnamed: bool = False
) -> ManifestEntry:
    root = root if root is not None else folder.resolve()
    try:
        try:
            obj = json.loads(raw)
        except ValueError as exc:
            raise _Bad("line", f"not JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise _Bad("line", f"expected a JSON object, got {_json_type(obj)}")
        if "image" not in obj:
            raise _Bad("image", "missing")
        image = _inside(folder, root, obj["image"], "image")
        reference = obj.get("reference")
        ref_path = None if reference is None else _inside(folder, root, reference, "reference")
        dice_raw = obj.get("dice", [])
        if not isinstance(dice_raw, list):
            raise _Bad("dice", f"must be a list of objects, got {_json_type(dice_raw)}")
        if len(dice_raw) > MAX_DICE_PER_PHOTO:
            raise _Bad("dice", f"{len(dice_raw)} dice; at most {MAX_DICE_PER_PHOTO} a photo")
        dice = [_die(d, f"dice[{i}]", folder, root, unnamed) for i, d in enumerate(dice_raw)]
    except _Bad as exc:
        raise ManifestError(f"{source}:{lineno}: bad manifest line: {exc}") from None
    return ManifestEntry(
        image, tuple(dice), lineno, relpath=obj["image"], reference=ref_path, manifest=source
    )


def check_boxes(entry: ManifestEntry, width: int, height: int) -> None:
    """Refuse a label whose box lies outside the ``width`` x ``height`` photo (photo pixels)."""
    for i, d in enumerate(entry.dice):
        if d.box is None:
            continue
        x, y, w, h = d.box
        if x + w > width + BOX_EDGE_SLACK or y + h > height + BOX_EDGE_SLACK:
            raise ManifestError(
                f"{entry.where()}: bad manifest line: dice[{i}].box: {_short(d.box)} reaches outside the"
                f" {width}x{height} photo {entry.relpath or entry.image.name}"
            )


def read_manifest(folder: str | Path, *, unnamed: bool = False) -> Iterator[ManifestEntry]:
    """Yield the entries of ``folder/manifest.jsonl`` in file order (blank lines skipped).

    ``unnamed`` accepts dice with no ``face`` (a teach folder before its dice are named); their
    :attr:`LabelledDie.face` is None.
    """
    folder = Path(folder)
    path = folder / "manifest.jsonl"
    if not path.is_file():
        raise ManifestError(f"{folder}: no manifest.jsonl (expected one JSON object per photo)")
    root = folder.resolve()
    with path.open(encoding="utf-8", errors="strict", newline=None) as fh:
        lineno = 0
        while True:
            try:
                raw = fh.readline(MAX_LINE_CHARS + 1)
            except UnicodeDecodeError as exc:
                raise ManifestError(f"{path}:{lineno + 1}: line: not UTF-8 text ({exc.reason})") from None
            if not raw:
                return
            lineno += 1
            if lineno > MAX_ENTRIES:
                raise ManifestError(f"{path}: more than {MAX_ENTRIES} lines")
            if len(raw) > MAX_LINE_CHARS:
                raise ManifestError(f"{path}:{lineno}: line: longer than {MAX_LINE_CHARS} characters")
            if raw.strip():
                yield _parse_line(folder, raw, lineno, path, root, unnamed)


def write_manifest_line(
    fh: Any, image: str, dice: Sequence[LabelledDie], reference: str | None = None
) -> None:
    """Append one entry; ``image`` (and ``reference``) are relative to the manifest's folder."""
    obj: dict[str, Any] = {"image": image, "dice": [d.to_json() for d in dice]}
    if reference is not None:
        obj["reference"] = reference
    fh.write(json.dumps(obj) + "\n")
