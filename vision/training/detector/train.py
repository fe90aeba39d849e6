"""Train the tiny CenterNet-style dice detector on the CPU and export it to ONNX.

Why CenterNet: one heatmap of die centres at stride 4 plus a box size per centre needs
no anchors and no box NMS (a 3x3 max filter does it), so the decoder on the Pi is a few
numpy lines and touching dice stay two peaks.

Run (about 20 minutes on one core)::

    nice .venv/bin/python -m dicetower.vision.training.detector.train --minutes 18

``--resume`` takes a checkpoint or the shipped ``vision/models/detector.onnx`` itself
(:func:`state_from_onnx`), so the shipped detector can be trained on from a fresh machine.
``--out`` defaults to the repo's model: point it at a folder to judge a candidate first with
``dicetower eval --split val --models DIR``; its card says ``--run-at`` (:data:`RUN_SIZE`) as the
size to run at.

torch is imported only here: the tower runs the exported ``vision/models/detector.onnx``
through ``cv2.dnn`` (see ``vision/detector.py``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from dicetower.vision.detector import STRIDE

from .data import MODEL_PATH, RUN_SIZE, load_split, make_batch
from .model import build_model, centre_loss, export_onnx, state_from_onnx

__all__ = ["main", "new_card", "previous_card"]


def previous_card(resume: Path | None) -> dict | None:
    """The card of the model a run started from, if it has one (an exported ``.onnx``'s ``.json``).

    A checkpoint ``.pt`` carries no card; its history is whatever the run that wrote it printed.
    """
    if resume is None or resume.suffix != ".onnx":
        return None
    card = resume.with_suffix(".json")
    if not card.is_file():
        return None
    try:
        loaded = json.loads(card.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def new_card(run: dict, run_at: int, params: int, previous: dict | None) -> dict:
    """The model card of a freshly exported detector, keeping the card it was trained on from.

    Why keep it: the shipped card's history (its chained runs, why it runs at 320 px) is the
    only record of how the file came to be; a resumed run that wrote only its own fields would
    erase it. The runtime reads ``input_size`` and ``stride`` only; the rest is for people.
    """
    card = {
        "input_size": run_at,
        "stride": STRIDE,
        "outputs": "1x5xHxW: centre logit, dx, dy, log(w/stride), log(h/stride)",
        "split": "dicetower.vision.eval.splits.split_of",
        "params": params,
        "this_run": run,
    }
    if previous is not None:
        card["previous_card"] = previous
    return card


def main(argv: list[str] | None = None) -> int:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=18.0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument(
        "--size", type=int, default=224, help="training crop side (the model is fully convolutional)"
    )
    ap.add_argument("--lr", type=float, default=3e-3)
    # One thread: on the shared 2-core machine two torch threads spin-wait on each other
    # and a step took 10x longer than with one.
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--resume", type=Path, default=None, help="a checkpoint .pt, or an exported .onnx (the shipped one)"
    )
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    ap.add_argument(
        "--run-at",
        type=int,
        default=RUN_SIZE,
        help="input square the card tells the runtime to use (default %(default)s; trained at --size crops)",
    )
    ap.add_argument("--ckpt", type=Path, default=Path(tempfile.gettempdir()) / "dicetower_detector.pt")
    ap.add_argument("--export-only", action="store_true", help="export --resume's weights and stop")
    args = ap.parse_args(argv)
    if args.run_at < 32 or args.run_at % 32:
        # The encoder halves the map down to stride 32 and the top-down path doubles it back:
        # any other square misaligns the sums, which cv2.dnn clamps with only a warning.
        ap.error(f"--run-at must be a positive multiple of 32, not {args.run_at}")
    # Checked before the photos are loaded, so a typo costs no wait and no traceback.
    if args.resume is not None and not args.resume.is_file():
        ap.error(f"--resume: no such file {args.resume}")
    if args.export_only and (args.resume is None or args.resume.suffix == ".onnx"):
        ap.error("--export-only exports a checkpoint: give --resume CHECKPOINT.pt")
    torch.set_num_threads(args.threads)
    if args.export_only:
        model = build_model()
        model.load_state_dict(torch.load(args.resume))
        export_onnx(model, args.out)
        return 0
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    t0 = time.monotonic()
    data = load_split("train")
    print({k: len(v) for k, v in data.items()}, f"loaded in {time.monotonic() - t0:.1f}s", flush=True)
    model = build_model()
    if args.resume is not None and args.resume.suffix == ".onnx":
        try:
            model.load_state_dict(state_from_onnx(args.resume, make_batch(data, rng, 64, args.size)[0]))
        except ValueError as exc:
            ap.error(f"--resume: {exc}")
    elif args.resume is not None:
        model.load_state_dict(torch.load(args.resume))
    print("params", sum(p.numel() for p in model.parameters()), flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    budget = args.minutes * 60.0
    start = time.monotonic()
    step = 0
    run = 0.0
    while True:
        frac = (time.monotonic() - start) / budget
        if frac >= 1.0:
            break
        lr = args.lr * (min(1.0, (step + 1) / 100) * 0.5 * (1 + math.cos(math.pi * frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        xs, heat, reg, mask = make_batch(data, rng, args.batch, args.size)
        model.train()
        out = model(torch.from_numpy(xs))
        loss, focal = centre_loss(out, torch.from_numpy(heat), torch.from_numpy(reg), torch.from_numpy(mask))
        opt.zero_grad()
        loss.backward()
        opt.step()
        run = 0.98 * run + 0.02 * loss.item() if step else loss.item()
        if step % 50 == 0:
            print(
                f"step {step} t={time.monotonic() - start:.0f}s lr={lr:.5f} loss={run:.3f} focal={focal:.3f}",
                flush=True,
            )
            torch.save(model.state_dict(), args.ckpt)
        step += 1
    torch.save(model.state_dict(), args.ckpt)
    export_onnx(model, args.out)
    this_run = {
        "command": " ".join(["python -m dicetower.vision.training.detector.train", *(argv or sys.argv[1:])]),
        "resumed_from": str(args.resume) if args.resume is not None else None,
        "lr": args.lr,
        "seed": args.seed,
        "crop": args.size,
        "steps": step,
        "batch": args.batch,
        "minutes": round((time.monotonic() - start) / 60, 1),
        "trained_on": {k: f"{len(v)} train photos" for k, v in data.items()},
    }
    meta = new_card(
        this_run, args.run_at, int(sum(p.numel() for p in model.parameters())), previous_card(args.resume)
    )
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print("exported", args.out, args.out.stat().st_size, "bytes", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
