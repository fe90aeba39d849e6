"""The files beside the log: where they live, how they are written, hashed and set aside.

A roll's photo and die crops live in ``photos/<id as 8 digits>/`` under names the server
chooses. They are written (and fsynced) before the row that names them, so a row never names a
file that is not on disk; a crash in between leaves files no row names, which the next start
moves to ``orphans/`` with a note saying why. Nothing the log cannot account for is deleted.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ORPHANS_NAME",
    "PhotoFile",
    "StoredFile",
    "default_data_dir",
    "file_sha256",
    "folder_name",
    "plain_name",
    "set_aside",
    "write_files",
]

#: the folder under the data directory that files set aside go to, one subfolder a start
ORPHANS_NAME = "orphans"


def default_data_dir() -> Path:
    """``$DICETOWER_DATA_DIR``, else ``$XDG_DATA_HOME/dicetower``, else ``~/.local/share/dicetower``."""
    env = os.environ.get("DICETOWER_DATA_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "dicetower"


@dataclass(frozen=True)
class PhotoFile:
    """A photo to store with a roll: ``name`` is a plain file name chosen by the server."""

    name: str
    data: bytes


@dataclass(frozen=True)
class StoredFile:
    """A file as the chain records it: its name in the roll's folder, SHA-256 and size."""

    name: str
    sha256: str
    bytes: int

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "sha256": self.sha256, "bytes": self.bytes}


def plain_name(name: str) -> bool:
    """A file name that cannot leave its folder or hide in it."""
    return bool(name) and name == os.path.basename(name) and not name.startswith(".") and "\\" not in name


def folder_name(roll_id: int) -> str:
    return f"{roll_id:08d}"


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file, read in 1 MiB blocks so memory stays bounded."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(2**20):
            digest.update(block)
    return digest.hexdigest()


def write_files(photo_dir: Path, roll_id: int, photos: Sequence[PhotoFile]) -> list[StoredFile]:
    """Write a roll's files durably (each whole or not at all); their records, sorted by name."""
    if not photos:
        return []
    for p in photos:
        if not plain_name(p.name):
            raise ValueError(f"photo name {p.name!r} must be a plain file name")
    folder = photo_dir / folder_name(roll_id)
    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, StoredFile] = {}
    for p in photos:
        tmp = folder / f".{p.name}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(p.data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, folder / p.name)
        out[p.name] = StoredFile(p.name, hashlib.sha256(p.data).hexdigest(), len(p.data))
    return [out[name] for name in sorted(out)]


def set_aside(data_dir: Path, items: Sequence[tuple[Path, str]]) -> Path | None:
    """Move each ``(path, why)`` under ``orphans/<UTC time>/`` (keeping its path below the data
    directory) and write ``NOTE.txt`` there listing what was moved and why. Returns the folder."""
    if not items:
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    base = data_dir / ORPHANS_NAME / stamp
    n = 1
    while base.exists():  # two starts in one second
        n += 1
        base = data_dir / ORPHANS_NAME / f"{stamp}-{n}"
    base.mkdir(parents=True)
    lines = [
        "dicetower set these files aside when the server started: the roll log does not account for them.",
        "Nothing here is served. Each line: the path it had under the data directory, then why.",
        "",
    ]
    for path, why in items:
        rel = path.relative_to(data_dir)
        dest = base / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, dest)
        lines.append(f"{rel.as_posix()}: {why}")
    (base / "NOTE.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return base
