"""How readers read rendered dice seen at an angle, band by band of camera height.

Why: ``--synth-oblique`` teaches the reader the top face of an oblique die; this says whether a
reader has learnt what the renderer draws, on renders no training cache holds (seeds from
``--seed-base``, far from :func:`~dicetower.vision.training.d6.data.build_oblique_cache`'s). It is
a check of the renderer and the training, never evidence of accuracy: real photos are
(``dicetower eval``)::

    .venv/bin/python -m dicetower.vision.training.d6.read_renders shipped runs/reader

Each reader reads each die's crop as the runtime cuts it from the label's box; a die is right,
wrong (another face) or not read.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...faces.pips import D6Reader, ReaderModelError, crop_die
from ...synth import SynthError
from ...synth.oblique import ObliqueStyle, check_style, render_oblique

__all__ = ["elevation_band", "main", "read_band"]

#: Far from the training cache's seeds (seed 1: 1_000_000 + i).
SEED_BASE = 7_000_000
MAX_RENDERS = 5_000


def read_band(
    readers: dict[str, D6Reader], elevation: tuple[float, float], renders: int, seed_base: int = SEED_BASE
) -> dict[str, tuple[int, int]]:
    """``(right, wrong)`` per reader on ``renders`` dice seen from ``elevation`` degrees."""
    style = ObliqueStyle(elevation=elevation)
    check_style(style)
    crops, faces = [], []
    for i in range(renders):
        img, label = render_oblique(seed_base + i, style=style)
        crops.append(crop_die(img, label.box))  # type: ignore[arg-type]
        faces.append(label.face)
    out = {}
    for name, reader in readers.items():
        got = [r.face for r in reader.read_crops(crops)]
        right = sum(g == f for g, f in zip(got, faces, strict=True))
        wrong = sum(g is not None and g != f for g, f in zip(got, faces, strict=True))
        out[name] = (right, wrong)
    return out


def elevation_band(text: str) -> tuple[float, float]:
    """``LO,HI`` degrees above the table (an argparse type), checked by the renderer's own rule.

    Shared with the reader trainer's ``--synth-oblique-elevation``.
    """
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO,HI in degrees, got {text!r}") from None
    try:
        check_style(ObliqueStyle(elevation=(lo, hi)))
    except SynthError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return lo, hi


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="'shipped' or a folder with d6_reader.onnx + .json")
    ap.add_argument("--renders", type=int, default=300, help=f"dice per band (1-{MAX_RENDERS})")
    ap.add_argument(
        "--band",
        type=elevation_band,
        action="append",
        metavar="LO,HI",
        help="camera heights, degrees (repeatable)",
    )
    ap.add_argument("--seed-base", type=int, default=SEED_BASE)
    args = ap.parse_args(argv)
    if not 1 <= args.renders <= MAX_RENDERS:
        ap.error(f"--renders must be 1-{MAX_RENDERS}, got {args.renders}")
    bands = args.band or [(25.0, 40.0), (40.0, 60.0), (60.0, 75.0)]
    readers = {}
    for m in args.models:
        try:
            readers[m] = D6Reader(None if m == "shipped" else Path(m))
        except (ReaderModelError, OSError) as e:
            ap.error(f"{m}: {e}")
    print(f"| camera height ({args.renders} renders) | " + " | ".join(readers) + " |")
    print("|---|" + "---|" * len(readers))
    for band in bands:
        got = read_band(readers, band, args.renders, args.seed_base)
        cells = " | ".join(f"{r} right, {w} wrong" for r, w in got.values())
        print(f"| {band[0]:g}-{band[1]:g} degrees | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
