"""Train the upright-numeral network on :mod:`.data`'s crops; write its ONNX file and card.

The network: a 5 x 5 stride-2 convolution and two conv + pool stages (32, 64, 128 channels)
on the 48-px grey crop, then a linear layer over the 6 x 6 grid; about 0.23 M weights. AdamW,
one-cycle, fixed seeds. Each batch is shifted by up to 3 px and given a random contrast (the
crops already carry blur, noise, JPEG).
The upright reading is scored on real photos by :mod:`.evaluate`, never by this loop.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ...faces.glyphs import GLYPH_INPUT, TEXTS, glyph_blob
from ..numerals.model import conv_block
from ..numerals.model import export as export_grey_net

__all__ = ["export", "make_model", "train"]


def make_model() -> Any:
    """``(N, 1, 48, 48)`` standardised grey crops -> ``(N, 1 + len(TEXTS))`` logits (``none`` first)."""
    import torch
    from torch import nn

    block = conv_block
    torch.manual_seed(0)
    return nn.Sequential(
        *block(1, 32, 5, 2),
        *block(32, 64),
        nn.MaxPool2d(2),
        *block(64, 128),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Dropout(0.3),
        nn.Linear(128 * (GLYPH_INPUT // 8) ** 2, 1 + len(TEXTS)),
    )


def export(model: Any, path: Path) -> None:
    """Write ``model`` as ONNX for ``cv2.dnn``; a die's turns (up to 360 at one centre) go in one call."""
    export_grey_net(model, path, GLYPH_INPUT, max_batch=1024)


def _augment(x: Any, g: Any) -> Any:
    import torch

    n = x.shape[0]
    dx, dy = (int(v) for v in torch.randint(-3, 4, (2,), generator=g))
    x = torch.roll(x, (dy, dx), dims=(2, 3))
    return x * (0.8 + 0.4 * torch.rand(n, 1, 1, 1, generator=g))


def train(
    data: Path,
    epochs: int,
    batch: int,
    lr: float,
    seed: int,
    threads: int,
    *,
    extra: list[Path] | None = None,
    extra_weight: list[int] | None = None,
    resume: Path | None = None,
) -> Any:
    """The trained model (eval mode); prints val top-1 after each epoch.

    ``extra``: more training crops (``.npz`` files of ``x``, ``y``, such as :mod:`.real`'s
    or :mod:`.renders`'), each drawn its ``extra_weight`` times an epoch (1 when not
    given); ``resume``: start from this state (``.pt``).
    """
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    d, v = np.load(data / "train.npz"), np.load(data / "val.npz")
    dx, dy = d["x"], d["y"]
    extra = extra or []
    weights = list(extra_weight or [])
    if len(weights) > len(extra) or any(w < 1 for w in weights):
        raise ValueError("one --extra-weight (>= 1) per --extra at most")
    weights += [1] * (len(extra) - len(weights))
    for path, weight in zip(extra, weights, strict=True):
        e = np.load(path)
        dx = np.concatenate([dx, *([e["x"]] * weight)])
        dy = np.concatenate([dy, *([e["y"]] * weight)])
    x = torch.from_numpy(glyph_blob(dx))
    y = torch.from_numpy(dy.astype(np.int64))
    vx = torch.from_numpy(glyph_blob(v["x"]))
    vy = v["y"].astype(np.int64)
    model = make_model()
    if resume is not None:
        model.load_state_dict(torch.load(resume))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * ((len(y) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.15)
    g = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(y), generator=g)
        total, t0 = 0.0, time.perf_counter()
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            loss = F.cross_entropy(model(_augment(x[idx], g)), y[idx], label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        model.eval()
        with torch.no_grad():
            pred = np.concatenate(
                [model(vx[i : i + 1024]).argmax(1).numpy() for i in range(0, len(vx), 1024)]
            )
        print(
            f"epoch {epoch + 1}/{epochs}: loss {total / len(y):.4f} ({time.perf_counter() - t0:.0f} s) "
            f"val top-1 {(pred == vy).mean():.3f}",
            flush=True,
        )
    return model


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--data", type=Path, default=Path("runs/glyphs"))
    p.add_argument("--out", type=Path, default=Path("runs/glyphs/model"))
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--extra",
        type=Path,
        action="append",
        default=[],
        help="more training crops (.npz of x, y); repeatable",
    )
    p.add_argument(
        "--extra-weight", type=int, action="append", default=[], help="times an epoch, one per --extra (1)"
    )
    p.add_argument("--resume", type=Path, default=None, help="start from this state (.pt)")
    a = p.parse_args(argv)
    if len(a.extra_weight) > len(a.extra) or any(w < 1 for w in a.extra_weight):
        p.error("give one --extra-weight (>= 1) per --extra at most")
    import torch

    model = train(
        a.data,
        a.epochs,
        a.batch,
        a.lr,
        a.seed,
        a.threads,
        extra=a.extra,
        extra_weight=a.extra_weight,
        resume=a.resume,
    )
    a.out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), a.out / "glyph_reader.pt")
    export(model, a.out / "glyph_reader.onnx")
    card = {
        "schema": "dicetower.glyph_reader/1",
        "input": GLYPH_INPUT,
        "classes": ["none", *TEXTS],
        "training": {
            "command": "python -m dicetower.vision.training.glyphs.train "
            + " ".join(sys.argv[1:] if argv is None else argv),
            "epochs": a.epochs,
            "batch": a.batch,
            "lr": a.lr,
            "seed": a.seed,
        },
    }
    (a.out / "glyph_reader.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
