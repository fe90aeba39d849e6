"""Benchmark: face-reader networks side by side, ms per batch of crops on one core.

    .venv/bin/python bench/reader_net.py [MODEL_DIR ...] [--crops 25] [--rounds 15] [--layers N]

Each MODEL_DIR holds a ``d6_reader.onnx`` (default: the shipped one). The networks run in
turns, round after round, on the same random blob, so a machine that slows down mid-run
slows every network alike: on a shared machine, timing one network after the other gives
ratios that flip between runs. Each network is loaded the way the product loads it
(:func:`dicetower.vision.dnn.load_onnx`) and warmed up once. Compare with an earlier
commit's network by extracting it from git::

    mkdir -p earlier && git show REV:vision/models/d6_reader.onnx > earlier/d6_reader.onnx
    .venv/bin/python bench/reader_net.py vision/models earlier
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import cv2
import numpy as np
from dicetower.vision.dnn import load_onnx
from dicetower.vision.faces.pips import INPUT

__all__ = ["main"]

DEFAULT_DIR = Path(__file__).resolve().parents[1] / "vision" / "models"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path, default=[DEFAULT_DIR])
    ap.add_argument("--crops", type=int, default=25, help="crops per batch (1-1000)")
    ap.add_argument("--rounds", type=int, default=15, help="timed rounds (1-1000)")
    ap.add_argument(
        "--layers", type=int, default=0, metavar="N", help="also print each network's N slowest layers"
    )
    args = ap.parse_args(argv)
    if not (1 <= args.crops <= 1000 and 1 <= args.rounds <= 1000):
        ap.error("--crops and --rounds must be between 1 and 1000")
    if not 0 <= args.layers <= 100:
        ap.error("--layers must be between 0 and 100")
    cv2.setNumThreads(1)
    nets = {}
    for d in args.dirs:
        path = d / "d6_reader.onnx"
        if not path.is_file():
            ap.error(f"{path}: no such model")
        nets[str(d)] = load_onnx(path)
    blobs = {}
    for name, net in nets.items():
        for channels in (4, 1):  # the model card says too, but the network is what runs
            blob = np.random.default_rng(0).standard_normal((args.crops, channels, INPUT, INPUT))
            try:
                net.setInput(blob.astype(np.float32))
                net.forward()
            except cv2.error:
                continue
            blobs[name] = blob.astype(np.float32)
            break
        else:
            ap.error(f"{name}: the network takes neither 4 nor 1 input planes")
    times: dict[str, list[float]] = {name: [] for name in nets}
    layer_ticks: dict[str, dict[str, float]] = {name: {} for name in nets}
    for _ in range(args.rounds):
        for name, net in nets.items():
            net.setInput(blobs[name])
            t0 = time.perf_counter()
            net.forward()
            times[name].append((time.perf_counter() - t0) * 1000.0)
            if args.layers:  # cv2.dnn's own per-layer timing of the pass just run
                _total, ticks = net.getPerfProfile()
                acc = layer_ticks[name]
                for layer, tick in zip(net.getLayerNames(), np.asarray(ticks).ravel(), strict=False):
                    acc[layer] = acc.get(layer, 0.0) + float(tick)
    print(f"{args.crops} crops a batch, {args.rounds} interleaved rounds, one thread")
    first = statistics.median(times[next(iter(nets))])
    for name, ms in times.items():
        med = statistics.median(ms)
        print(f"{name:40s} {med:8.2f} ms  {med / args.crops:6.3f} ms/crop  {med / first:5.2f}x")
    per_ms = 1000.0 / cv2.getTickFrequency() / args.rounds
    for name, acc in layer_ticks.items():
        if acc:
            print(f"{name}: slowest layers, mean ms per pass")
            for layer, ticks in sorted(acc.items(), key=lambda kv: -kv[1])[: args.layers]:
                print(f"  {ticks * per_ms:7.2f}  {layer}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
