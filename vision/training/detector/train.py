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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from dicetower.vision.detector import INPUT_SIZE, STRIDE
from dicetower.vision.eval.splits import d20_split, d20_splits, split_of
from dicetower.vision.manifest import ManifestEntry, read_manifest
from dicetower.vision.training.onnx_weights import unfolded_state
from dicetower.vision.training.single_die_box import boxes_for

__all__ = [
    "CACHE_PATH",
    "DATASETS",
    "Sample",
    "build_model",
    "export_onnx",
    "load_split",
    "main",
    "make_batch",
    "new_card",
    "previous_card",
    "split_photos",
    "state_from_onnx",
    "tight_box_of_single_die",
]

ROOT = Path(__file__).resolve().parents[3]
DATASETS_DIR = ROOT / ".." / "shared" / "datasets"
CACHE_PATH = Path(tempfile.gettempdir()) / "dicetower_detector_cache.npz"
MODEL_PATH = ROOT / "vision" / "models" / "detector.onnx"

#: The real datasets the detector learns from, with the sampling weight of each: the d6 sets,
#: and the whole-die photos of d20 (``rsandrini-d20``) and of every kind (``lurig-kinds``), so a
#: d20 or d10 is found as one die, not as its face-sized facets.
DATASETS = {
    "byler-d6": 0.24,
    "epanemu-dice3": 0.24,
    "matteop65-d6-wood": 0.16,
    "tomitomi3-gray-d6": 0.16,
    "rsandrini-d20": 0.12,
    "lurig-kinds": 0.08,
}
#: Datasets of one whole die per photo with no box in the manifest: the box is
#: :func:`~dicetower.vision.training.single_die_box.boxes_for`'s.
BOXED_BY_SEARCH = ("rsandrini-d20", "lurig-kinds")
#: matteop65's boxes cover the pip area only: the die body is about this much larger.
MATTEO_BODY_SCALE = 1.4
#: Photos are cached with their longest side at most this (the model sees <= 384 px).
CACHE_SIDE = 448
#: The square a new card tells the runtime to use: 320 px (BENCHMARKS.md: as good end to end on
#: val as 384, fewer false alarms, 0.64x time).
RUN_SIZE = 320


@dataclass
class Sample:
    image: np.ndarray  #: BGR uint8, longest side <= CACHE_SIDE
    boxes: np.ndarray  #: (n, 4) float32 x, y, w, h of die bodies in ``image`` pixels
    size_known: bool  #: False where boxes are guesses of the body (matteop65)


def tight_box_of_single_die(image: np.ndarray) -> tuple[float, float, float, float]:
    """Box of the one die in a no-box photo (tomitomi3: white die centred in a grey cup).

    The manifest says only "the whole photo is one die"; the detector needs the body's
    extent. Take the brightest central blob (Otsu) when it is die-shaped and near the
    centre; else (bright cup rims merge with it) a centred box of half the photo, which is
    the median tomitomi3 die.
    """
    h, w = image.shape[:2]
    fallback = (w / 4, h / 4, w / 2, h / 2)
    grey = cv2.GaussianBlur(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    _, mask = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    n, _, stats, cents = cv2.connectedComponentsWithStats(mask)
    for i in range(1, min(n, 256)):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        near = math.hypot(cents[i][0] - w / 2, cents[i][1] - h / 2) < 0.12 * max(w, h)
        sized = 0.35 * min(w, h) <= max(bw, bh) <= 0.7 * min(w, h) and max(bw, bh) < 1.4 * min(bw, bh)
        if near and sized and area > 0.5 * bw * bh:
            return (float(x), float(y), float(bw), float(bh))
    return fallback


def split_photos(name: str, split: str) -> Iterator[tuple[str, ManifestEntry, np.ndarray]]:
    """``(relative path, entry, BGR photo)`` of each readable photo of dataset ``name`` in ``split``."""
    folder = DATASETS_DIR / name
    for entry in read_manifest(folder):
        rel = entry.image.relative_to(folder.resolve()).as_posix()
        if split_of(name, rel) != split:
            continue
        image = cv2.imread(str(entry.image), cv2.IMREAD_COLOR)
        if image is not None:
            yield rel, entry, image


def _searched_photos(name: str, split: str) -> Iterator[tuple[np.ndarray, list[tuple[float, ...]]]]:
    """``(BGR photo, [box])`` of the one-die photos of ``name`` in ``split``, boxed by search.

    Their manifests carry no box (and ``lurig-kinds`` no face), so rows are read as plain JSON;
    ``rsandrini-d20`` is split by whole video (``splits.d20_splits``): its neighbouring frames
    are near-duplicates.
    """
    folder = DATASETS_DIR / name
    rows = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]
    boxes = boxes_for(folder)
    videos = (
        d20_splits((r["image"], int(r["dice"][0]["face"])) for r in rows) if name == "rsandrini-d20" else None
    )
    for r in rows:
        rel = r["image"]
        if videos is not None:
            if d20_split(videos, rel, int(r["dice"][0]["face"])) != split:
                continue
        elif split_of(name, rel) != split:
            continue
        box = boxes.get(rel)
        image = cv2.imread(str(folder / rel), cv2.IMREAD_COLOR) if box is not None else None
        if image is not None:  # no die found or no photo: better no sample than a wrong box
            yield image, [tuple(box)]


def _load_dataset(name: str, split: str) -> list[Sample]:
    out: list[Sample] = []
    if name in BOXED_BY_SEARCH:
        photos = _searched_photos(name, split)
    else:
        photos = ((image, [d.box for d in entry.dice]) for _rel, entry, image in split_photos(name, split))
    for image, labelled in photos:
        h, w = image.shape[:2]
        boxes = []
        for box in labelled:
            if box is None:
                boxes.append(tight_box_of_single_die(image))
            else:
                boxes.append(box)
        arr = np.array(boxes, np.float32).reshape(-1, 4)
        known = not name.startswith("matteop65")
        if not known:
            cx, cy = arr[:, 0] + arr[:, 2] / 2, arr[:, 1] + arr[:, 3] / 2
            side = np.maximum(arr[:, 2], arr[:, 3]) * MATTEO_BODY_SCALE
            arr = np.stack([cx - side / 2, cy - side / 2, side, side], 1).astype(np.float32)
        scale = min(1.0, CACHE_SIDE / max(h, w))
        if scale < 1.0:
            image = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
            arr = arr * scale
        out.append(Sample(image, arr, known))
    return out


def load_split(split: str = "train", names: tuple[str, ...] = tuple(DATASETS)) -> dict[str, list[Sample]]:
    """Decoded, downscaled photos of ``split`` per dataset, cached in /tmp (never the repo)."""
    cache = CACHE_PATH.with_name(f"{CACHE_PATH.stem}_{split}_{'-'.join(sorted(names))}.npz")
    if cache.exists():
        z = np.load(cache, allow_pickle=False)
        result: dict[str, list[Sample]] = {}
        meta = json.loads(str(z["meta"]))
        for name, items in meta.items():
            result[name] = [Sample(z[f"im{k}"], z[f"bx{k}"], known) for k, known in items]
        return result
    result = {name: _load_dataset(name, split) for name in names}
    arrays: dict[str, np.ndarray] = {}
    meta_out: dict[str, list[tuple[int, bool]]] = {}
    k = 0
    for name, samples in result.items():
        meta_out[name] = []
        for s in samples:
            arrays[f"im{k}"], arrays[f"bx{k}"] = s.image, s.boxes
            meta_out[name].append((k, s.size_known))
            k += 1
    np.savez(cache, meta=np.array(json.dumps(meta_out)), **arrays)
    return result


# ----------------------------------------------------------------------------- augmentation


def _render(sample: Sample, out: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Warp one photo into an ``out`` x ``out`` canvas at a random die size, angle and place."""
    img, boxes = sample.image, sample.boxes
    h, w = img.shape[:2]
    med = float(np.median(np.maximum(boxes[:, 2], boxes[:, 3]))) if len(boxes) else 40.0
    # Die size in model pixels: log-uniform 9..110 (tiny dice to one die filling a photo).
    target = math.exp(rng.uniform(math.log(9), math.log(110 if out >= 200 else 60)))
    s = target / max(med, 1.0)
    # Don't blow a photo up so far that only a corner of it is visible, nor shrink a real
    # photo into a stamp on a flat border (mosaics supply the many-small-dice scenes).
    s = min(s, 3.0 * out / max(h, w))
    if max(h, w) > 300:
        s = max(s, 0.8 * out / max(h, w))
    quarter = int(rng.integers(4))
    angle = quarter * 90.0 + (rng.normal(0, 8) if rng.random() < 0.3 else 0.0)
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, s)
    if rng.random() < 0.5:  # horizontal flip about the photo centre
        m = np.array([[-1, 0, w], [0, 1, 0]], np.float64) @ np.vstack([m, [0, 0, 1]])
        m = m[:2]
    # Place the photo centre (or a labelled die) somewhere in the canvas.
    if len(boxes) and rng.random() < 0.5:
        b = boxes[rng.integers(len(boxes))]
        anchor = np.array([b[0] + b[2] / 2, b[1] + b[3] / 2, 1.0])
    else:
        anchor = np.array([w / 2, h / 2, 1.0])
    pa = m @ anchor
    m[:, 2] += rng.uniform(0.2 * out, 0.8 * out, 2) - pa
    border = tuple(int(v) for v in rng.integers(0, 256, 3))
    canvas = cv2.warpAffine(
        img, m, (out, out), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=border
    )
    if len(boxes):
        cx = boxes[:, 0] + boxes[:, 2] / 2
        cy = boxes[:, 1] + boxes[:, 3] / 2
        pts = np.stack([cx, cy, np.ones_like(cx)], 1) @ m.T
        rot = quarter % 2 == 1
        bw = (boxes[:, 3] if rot else boxes[:, 2]) * s
        bh = (boxes[:, 2] if rot else boxes[:, 3]) * s
        new = np.stack([pts[:, 0], pts[:, 1], bw, bh], 1).astype(np.float32)  # centre form
    else:
        new = np.zeros((0, 4), np.float32)
    return canvas, new


def _colour(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    out = img.astype(np.float32)
    if rng.random() < 0.5:
        out = out[:, :, rng.permutation(3)]
    if rng.random() < 0.1:
        g = out.mean(2, keepdims=True)
        out = np.repeat(g, 3, 2)
    out = out * rng.uniform(0.6, 1.4) + rng.uniform(-40, 40)
    out = out * rng.uniform(0.85, 1.15, 3)[None, None, :]
    if rng.random() < 0.25:
        k = int(rng.choice([3, 5]))
        out = cv2.GaussianBlur(out, (k, k), 0)
    if rng.random() < 0.25:
        out = out + rng.normal(0, rng.uniform(2, 12), out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


def _one(
    data: dict[str, list[Sample]], rng: np.random.Generator, out: int
) -> tuple[np.ndarray, np.ndarray, bool]:
    names = [n for n in DATASETS if data.get(n)]
    p = np.array([DATASETS[n] for n in names])
    name = names[rng.choice(len(names), p=p / p.sum())]
    sample = data[name][rng.integers(len(data[name]))]
    img, boxes = _render(sample, out, rng)
    return img, boxes, sample.size_known


def make_batch(
    data: dict[str, list[Sample]], rng: np.random.Generator, batch: int, size: int = INPUT_SIZE
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Images (B,3,S,S) float32 in 0..1, heatmaps (B,1,S/4,S/4), regression targets and masks."""
    cells = size // STRIDE
    xs = np.zeros((batch, 3, size, size), np.float32)
    heat = np.zeros((batch, 1, cells, cells), np.float32)
    reg = np.zeros((batch, 4, cells, cells), np.float32)  # dx, dy, log w, log h
    mask = np.zeros((batch, 2, cells, cells), np.float32)  # offset mask, size mask
    yy, xx = np.mgrid[0:cells, 0:cells].astype(np.float32)
    for i in range(batch):
        if rng.random() < 0.3:  # 2x2 mosaic: more small dice and more scenes per step
            half = size // 2
            img = np.zeros((size, size, 3), np.uint8)
            parts = []
            for q in range(4):
                sub, bx, known = _one(data, rng, half)
                oy, ox = (q // 2) * half, (q % 2) * half
                img[oy : oy + half, ox : ox + half] = sub
                keep = (bx[:, 0] >= 0) & (bx[:, 0] < half) & (bx[:, 1] >= 0) & (bx[:, 1] < half)
                bx = bx[keep]
                bx[:, 0] += ox
                bx[:, 1] += oy
                parts.append((bx, known))
        else:
            img, bx, known = _one(data, rng, size)
            keep = (bx[:, 0] >= 0) & (bx[:, 0] < size) & (bx[:, 1] >= 0) & (bx[:, 1] < size)
            parts = [(bx[keep], known)]
        img = _colour(img, rng)
        xs[i] = img.transpose(2, 0, 1).astype(np.float32) / 255.0
        for bx, known in parts:
            for cx, cy, bw, bh in bx[:64]:
                gx, gy = cx / STRIDE, cy / STRIDE
                ix, iy = int(gx), int(gy)
                if not (0 <= ix < cells and 0 <= iy < cells):
                    continue
                sigma = max(0.6, 0.12 * min(bw, bh) / STRIDE)
                g = np.exp(-((xx - gx + 0.5) ** 2 + (yy - gy + 0.5) ** 2) / (2 * sigma * sigma))
                np.maximum(heat[i, 0], g, out=heat[i, 0])
                heat[i, 0, iy, ix] = 1.0
                reg[i, 0, iy, ix] = gx - ix
                reg[i, 1, iy, ix] = gy - iy
                reg[i, 2, iy, ix] = math.log(max(bw, 1.0) / STRIDE)
                reg[i, 3, iy, ix] = math.log(max(bh, 1.0) / STRIDE)
                mask[i, 0, iy, ix] = 1.0
                mask[i, 1, iy, ix] = 1.0 if known else 0.0
    return xs, heat, reg, mask


# ----------------------------------------------------------------------------- model


def build_model():  # -> torch.nn.Module (torch imported lazily: never at tower runtime)
    """A ~150k-parameter encoder-decoder: stride 2..32 encoder, FPN-style top-down to stride 4."""
    import torch
    from torch import nn

    def cbr(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    def sep(cin: int, cout: int, stride: int = 1, dil: int = 1) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(cin, cin, 3, stride, dil, dilation=dil, groups=cin, bias=False),
            nn.BatchNorm2d(cin),
            nn.ReLU(),
            nn.Conv2d(cin, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(),
        )

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            # Straight to stride 4 with one 5x5 stride-4 conv: a stride-2 stage cost half the
            # CPU time of training and inference, and dice are >= ~9 model pixels anyway.
            self.stem = nn.Sequential(nn.Conv2d(3, 24, 5, 4, 2, bias=False), nn.BatchNorm2d(24), nn.ReLU())
            self.s4 = nn.Sequential(sep(24, 32), sep(32, 32))
            self.s8 = nn.Sequential(sep(32, 64, 2), sep(64, 64))
            self.s16 = nn.Sequential(sep(64, 96, 2), sep(96, 96), sep(96, 96, dil=2))
            self.s32 = nn.Sequential(sep(96, 128, 2), sep(128, 128), sep(128, 128, dil=2))
            self.l16 = nn.Conv2d(128, 96, 1)
            self.l8 = nn.Conv2d(96, 64, 1)
            self.l4 = nn.Conv2d(64, 32, 1)
            self.f16 = sep(96, 96)
            self.f8 = sep(64, 64)
            self.f4 = sep(32, 32)
            # A separable head: a full 3x3 conv at stride 4 cost more than the whole encoder.
            self.head = nn.Sequential(sep(32, 32), nn.Conv2d(32, 5, 1))
            nn.init.constant_(self.head[1].bias[:1], -4.0)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")

        def forward(self, x):
            a4 = self.s4(self.stem(x))
            a8 = self.s8(a4)
            a16 = self.s16(a8)
            a32 = self.s32(a16)
            t16 = self.f16(a16 + self.up(self.l16(a32)))
            t8 = self.f8(a8 + self.up(self.l8(t16)))
            t4 = self.f4(a4 + self.up(self.l4(t8)))
            return self.head(t4)

    del torch
    return Net()


def _loss(out, heat, reg, mask):
    import torch

    logit = out[:, :1]
    p = torch.sigmoid(logit).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg_w = torch.pow(1 - heat, 4)
    pos_loss = (torch.log(p) * torch.pow(1 - p, 2) * pos).sum()
    neg_loss = (torch.log(1 - p) * torch.pow(p, 2) * neg_w * (1 - pos)).sum()
    npos = pos.sum().clamp(min=1)
    focal = -(pos_loss + neg_loss) / npos
    off = (torch.abs(out[:, 1:3] - reg[:, :2]) * mask[:, :1]).sum() / npos
    size = (torch.abs(out[:, 3:5] - reg[:, 2:]) * mask[:, 1:2]).sum() / mask[:, 1:2].sum().clamp(min=1)
    return focal + off + size, focal.item()


def export_onnx(model, path: Path = MODEL_PATH) -> None:
    """Export with the dynamo exporter (opset 18) at the fixed input size cv2.dnn loads."""
    import torch

    model.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    args = (torch.zeros(1, 3, INPUT_SIZE, INPUT_SIZE),)
    prog = torch.onnx.export(model, args, dynamo=True, opset_version=18, external_data=False)
    prog.optimize()
    prog.save(str(path), external_data=False)


def state_from_onnx(path: Path, batch: np.ndarray) -> dict:
    """A torch state dict of :func:`build_model` that computes what the exported ``path`` computes.

    So ``--resume`` can train on the shipped detector from a fresh machine (the file is in the
    repo; training checkpoints are not). The file's weights come back through
    :func:`~dicetower.vision.training.onnx_weights.unfolded_state`, each batch norm the identity
    plus its folded bias; then each norm's running mean and variance are set to the statistics of
    its convolution's output on ``batch`` (images as :func:`make_batch` gives them), its scale to
    the spread and its shift to mean plus folded bias: in eval mode the net is then the file
    exactly (whatever the statistics), and in train mode, where a norm divides by the batch's own
    statistics, it starts close to the file instead of from a norm that rescales everything.
    Raises ``ValueError`` when the file's tensors do not fit the model.
    """
    import torch
    from torch import nn

    model = build_model()
    model.load_state_dict(unfolded_state(model, path))
    pairs: list[tuple[nn.Conv2d, nn.BatchNorm2d, torch.Tensor]] = []
    last_conv: nn.Conv2d | None = None
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            last_conv = module
        elif isinstance(module, nn.BatchNorm2d) and last_conv is not None:
            pairs.append((last_conv, module, module.bias.detach().clone()))  # the folded bias
    with torch.no_grad():
        stats: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

        def keep(index: int):
            def hook(_module, _inputs, output) -> None:
                stats[index] = (output.mean(dim=(0, 2, 3)), output.var(dim=(0, 2, 3)))

            return hook

        handles = [conv.register_forward_hook(keep(i)) for i, (conv, _, _) in enumerate(pairs)]
        model.eval()
        model(torch.from_numpy(np.asarray(batch, np.float32)))
        for handle in handles:
            handle.remove()
        for i, (_conv, norm, bias) in enumerate(pairs):
            mean, var = stats[i]
            norm.running_mean.copy_(mean)
            norm.running_var.copy_(var)
            norm.weight.copy_(torch.sqrt(var + norm.eps))
            norm.bias.copy_(mean + bias)
    return model.state_dict()


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
        loss, focal = _loss(out, torch.from_numpy(heat), torch.from_numpy(reg), torch.from_numpy(mask))
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
