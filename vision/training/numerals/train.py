"""Train the numeral reader on :mod:`.data`'s crops; write the ONNX file and its card.

Loop: AdamW, one-cycle learning rate, fixed seeds, ``--threads`` torch threads. Each epoch
draws every crop once and the real d20 crops ``--real-weight`` times (they are few, and the
only real numerals). Each batch is turned by a random quarter turn and given noise, contrast
and a 1-in-6 inverted polarity (light ink on a dark body and the reverse). Crops whose face is
unknown (real d10 of ``lurig-kinds``) train only the kind: their loss is ``-log`` of the kind's
summed probability. A cocked die's crop counts half for each of its two faces.

Calibration on the val crops (renders of the val seed, ``rsandrini-d20`` val videos, the d6
and kind val splits), never the test split: a temperature by least NLL, then the kind
threshold and a face threshold per kind, each the lowest on a grid that keeps val's wrong
answers at or under ``--wrong-rate`` of those it accepts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ...faces.numerals import INPUT, KIND_OF_CLASS, class_names
from ...kinds import NUMERAL_NETWORK_KINDS
from .data import KIND_LABELS
from .model import export, make_model

__all__ = ["calibrate", "main", "train"]

_GRID = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.995)


def _kind_masks() -> Any:
    import torch

    masks = torch.zeros(len(KIND_LABELS), len(KIND_OF_CLASS))
    for j, k in enumerate(KIND_OF_CLASS):
        masks[KIND_LABELS.index(k), j] = 1.0
    return masks.bool()


def _loss(logits: Any, y: Any, y2: Any, kind: Any, masks: Any) -> Any:
    import torch
    import torch.nn.functional as F

    logp = F.log_softmax(logits, dim=1)
    known = y >= 0
    loss = torch.zeros((), dtype=logits.dtype)
    if known.any():
        w = torch.where(y2[known] >= 0, 0.5, 1.0).to(logits.dtype)
        loss = loss - (w * logp[known].gather(1, y[known].long()[:, None])[:, 0]).sum()
    both = y2 >= 0
    if both.any():
        loss = loss - 0.5 * logp[both].gather(1, y2[both].long()[:, None]).sum()
    only = ~known
    if only.any():
        m = masks[kind[only].long()]
        loss = loss - torch.logsumexp(logp[only].masked_fill(~m, -1e9), dim=1).sum()
    return loss / len(y)


def _spin(x: Any, g: Any) -> Any:
    """Each crop turned by its own angle, scaled 0.85-1.15 and shifted up to 6 %: fresh views each epoch.

    Why: the real d20 crops are a few fixed turns of a few videos; a network that sees those
    same pixels every epoch learns the video (die, light, background), not the numeral.
    """
    import torch
    import torch.nn.functional as F

    n = x.shape[0]
    a = torch.rand(n, generator=g) * 2 * torch.pi
    s = 0.85 + 0.3 * torch.rand(n, generator=g)
    t = (torch.rand(n, 2, generator=g) - 0.5) * 0.12
    cos, sin = torch.cos(a) / s, torch.sin(a) / s
    theta = torch.stack([torch.stack([cos, -sin, t[:, 0]], 1), torch.stack([sin, cos, t[:, 1]], 1)], 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, padding_mode="border", align_corners=False)


def _augment(x: Any, g: Any, spin: bool = False) -> Any:
    import torch

    if spin:
        x = _spin(x, g)
    k = int(torch.randint(0, 4, (1,), generator=g))
    x = torch.rot90(x, k, dims=(2, 3))
    n = x.shape[0]
    flip = (torch.rand(n, 1, 1, 1, generator=g) < 1 / 6).float()
    x = x * (1 - 2 * flip)
    x = x * (0.8 + 0.4 * torch.rand(n, 1, 1, 1, generator=g))
    return x + 0.15 * torch.rand(n, 1, 1, 1, generator=g) * torch.randn(x.shape, generator=g)


def _by_source(logits: np.ndarray, y: np.ndarray, source: np.ndarray) -> dict[str, str]:
    """Top-1 on val per source (crops with a known class only)."""
    out = {}
    for name in sorted(set(source.tolist())):
        rows = (source == name) & (y >= 0)
        if rows.any():
            out[name] = f"{(logits[rows].argmax(axis=1) == y[rows]).mean():.3f} of {int(rows.sum())}"
    return out


def train(
    data: Path,
    epochs: int,
    batch: int,
    lr: float,
    seed: int,
    *,
    threads: int = 2,
    real_weight: int = 2,
    checkpoint: Path | None = None,
    resume: Path | None = None,
    kinds: tuple[str, ...] = (),
    spin: bool = False,
) -> Any:
    """The trained torch model (eval mode); prints val top-1 by source after each epoch."""
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    d = _only(dict(np.load(data / "train.npz")), kinds)
    x = torch.from_numpy(d["x"].astype(np.float32))[:, None]
    y = torch.from_numpy(d["y"].astype(np.int64))
    y2 = torch.from_numpy(d["y2"].astype(np.int64))
    kind = torch.from_numpy(d["kind"].astype(np.int64))
    real = torch.from_numpy(np.flatnonzero(d["source"] == "rsandrini-d20"))
    v = _only(dict(np.load(data / "val.npz")), kinds)
    model = make_model()
    if resume is not None:  # another round from a checkpoint: a fresh one-cycle schedule over it
        model.load_state_dict(torch.load(resume))
    masks = _kind_masks()
    per_epoch = len(y) + (real_weight - 1) * len(real)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * ((per_epoch + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.15)
    g = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        model.train()
        pool = torch.cat([torch.arange(len(y))] + [real] * (real_weight - 1))
        order = pool[torch.randperm(len(pool), generator=g)]
        total, t0 = 0.0, time.perf_counter()
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            loss = _loss(model(_augment(x[idx], g, spin)), y[idx], y2[idx], kind[idx], masks)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss) * len(idx)
        model.eval()
        val = _by_source(_logits(model, v["x"]), v["y"].astype(int), v["source"])
        print(
            f"epoch {epoch + 1}/{epochs}: loss {total / len(order):.4f} ({time.perf_counter() - t0:.0f} s) "
            f"val {val}",
            flush=True,
        )
        if checkpoint is not None:
            torch.save(model.state_dict(), checkpoint)
    return model


def _only(d: dict[str, np.ndarray], kinds: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The crops of ``kinds`` alone (and "none" crops), for a network per kind; all crops when empty."""
    if not kinds:
        return d
    of_class = np.array(KIND_OF_CLASS)
    y, kind = d["y"].astype(int), d["kind"].astype(int)
    keep = np.where(y >= 0, np.isin(of_class[np.maximum(y, 0)], (*kinds, "none")), False)
    keep |= (y < 0) & np.isin(np.array(KIND_LABELS)[np.maximum(kind, 0)], kinds) & (kind >= 0)
    return {k: v[keep] for k, v in d.items()}


def _logits(model: Any, x: np.ndarray) -> np.ndarray:
    import torch

    out = []
    with torch.no_grad():
        for start in range(0, len(x), 512):
            out.append(model(torch.from_numpy(x[start : start + 512].astype(np.float32))[:, None]).numpy())
    return np.concatenate(out).astype(np.float64)


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _lowest(grid_ok: list[tuple[float, bool]]) -> float:
    for t, ok in grid_ok:
        if ok:
            return t
    return grid_ok[-1][0]


def calibrate(logits: np.ndarray, y: np.ndarray, kind: np.ndarray, wrong_rate: float) -> dict[str, Any]:
    """Temperature, kind threshold and face thresholds from val logits (module docstring)."""
    known = y >= 0
    best = (float("inf"), 1.0)
    for t in np.linspace(0.5, 3.0, 26):
        p = _softmax(logits[known] / t)
        nll = -np.log(p[np.arange(known.sum()), y[known]] + 1e-12).mean()
        best = min(best, (float(nll), float(t)))
    temperature = best[1]
    p = _softmax(logits / temperature)
    kind_cols = {
        k: np.array([j for j, kk in enumerate(KIND_OF_CLASS) if kk == k]) for k in NUMERAL_NETWORK_KINDS
    }
    kp = np.stack([p[:, kind_cols[k]].sum(axis=1) for k in NUMERAL_NETWORK_KINDS] + [p[:, 0]], axis=1)
    pred_kind = kp.argmax(axis=1)
    true_kind = np.where(known, [KIND_LABELS.index(KIND_OF_CLASS[v]) if v >= 0 else -1 for v in y], kind)
    grid = []
    for t in _GRID:
        acc = (kp.max(axis=1) >= t) & (pred_kind < len(NUMERAL_NETWORK_KINDS))
        wrong = acc & (pred_kind != true_kind)
        grid.append((t, wrong.sum() <= wrong_rate * max(1, acc.sum())))
    kind_threshold = _lowest(grid)
    face_thresholds = {}
    for ki, k in enumerate(NUMERAL_NETWORK_KINDS):
        rows = known & (pred_kind == ki) & (kp[:, ki] >= kind_threshold)
        cols = kind_cols[k]
        best_col = cols[p[rows][:, cols].argmax(axis=1)] if rows.any() else np.zeros(0, int)
        conf = p[rows, best_col] if rows.any() else np.zeros(0)
        right = best_col == y[rows]
        grid = [(t, (~right & (conf >= t)).sum() <= wrong_rate * max(1, (conf >= t).sum())) for t in _GRID]
        face_thresholds[k] = _lowest(grid)
    return {"temperature": temperature, "kind_threshold": kind_threshold, "face_thresholds": face_thresholds}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--data", type=Path, default=Path("runs/numerals"))
    p.add_argument("--out", type=Path, default=Path("vision/models"))
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--wrong-rate", type=float, default=0.003)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--resume", type=Path, default=None, help="start from this checkpoint (.pt)")
    p.add_argument("--real-weight", type=int, default=2, help="draws per epoch of each real d20 crop")
    p.add_argument(
        "--kinds",
        default="",
        help="train on these kinds alone (comma-separated): one network per kind",
    )
    p.add_argument("--spin", action="store_true", help="turn, scale and shift every crop afresh each epoch")
    a = p.parse_args(argv)
    kinds = tuple(k for k in a.kinds.split(",") if k)
    unknown = sorted(set(kinds) - set(NUMERAL_NETWORK_KINDS))
    if unknown:
        p.error(f"--kinds: {', '.join(unknown)} not among {', '.join(NUMERAL_NETWORK_KINDS)}")
    args = sys.argv[1:] if argv is None else argv
    model = train(
        a.data,
        a.epochs,
        a.batch,
        a.lr,
        a.seed,
        threads=a.threads,
        real_weight=a.real_weight,
        checkpoint=a.data / f"numeral_reader{''.join('-' + k for k in kinds)}.pt",
        resume=a.resume,
        kinds=kinds,
        spin=a.spin,
    )
    v = _only(dict(np.load(a.data / "val.npz")), kinds)
    logits = _logits(model, v["x"])
    card = calibrate(logits, v["y"].astype(int), v["kind"].astype(int), a.wrong_rate)
    y = v["y"].astype(int)
    known = y >= 0
    val_right = float((logits[known].argmax(axis=1) == y[known]).mean())
    a.out.mkdir(parents=True, exist_ok=True)
    export(model, a.out / "numeral_reader.onnx")
    meta = {
        "schema": "dicetower.numeral_reader/1",
        "input": INPUT,
        "classes": class_names(),
        **card,
        "val_top1": round(val_right, 4),
        "training": {
            "command": "python -m dicetower.vision.training.numerals.train " + " ".join(args),
            "epochs": a.epochs,
            "batch": a.batch,
            "lr": a.lr,
            "seed": a.seed,
            "wrong_rate": a.wrong_rate,
            "real_weight": a.real_weight,
            "kinds": list(kinds),
            "spin": a.spin,
        },
    }
    (a.out / "numeral_reader.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: meta[k] for k in ("temperature", "kind_threshold", "face_thresholds", "val_top1")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
