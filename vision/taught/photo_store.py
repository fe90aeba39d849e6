"""The photos a fit reads, decoded when asked and only the last few kept.

Why: a fit reads each photo once per network and side of the split; keeping every decoded photo
of a 700-roll folder (700 frames of 640 x 480) costs most of a 2 GB Pi's memory, while decoding
one again costs a few milliseconds. So the photos are checked once (an unreadable one is
skipped, and counted) and then decoded on each use, the last :data:`KEEP` kept.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from ..imageio import ImageError, load_image_info

__all__ = ["KEEP", "PhotoStore"]

#: Decoded photos kept at once.
KEEP = 32

Loaded = tuple[np.ndarray, float]


class PhotoStore(Mapping[Path, Loaded]):
    """Photo path -> ``(frame, scale)`` as :func:`~dicetower.vision.imageio.load_image_info` gives them.

    Only photos that decoded when the store was built are in it (``bad`` counts the others).
    """

    def __init__(self, paths: Iterable[Path], *, keep: int = KEEP) -> None:
        if keep < 1:
            raise ValueError(f"keep must be at least 1, got {keep}")
        self.keep = keep
        self._kept: OrderedDict[Path, Loaded] = OrderedDict()
        self._paths: list[Path] = []
        self.bad = 0
        for path in paths:
            try:
                self._remember(path, self._load(path))
            except ImageError:
                self.bad += 1
                continue
            self._paths.append(path)
        self._known = set(self._paths)

    @staticmethod
    def _load(path: Path) -> Loaded:
        info = load_image_info(path)
        return info.frame, info.scale

    def _remember(self, path: Path, loaded: Loaded) -> None:
        self._kept[path] = loaded
        self._kept.move_to_end(path)
        while len(self._kept) > self.keep:
            self._kept.popitem(last=False)

    def __getitem__(self, path: Path) -> Loaded:
        if path not in self._known:
            raise KeyError(path)
        loaded = self._kept.get(path)
        if loaded is None:
            try:
                loaded = self._load(path)
            except ImageError as exc:  # changed on disk since it was checked
                raise KeyError(path) from exc
        self._remember(path, loaded)
        return loaded

    def __contains__(self, path: object) -> bool:
        return path in self._known

    def __iter__(self) -> Iterator[Path]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)
