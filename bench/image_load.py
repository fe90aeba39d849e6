"""Photo loading time: this tree's ``decode_image`` against an earlier commit's, on dataset photos.

The checks that refuse bombs and damaged photos (a header parse per format, a scan of a JPEG's
entropy data, descriptor 2 captured for libjpeg's warnings) run on every photo the reader
sees, so their cost is measured here, beside the same decode without them. The earlier
commit's ``vision/imageio.py`` (and the loader modules beside it, where it has them) is
extracted with ``git show`` into a temporary package and run in this same process.

Run: ``.venv/bin/python bench/image_load.py --previous REV`` (``../shared/datasets`` needed).
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

from dicetower.vision import imageio

__all__ = ["main"]

REPO = Path(__file__).resolve().parents[1]
DATASETS = REPO.parent / "shared" / "datasets"
FOLDERS = ("byler-d6", "tomitomi3-gray-d6", "matteop65-d6-wood", "epanemu-dice3")
#: The modules the loader is made of, at one revision or another.
LOADER_MODULES = ("imageio", "image_format", "quiet")


def _previous(rev: str, into: Path) -> ModuleType:
    package = into / "previous_vision"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in LOADER_MODULES:
        shown = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{rev}:vision/{name}.py"], capture_output=True, text=True
        )
        if shown.returncode == 0:
            (package / f"{name}.py").write_text(shown.stdout)
        elif name == "imageio":
            raise SystemExit(f"{rev}: no vision/imageio.py ({shown.stderr.strip()})")
    sys.path.insert(0, str(into))
    return importlib.import_module("previous_vision.imageio")


def _per_photo_ms(module: ModuleType, datas: list[bytes], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for data in datas:
            module.decode_image(data, "photo")
        best = min(best, time.perf_counter() - start)
    return best / len(datas) * 1000.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--previous", required=True, metavar="REV", help="the commit to compare with")
    ap.add_argument("--photos", type=int, default=100, help="photos per dataset folder")
    ap.add_argument("--repeat", type=int, default=3, help="runs per loader; the best is kept")
    args = ap.parse_args()
    if not DATASETS.is_dir():
        raise SystemExit(f"{DATASETS}: not found")
    with tempfile.TemporaryDirectory() as tmp:
        previous = _previous(args.previous, Path(tmp))
        print(f"{'folder':<20} {'previous':>10} {'ours':>10}   (ms a photo, best of {args.repeat})")
        for folder in FOLDERS:
            files = sorted((DATASETS / folder / "images").iterdir())[: args.photos]
            datas = [f.read_bytes() for f in files]
            theirs = _per_photo_ms(previous, datas, args.repeat)
            ours = _per_photo_ms(imageio, datas, args.repeat)
            print(f"{folder:<20} {theirs:>10.2f} {ours:>10.2f}")


if __name__ == "__main__":
    main()
