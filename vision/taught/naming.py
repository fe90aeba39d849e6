"""Naming a teach folder's groups: ``teach.json`` read and written, and the steps the owner takes.

Why a module of pure steps: the ``/teach`` page, the labels file (``dicetower teach name``) and
the tests take the same steps, so each is a function from one die's state to a new one. The
state is frozen, so whoever offers undo keeps the earlier states as they are.

The owner's work is counted on the state itself (:class:`Work`, and the crops touched one by
one), because the goal is a figure: one name per face with at most 5 % of the crops touched.
Undo restores the names and groups, never the counts: the effort was spent.

Naming a group with a face that already names another group of the die **merges** the two:
the grouping often splits one face in two (the numeral seen at two turns), and one group per
face is what the fit wants. Refusing would leave the owner no way to join them.

The format is ``docs/teach.md``; every refusal names the field at fault (``teach.json:
dice[0].groups[2][1]: 57 is not a crop of blue d20 (it has 40)``).
"""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import VisionError
from ..files import read_bounded
from ..kinds import LABELS, faces_of
from ..manifest import read_manifest

__all__ = [
    "MAX_CROPS",
    "MAX_DICE",
    "MAX_TEACH_BYTES",
    "SCHEMA",
    "TEACH_FILE",
    "UNNAMED_MANIFEST",
    "DieTeach",
    "LabelledSummary",
    "TaughtCrop",
    "Teach",
    "TeachError",
    "Work",
    "apply_labels",
    "crop_faces",
    "labels_applied",
    "load_teach",
    "move_out",
    "name",
    "name_loose",
    "parse_teach",
    "progress",
    "read_labels",
    "save_teach",
    "split",
    "teach_json",
    "undone",
    "unname",
    "write_labelled",
]

SCHEMA = "dicetower.teach/1"
TEACH_FILE = "teach.json"
MANIFEST = "manifest.jsonl"
#: the manifest as it was before the first save, kept once
UNNAMED_MANIFEST = "manifest.unnamed.jsonl"
#: a teach.json (or labels file) larger than this is refused before it is parsed
MAX_TEACH_BYTES = 64 * 2**20
#: dice in one teach folder
MAX_DICE = 64
#: crops of one die (one a throw: a long collect is a few thousand)
MAX_CROPS = 100_000
MAX_ID_CHARS = 40

_Groups = tuple[tuple[int, ...], ...]
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")
_COLOUR = re.compile(r"[^\x00-\x1f\x7f]*")
_INDEX = re.compile(r"0|[1-9][0-9]{0,6}")
_NAME = re.compile(r"[^\s\x00-\x1f\x7f](?:[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f])?")


class TeachError(VisionError, ValueError):
    """A teach.json, a labels file or a step that cannot be used; ``field`` names the part at fault."""

    def __init__(self, problem: str, field: str | None = None) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field
        self.problem = problem


@dataclass(frozen=True)
class TaughtCrop:
    """One crop of a die: its file, the manifest line (1-based) and the die's index in that line."""

    crop: str
    line: int
    index: int


@dataclass(frozen=True)
class Work:
    """What the owner did to name a die: the figure the goal is measured by."""

    names: int = 0  #: names given or taken back, to groups and to loose crops
    moves: int = 0  #: crops moved out of their group
    splits: int = 0  #: groups split in two
    undos: int = 0  #: steps undone

    def plus(self, **counts: int) -> Work:
        return replace(self, **{k: getattr(self, k) + v for k, v in counts.items()})

    def to_json(self) -> dict[str, int]:
        return {"names": self.names, "moves": self.moves, "splits": self.splits, "undos": self.undos}


@dataclass(frozen=True)
class DieTeach:
    """One die's crops, groups and names. ``names`` runs beside ``groups``, ``loose_faces`` beside
    ``loose``: a group or loose crop and its face move together when groups come and go."""

    id: str  #: "blue d20": how the page and the labels file name the die
    slug: str  #: "blue-d20": its crops folder and its URL
    kind: str
    colour: str
    faces: tuple[int, ...]
    crops: tuple[TaughtCrop, ...]
    groups: _Groups
    names: tuple[int | None, ...]
    loose: tuple[int, ...] = ()
    loose_faces: tuple[int | None, ...] = ()
    work: Work = field(default_factory=Work)
    touched: frozenset[int] = frozenset()  #: crops the owner acted on one by one

    def group_of(self, crop: int) -> int | None:
        """The group holding ``crop``; None when it is loose."""
        for g, members in enumerate(self.groups):
            if crop in members:
                return g
        return None


@dataclass(frozen=True)
class Teach:
    """A teach folder's dice, in teach.json's order."""

    dice: tuple[DieTeach, ...]

    def die(self, key: str) -> DieTeach:
        """The die whose id or slug is ``key``."""
        for d in self.dice:
            if key in (d.id, d.slug):
                return d
        known = ", ".join(d.id for d in self.dice) or "none"
        raise TeachError(f"no die {key!r} in this teach folder (its dice: {known})", "die")

    def with_die(self, die: DieTeach) -> Teach:
        return Teach(tuple(die if d.slug == die.slug else d for d in self.dice))


@dataclass(frozen=True)
class LabelledSummary:
    """What :func:`write_labelled` wrote: dice given a face, dice left without one, lines."""

    named: int
    unnamed: int
    lines: int


# -- reading and writing teach.json ---------------------------------------------------------


def _short(value: object) -> str:
    text = json.dumps(value, default=repr)
    return text if len(text) <= 40 else text[:37] + "..."


def _int(value: object, at: str, lo: int, hi: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise TeachError(f"{_short(value)} is not {what}", at)
    return value


def _items(value: object, at: str, limit: int = MAX_CROPS) -> Iterator[tuple[str, Any]]:
    """``(field, item)`` for each item of the list ``value``, the list's type and length checked."""
    if not isinstance(value, list):
        raise TeachError(f"must be a list, got {_short(value)}", at)
    if len(value) > limit:
        raise TeachError(f"{len(value)} items; at most {limit}", at)
    return ((f"{at}[{i}]", v) for i, v in enumerate(value))


def _dict(value: object, at: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TeachError(f"must be an object, got {_short(value)}", at)
    return value


def _keyed(value: object, at: str) -> Iterator[tuple[str, int, Any]]:
    """``(field, index, value)`` for each entry of an object keyed by index (``{"0": 17}``)."""
    for key, v in _dict(value, at).items():
        if not _INDEX.fullmatch(key):
            raise TeachError(f"key {_short(key)} is not an index", at)
        yield f"{at}.{key}", int(key), v


def _face(value: object, at: str, faces: Sequence[int], who: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in faces:
        raise TeachError(f"{_short(value)} is not a face of {who} ({', '.join(map(str, faces))})", at)
    return value


def _crop(value: object, at: str, slug: str) -> TaughtCrop:
    c = _dict(value, at)
    path = c.get("crop")
    parts = path.split("/") if isinstance(path, str) else []
    if len(parts) != 3 or parts[:2] != ["crops", slug] or not _FILE.fullmatch(parts[2]):
        raise TeachError(f"{_short(path)} is not a file in crops/{slug}/", f"{at}.crop")
    line = _int(c.get("line"), f"{at}.line", 1, 10**7, "a manifest line (1-based)")
    index = _int(c.get("index"), f"{at}.index", 0, 999, "a die's index in its line")
    return TaughtCrop(path, line, index)


def _text(value: object, at: str, what: str, pattern: re.Pattern[str]) -> str:
    if not isinstance(value, str) or len(value) > MAX_ID_CHARS or not pattern.fullmatch(value):
        raise TeachError(f"{_short(value)} is not {what}", at)
    return value


def _places(d: dict[str, Any], at: str, n: int, who: str) -> tuple[_Groups, tuple[int, ...]]:
    """The groups and the loose crops, each crop in exactly one place."""
    seen: set[int] = set()

    def member(where: str, v: object) -> int:
        i = _int(v, where, 0, n - 1, f"a crop of {who} (it has {n})")
        if i in seen:
            raise TeachError(f"crop {i} is in two places", where)
        seen.add(i)
        return i

    groups = []
    for where, g in _items(d.get("groups"), f"{at}.groups"):
        groups.append(tuple(member(*m) for m in _items(g, where)))
        if not groups[-1]:
            raise TeachError("a group holds at least one crop", where)
    loose = tuple(member(*m) for m in _items(d.get("loose", []), f"{at}.loose"))
    if len(seen) != n:
        raise TeachError(f"crop {min(set(range(n)) - seen)} is in no group and not loose", f"{at}.groups")
    return tuple(groups), loose


def _die(value: object, at: str, slugs: set[str]) -> DieTeach:
    d = _dict(value, at)
    die_id = _text(d.get("id"), f"{at}.id", f"a die's name (1-{MAX_ID_CHARS} characters)", _NAME)
    slug = _text(d.get("slug"), f"{at}.slug", "a slug (lower-case letters, digits, '-')", _SLUG)
    if slug in slugs:
        raise TeachError(f"{slug!r} names two dice", f"{at}.slug")
    slugs.add(slug)
    kind = d.get("kind")
    if kind not in LABELS:
        raise TeachError(f"{_short(kind)} is not a die kind (one of {', '.join(LABELS)})", f"{at}.kind")
    colour = _text(d.get("colour", ""), f"{at}.colour", "a colour name", _COLOUR)
    faces = tuple(
        _face(f, where, faces_of(kind), f"a {kind}") for where, f in _items(d.get("faces"), f"{at}.faces")
    )
    if not faces or len(set(faces)) != len(faces):
        raise TeachError("must list the die's faces, each once", f"{at}.faces")
    crops = tuple(_crop(c, where, slug) for where, c in _items(d.get("crops"), f"{at}.crops"))
    if len({c.crop for c in crops}) != len(crops):
        raise TeachError("a crop is listed twice", f"{at}.crops")
    groups, loose = _places(d, at, len(crops), die_id)
    names: list[int | None] = [None] * len(groups)
    for where, g, face in _keyed(d.get("names", {}), f"{at}.names"):
        if g >= len(groups):
            raise TeachError(f"{g} is not a group of {die_id} (it has {len(groups)})", where)
        f = _face(face, where, faces, die_id)
        if f in names:
            raise TeachError(f"face {f} names two groups", where)
        names[g] = f
    place = {c: i for i, c in enumerate(loose)}
    loose_faces: list[int | None] = [None] * len(loose)
    for where, c, face in _keyed(d.get("loose_names", {}), f"{at}.loose_names"):
        if c not in place:
            raise TeachError(f"crop {c} is not loose", where)
        loose_faces[place[c]] = _face(face, where, faces, die_id)
    w = _dict(d.get("work", {}), f"{at}.work")
    work = Work(**{k: _int(w.get(k, 0), f"{at}.work.{k}", 0, 10**9, "a count") for k in Work().to_json()})
    what = f"a crop of {die_id} (it has {len(crops)})"
    touched = frozenset(
        _int(v, where, 0, len(crops) - 1, what) for where, v in _items(d.get("touched", []), f"{at}.touched")
    )
    head = (die_id, slug, kind, colour, faces, crops)
    return DieTeach(*head, groups, tuple(names), loose, tuple(loose_faces), work, touched)


def parse_teach(obj: object, source: str = TEACH_FILE) -> Teach:
    """The teach state in ``obj`` (teach.json's JSON), every field checked; ``source`` prefixes errors."""
    try:
        top = _dict(obj, "top")
        if top.get("schema") != SCHEMA:
            raise TeachError(f"{_short(top.get('schema'))} is not {SCHEMA!r}", "schema")
        slugs: set[str] = set()
        return Teach(tuple(_die(d, where, slugs) for where, d in _items(top.get("dice"), "dice", MAX_DICE)))
    except TeachError as exc:
        raise TeachError(exc.problem, f"{source}: {exc.field}") from None


def teach_json(teach: Teach) -> dict[str, Any]:
    """``teach`` as teach.json holds it."""
    return {
        "schema": SCHEMA,
        "dice": [
            {
                "id": d.id,
                "slug": d.slug,
                "kind": d.kind,
                "colour": d.colour,
                "faces": list(d.faces),
                "crops": [{"crop": c.crop, "line": c.line, "index": c.index} for c in d.crops],
                "groups": [list(g) for g in d.groups],
                "names": {str(g): f for g, f in enumerate(d.names) if f is not None},
                "loose": list(d.loose),
                "loose_names": {
                    str(c): f for c, f in zip(d.loose, d.loose_faces, strict=True) if f is not None
                },
                "work": d.work.to_json(),
                "touched": sorted(d.touched),
            }
            for d in teach.dice
        ],
    }


def _read_json(path: Path, what: str) -> object:
    try:
        raw = read_bounded(path, MAX_TEACH_BYTES)
    except FileNotFoundError:
        raise TeachError(f"{path}: no {what}") from None
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise TeachError(f"{path}: larger than {MAX_TEACH_BYTES // 2**20} MiB") from None
        raise TeachError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise TeachError(f"{path}: not JSON ({exc})") from None


def load_teach(folder: str | Path) -> Teach:
    """``folder/teach.json``, checked."""
    path = Path(folder) / TEACH_FILE
    return parse_teach(
        _read_json(path, "teach.json (group the crops first: dicetower teach group)"), str(path)
    )


def _write_atomic(path: Path, data: bytes) -> None:
    """A temporary file in the same folder, then a rename: a reader sees the old file or the new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def save_teach(folder: str | Path, teach: Teach) -> None:
    """Write ``folder/teach.json`` atomically."""
    _write_atomic(Path(folder) / TEACH_FILE, (json.dumps(teach_json(teach), indent=1) + "\n").encode())


# -- the steps ------------------------------------------------------------------------------


def _group(die: DieTeach, group: object) -> int:
    return _int(group, "group", 0, len(die.groups) - 1, f"a group of {die.id} (it has {len(die.groups)})")


def _loose(die: DieTeach, crop: object) -> int:
    c = _int(crop, "crop", 0, len(die.crops) - 1, f"a crop of {die.id} (it has {len(die.crops)})")
    if c not in die.loose:
        raise TeachError(f"crop {c} is not loose (move it out of its group first)", "crop")
    return die.loose.index(c)


def _without_group(die: DieTeach, g: int) -> DieTeach:
    return replace(die, groups=die.groups[:g] + die.groups[g + 1 :], names=die.names[:g] + die.names[g + 1 :])


def name(die: DieTeach, group: int, face: int | None) -> DieTeach:
    """Group ``group`` shows ``face`` (None: none yet); a group that already shows it takes these crops."""
    g = _group(die, group)
    f = None if face is None else _face(face, "face", die.faces, die.id)
    work = die.work.plus(names=1)
    if f is not None and f in die.names and die.names.index(f) != g:
        into = die.names.index(f)
        groups = list(die.groups)
        groups[into] = groups[into] + groups[g]
        return _without_group(replace(die, groups=tuple(groups), work=work), g)
    names = list(die.names)
    names[g] = f
    return replace(die, names=tuple(names), work=work)


def unname(die: DieTeach, group: int) -> DieTeach:
    """Group ``group`` shows no face yet."""
    return name(die, group, None)


def move_out(die: DieTeach, crop: int) -> DieTeach:
    """A misfit crop leaves its group for ``loose``; a group left empty goes with its name."""
    c = _int(crop, "crop", 0, len(die.crops) - 1, f"a crop of {die.id} (it has {len(die.crops)})")
    g = die.group_of(c)
    if g is None:
        raise TeachError(f"crop {c} is already loose", "crop")
    groups = list(die.groups)
    groups[g] = tuple(i for i in groups[g] if i != c)
    out = replace(
        die,
        groups=tuple(groups),
        loose=(*die.loose, c),
        loose_faces=(*die.loose_faces, None),
        work=die.work.plus(moves=1),
        touched=die.touched | {c},
    )
    return out if groups[g] else _without_group(out, g)


def name_loose(die: DieTeach, crop: int, face: int | None) -> DieTeach:
    """Loose crop ``crop`` shows ``face`` (None: no face). Loose crops may share a face."""
    at = _loose(die, crop)
    faces = list(die.loose_faces)
    faces[at] = None if face is None else _face(face, "face", die.faces, die.id)
    return replace(
        die, loose_faces=tuple(faces), work=die.work.plus(names=1), touched=die.touched | {die.loose[at]}
    )


def split(die: DieTeach, group: int, parts: Sequence[Iterable[int]]) -> DieTeach:
    """Group ``group`` becomes two: ``parts[0]`` stays (with its name), ``parts[1]`` (the crops the
    owner picked out) becomes a new, unnamed group right after it."""
    g = _group(die, group)
    if len(parts) != 2:
        raise TeachError(f"a split has two parts, got {len(parts)}", "parts")
    keep, out = (set(p) for p in parts)
    members = set(die.groups[g])
    if not keep or not out or keep & out or keep | out != members:
        raise TeachError(
            f"the two parts must share out group {g}'s {len(members)} crops, each part some", "parts"
        )
    first = tuple(i for i in die.groups[g] if i in keep)
    second = tuple(i for i in die.groups[g] if i in out)
    return replace(
        die,
        groups=(*die.groups[:g], first, second, *die.groups[g + 1 :]),
        names=(*die.names[: g + 1], None, *die.names[g + 1 :]),
        work=die.work.plus(splits=1),
        touched=die.touched | out,
    )


def undone(current: DieTeach, previous: DieTeach) -> DieTeach:
    """``previous`` restored, with the work counted so far (and one undo more)."""
    return replace(previous, work=current.work.plus(undos=1), touched=current.touched)


def crop_faces(die: DieTeach) -> dict[int, int]:
    """Crop index -> face, for every crop in a named group and every named loose crop."""
    out = {c: f for members, f in zip(die.groups, die.names, strict=True) if f is not None for c in members}
    out.update({c: f for c, f in zip(die.loose, die.loose_faces, strict=True) if f is not None})
    return out


def progress(die: DieTeach) -> dict[str, Any]:
    """How far naming has come: faces named, crops left, and the share of crops touched one by one."""
    named = len({f for f in die.names if f is not None} | {f for f in die.loose_faces if f is not None})
    left = len(die.crops) - len(crop_faces(die))
    touched = len(die.touched)
    return {
        "faces": len(die.faces),
        "named": named,
        "crops": len(die.crops),
        "crops_left": left,
        "touched": touched,
        "touched_share": round(touched / len(die.crops), 4) if die.crops else 0.0,
        "text": f"{die.id}: {named} of {len(die.faces)} faces named, {left} crops left",
    }


def read_labels(path: str | Path) -> dict[str, Any]:
    """A labels file (docs/teach.md), size-bounded; its fields are checked when applied."""
    return _dict(_read_json(Path(path), "labels file"), str(path))


def _face_or_none(die: DieTeach, value: object, at: str) -> int | None:
    return None if value is None else _face(value, at, die.faces, die.id)


def labels_applied(teach: Teach, labels: Mapping[str, Any]) -> Teach:
    """``teach`` with a labels file's names: group names by the groups' indices as the file was
    given them, then crops by path (a crop still in a group is moved out and named alone).
    ``null`` takes a name back. Every step is counted as the page counts it."""
    for key, spec in _dict(labels, "labels").items():
        at = f"labels.{key}"
        try:
            die = teach.die(key)
        except TeachError as exc:
            raise TeachError(exc.problem, at) from None
        spec = _dict(spec, at)
        if set(spec) - {"groups", "crops"}:
            raise TeachError(f"unknown field(s) {sorted(set(spec) - {'groups', 'crops'})}", at)
        firsts = [members[0] for members in die.groups]  # a group is found by a crop, as merges renumber
        wanted = {}
        for where, g, face in _keyed(spec.get("groups", {}), f"{at}.groups"):
            if g >= len(firsts):
                raise TeachError(f"{g} is not a group of {die.id} (it has {len(firsts)})", where)
            wanted[firsts[g]] = _face_or_none(die, face, where)
        # names taken off first, so a face moving between groups never merges them
        names = tuple(
            None if members[0] in wanted else f for members, f in zip(die.groups, die.names, strict=True)
        )
        die = replace(die, names=names)
        for first, face in wanted.items():
            g = die.group_of(first)
            assert g is not None  # only group names are given so far: no crop has left its group
            die = name(die, g, face)
        by_path = {c.crop: i for i, c in enumerate(die.crops)}
        for path, face in _dict(spec.get("crops", {}), f"{at}.crops").items():
            if path not in by_path:
                raise TeachError(f"{_short(path)} is not a crop of {die.id}", f"{at}.crops")
            c = by_path[path]
            f = _face_or_none(die, face, f"{at}.crops.{path}")
            if c not in die.loose:
                die = move_out(die, c)
            die = name_loose(die, c, f)
        teach = teach.with_die(die)
    return teach


def apply_labels(folder: str | Path, labels: Mapping[str, Any]) -> Teach:
    """Apply a labels file to ``folder/teach.json`` and save it (the headless path)."""
    teach = labels_applied(load_teach(folder), labels)
    save_teach(folder, teach)
    return teach


def write_labelled(folder: str | Path, teach: Teach | None = None) -> LabelledSummary:
    """Rewrite ``folder/manifest.jsonl`` with ``"face"`` on every die whose crop is named.

    Every other die of teach.json is left without a face (a name taken back is taken off); dice
    teach.json does not list are left as they are. The manifest before the first save is kept as
    ``manifest.unnamed.jsonl``. Each crop is checked against its manifest line (the same crop
    file, the same kind) before anything is written.
    """
    folder = Path(folder)
    teach = load_teach(folder) if teach is None else teach
    for _entry in read_manifest(folder, unnamed=True):  # every line checked first
        pass
    path = folder / MANIFEST
    raw = path.read_bytes()
    lines = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    parsed: dict[int, dict[str, Any]] = {}
    named = unnamed = 0
    for d in teach.dice:
        faces = crop_faces(d)
        for i, c in enumerate(d.crops):
            at = f"{TEACH_FILE}: {d.id}: crops[{i}]"
            if c.line > len(lines) or not lines[c.line - 1].strip():
                raise TeachError(f"{MANIFEST} has no line {c.line}", at)
            if c.line not in parsed:
                parsed[c.line] = json.loads(lines[c.line - 1])
            obj = parsed[c.line]
            dice = obj.get("dice", [])
            entry = dice[c.index] if c.index < len(dice) else {}
            if entry.get("crop") != c.crop or entry.get("die") != d.kind:
                raise TeachError(
                    f"{MANIFEST} line {c.line} has no {d.kind} at {c.index} with crop {c.crop}", at
                )
            if i in faces:
                entry["face"] = faces[i]
                named += 1
            else:
                entry.pop("face", None)
                unnamed += 1
    for lineno, obj in parsed.items():
        lines[lineno - 1] = json.dumps(obj)
    backup = folder / UNNAMED_MANIFEST
    if not backup.exists():
        _write_atomic(backup, raw)
    _write_atomic(path, "\n".join(lines).encode("utf-8"))
    return LabelledSummary(named, unnamed, len(parsed))
