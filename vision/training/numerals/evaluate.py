"""Measure the numeral reader: real d20 photos, held-out renders per kind, mixed rendered trays, real kinds.

Each figure is printed as one JSON line (BENCHMARKS.md ``## Numerals`` quotes them):

- ``d20``: ``rsandrini-d20`` (real photos) on the held-back videos of ``splits.d20_splits``
  (``--split test``, read once per shipped model; ``val`` while developing), read by the full
  :func:`~dicetower.vision.reader.open_reader` with the numeral reader on and scored by
  ``dicetower eval``'s own code (:func:`~dicetower.vision.eval.evaluate.evaluate_folder`,
  :class:`~dicetower.vision.eval.evaluate.FolderReport`); the interval is eval's, over its photo
  groups, and the accuracy per video is listed beside it;
- ``renders``: renders of the split's seed (``--split test``: :data:`~.data.TEST_SEED`,
  never drawn in training, read once per shipped model; ``val``: :data:`~.data.VAL_SEED`,
  for choosing), one die a crop, read by :class:`~dicetower.vision.faces.numerals.NumeralReader` from
  its labelled box: right / wrong / unreadable per kind with 95 % intervals;
- ``trays``: rendered trays (the split's seed, as for renders) of mixed dice (pip d6, numeral d6,
  d10, d10t, d20; several colours; a touching pair in every other tray) read by the FrameReader
  from the detector's boxes and, separately, from the labelled boxes: kinds right among dice the
  reader read, and identities (:func:`~dicetower.vision.identity.identify`) right for dice whose
  kind and colour no other die of the tray shares;
- ``kinds``: ``lurig-kinds`` (real photos, one die each, labelled by kind only; ``splits.split_of``)
  read by the full frame reader with the numeral reader on: what each located die was read as,
  per labelled kind. A d10 should read as a d10 (its face is not labelled); a d4, d8 or d12 is a
  die the tower does not read, so any die read there is a wrong read.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ...eval.evaluate import (
    FolderReport,
    evaluate_folder,
    match_dice,
    reject_bias_p,
    reject_ratio,
    select_entries,
)
from ...eval.intervals import binomial_bounds
from ...eval.splits import background_of, d20_split, d20_splits
from ...faces.glyphs import GlyphReader
from ...faces.numerals import NumeralReader, class_names
from ...identity import identify
from ...kinds import DRAWN_KINDS, KINDS, NUMERAL_KINDS, label_of
from ...locate import DieCandidate
from ...reader import FrameReader, open_reader
from ...reading import ReadStatus
from ...synth.numerals import NUMERAL_COLOURS, NumeralStyle, TrayDie, render_crop, render_tray
from ...synth.render import TRAY_COLOURS
from .data import TEST_SEED, TRAIN_SEED, VAL_SEED

__all__ = ["eval_d20", "eval_kinds", "eval_renders", "eval_trays", "main"]


def eval_kinds(folder: Path, split: str, models: Path | None) -> dict:
    """``lurig-kinds`` photos of ``split`` read by the whole frame reader (module docstring)."""
    from ...eval.splits import split_of

    reader = open_reader(models, numerals=True)
    rows = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]
    seen: dict[str, Counter[str]] = {}
    for r in rows:
        if split_of(folder.name, r["image"]) != split:
            continue
        frame = cv2.imread(str(folder / r["image"]))
        if frame is None:
            continue
        c = seen.setdefault(r["dice"][0]["die"], Counter())
        c["photos"] += 1
        dice = reader.read(frame).dice
        c["no die found"] += not dice
        for d in dice:
            c[f"read {d.kind}" if d.status is ReadStatus.READ else f"unreadable {d.reason}"] += 1
    out: dict[str, Any] = {}
    for kind, c in sorted(seen.items()):
        read = sum(v for k, v in c.items() if k.startswith("read "))
        right = c["read d10"] if kind == "d10" else 0
        photos_read = c["photos"] - c["no die found"]
        out[kind] = {
            **dict(sorted(c.items())),
            "dice read, kind right": _rate(right, read),
            "wrong reads per photo": round((read - right) / max(photos_read, 1), 5),
        }
    return {"figure": "kinds", "dataset": "lurig-kinds (real photos)", "split": split, "per_kind": out}


def _rate(k: int, n: int) -> dict[str, float]:
    lo, hi = binomial_bounds(k, n) if n else (0.0, 1.0)
    return {"rate": round(k / n, 5) if n else 0.0, "lo": round(lo, 5), "hi": round(hi, 5)}


def eval_d20(folder: Path, split: str, models: Path | None) -> dict:
    """The held-back ``rsandrini-d20`` videos read by the whole frame reader (module docstring)."""
    entries = select_entries(folder, kinds=["d20"])
    splits = d20_splits((e.relpath, e.dice[0].face) for e in entries)
    entries = [e for e in entries if d20_split(splits, e.relpath, e.dice[0].face) == split]
    reader = open_reader(models, numerals=True)
    report = FolderReport(folder.resolve().name)
    videos: dict[str, Counter[str]] = {}
    for result in evaluate_folder(folder, reader, entries=entries):
        report.add(result)
        key = f"{background_of(result.entry.relpath)}{result.entry.dice[0].face}"
        videos.setdefault(key, Counter())[result.scored[0].outcome.value] += 1
    data = report.to_json()
    keep = ("photos", "dice", "correct", "wrong", "rejected", "missed", "accuracy", "wrong_rate", "groups")
    out = {k: data[k] for k in keep}
    out.update(
        accuracy_interval=data["accuracy_interval"],
        wrong_rate_upper=data["wrong_rate_upper"],
        false_positives=data["false_positives"],
        false_positives_read=data["false_positives_read"],
        reject_ratio=data["reject_ratio"],
        per_face={f: v["accuracy"] for f, v in data["per_face"].get("d20", {}).items()},
        per_video={v: f"{c['correct']}/{sum(c.values())}" for v, c in sorted(videos.items())},
        confusion=data["confusion"].get("d20", {}),
    )
    return {"figure": "d20", "dataset": "rsandrini-d20 (real photos)", "split": split, **out}


def _face_readers(models: Path | None) -> tuple[NumeralReader, GlyphReader | None]:
    """The numeral network and the upright-numeral reader: ``models``' where it holds them, else
    the shipped ones (the same choice as :func:`~dicetower.vision.reader.open_reader`)."""
    found = open_reader(models, numerals=True)
    assert found.numerals is not None
    return found.numerals, found.glyphs


def eval_d20_boxed(folder: Path, split: str, models: Path | None) -> dict:
    """The same held-back videos read from the die's own box: the numeral network, then with faces.

    The box is :func:`~.single_die_box.boxes_for`'s (photos where it finds none are skipped), so
    this figure is the readers' share of the d20 accuracy with the locator taken out. With an
    upright-numeral reader (``models``' or the shipped one), its top-1 and the faces the two
    give together (:func:`~dicetower.vision.faces.glyphs.with_glyph`) are counted too.
    """
    from ...faces.glyphs import with_glyph
    from ..single_die_box import boxes_for

    reader, glyphs = _face_readers(models)
    entries = select_entries(folder, kinds=["d20"])
    splits = d20_splits((e.relpath, e.dice[0].face) for e in entries)
    boxes = boxes_for(folder)
    c: Counter[str] = Counter()
    for e in entries:
        face = e.dice[0].face
        box = boxes.get(e.relpath)
        if d20_split(splits, e.relpath, face) != split or box is None:
            continue
        frame = cv2.imread(str(folder / e.relpath))
        if frame is None:
            continue
        probs = reader.probabilities(reader.crops(frame, [box]))[0]
        read = reader.decide(probs)
        top = probs.argmax()
        c["photos"] += 1
        c["kind_d20"] += read.kind == "d20"
        c["top1_face_right"] += class_names()[int(top)] == f"d20:{face}"
        c["read_right"] += read.kind == "d20" and read.face == face
        c["read_wrong"] += read.face is not None and (read.kind, read.face) != ("d20", face)
        if glyphs is not None:
            g = glyphs.read(frame, [box], ["d20"])[0]
            both = with_glyph(read, g) if read.kind == "d20" else read
            c["glyph_top1_right"] += g.best == face
            c["with_glyph_right"] += both.kind == "d20" and both.face == face
            c["with_glyph_wrong"] += both.face is not None and (both.kind, both.face) != ("d20", face)
    n = c["photos"]
    return {
        "figure": "d20-boxed",
        "dataset": "rsandrini-d20 (real photos)",
        "split": split,
        **dict(c),
        "kind_d20": _rate(c["kind_d20"], n),
        "top1_face_right": _rate(c["top1_face_right"], n),
        "read_right": _rate(c["read_right"], n),
        **(
            {
                "glyph_top1_right": _rate(c["glyph_top1_right"], n),
                "with_glyph_right": _rate(c["with_glyph_right"], n),
            }
            if glyphs is not None
            else {}
        ),
    }


def eval_renders(n_per_kind: int, models: Path | None, seed0: int = TEST_SEED) -> dict:
    """Held-out renders, one die a crop, per kind (module docstring).

    With an upright-numeral reader, a numeral kind's face is the one the two readers give
    together (:func:`~dicetower.vision.faces.glyphs.with_glyph`), as in the frame reader.
    """
    from ...faces.glyphs import with_glyph

    reader, glyphs = _face_readers(models)
    out = {}
    for ki, kind in enumerate(DRAWN_KINDS):
        crops, truth, frames = [], [], []
        for i in range(n_per_kind):
            seed = seed0 + ki * 100_000 + i
            face = KINDS[kind].faces[i % len(KINDS[kind].faces)]
            frame, box = render_crop(seed, kind, face)
            crops.append(reader.crops(frame, [box])[0])
            truth.append(face)
            frames.append((frame, box))
        reads = reader.read_crops(crops)
        if glyphs is not None:
            reads = [
                with_glyph(r, glyphs.read(f, [b], [str(r.kind)], [r.kind_confidence])[0])
                if r.kind in NUMERAL_KINDS
                else r
                for r, (f, b) in zip(reads, frames, strict=True)
            ]
        right = sum(r.kind == kind and r.face == f for r, f in zip(reads, truth, strict=True))
        unread = sum(r.face is None for r in reads)
        kind_right = sum(r.kind == kind for r in reads if r.kind is not None)
        kind_read = sum(r.kind is not None for r in reads)
        per_face: dict[str, dict[str, Any]] = {}
        for r, f in zip(reads, truth, strict=True):
            c = per_face.setdefault(str(f), {"dice": 0, "rejected": 0})
            c["dice"] += 1
            c["rejected"] += r.face is None
        for c in per_face.values():
            c["reject_rate"] = round(c["rejected"] / c["dice"], 5)
        out[kind] = {
            "n": n_per_kind,
            "right": _rate(right, n_per_kind),
            "wrong": _rate(n_per_kind - right - unread, n_per_kind),
            "unreadable": round(unread / n_per_kind, 5),
            "kind_right_of_read": _rate(kind_right, kind_read),
            # as for d6: whether rejects depend on the face (a face-biased reader biases the rolls)
            "per_face_reject_rate": {f: c["reject_rate"] for f, c in per_face.items()},
            "reject_ratio": round(reject_ratio(per_face), 3),
            "reject_bias_p": round(reject_bias_p(per_face), 3),
        }
    return {"figure": "renders", "seed": seed0, "what": "renders (not real photos)", "per_kind": out}


def _tray_dice(rng: np.random.Generator) -> list[TrayDie]:
    kinds = list(DRAWN_KINDS) + [str(k) for k in rng.choice(DRAWN_KINDS, int(rng.integers(0, 4)))]
    colours = list(NUMERAL_COLOURS)
    return [TrayDie(k, int(rng.choice(KINDS[k].faces)), str(rng.choice(colours))) for k in kinds]


def eval_trays(n: int, models: Path | None, seed0: int = TEST_SEED + 900_000) -> dict:
    """Mixed rendered trays (module docstring)."""
    detected = open_reader(models, numerals=True)
    numerals = detected.numerals
    result: dict[str, Counter[str]] = {"detector": Counter(), "labelled": Counter()}
    for t in range(n):
        rng = np.random.default_rng(seed0 + t)
        dice = _tray_dice(rng)
        # the tower's config names its tray's colour; white balance needs it on a coloured tray
        tray = TRAY_COLOURS[t % len(TRAY_COLOURS)]
        frame, ref, labels = render_tray(seed0 + t, dice, style=NumeralStyle(tray=tray), touching=t % 2 == 0)
        boxes = [d.box for d in labels]
        truth_kind = [d.die for d in labels]

        def labelled(frame_: np.ndarray, _ref: object, _tray: object, boxes_: list = boxes) -> list:
            return [DieCandidate(box=tuple(b)) for b in boxes_]

        for mode, reader in (
            ("detector", detected),
            ("labelled", FrameReader(locate=labelled, numerals=numerals, glyphs=detected.glyphs)),
        ):
            c = result[mode]
            reading = reader.read(frame, ref)
            matched, extra = match_dice(boxes, [r.centres for r in reading.dice])
            c["extra"] += len(extra)
            # a numeral d6 reads as a d6: a d6 and a d6n of one colour are told apart by place only
            keyed = Counter((label_of(d.kind), d.colour) for d in dice)
            dice_set = {
                f"die{i}": (labels[i].die, d.colour)
                for i, d in enumerate(dice)
                if keyed[(label_of(d.kind), d.colour)] == 1
            }
            read_dice = list(reading.dice)
            ids = identify(read_dice, dice_set, frame, ref, tray_colour=tray)
            for i, j in enumerate(matched):
                c["dice"] += 1
                if j is None:
                    c["missed"] += 1
                    continue
                r = read_dice[j]
                if r.status is not ReadStatus.READ:
                    c["unreadable"] += 1
                    continue
                c["read"] += 1
                c["kind_right"] += r.kind == truth_kind[i]
                c["face_right"] += r.kind == truth_kind[i] and r.face == labels[i].face
                if f"die{i}" in dice_set:
                    c["id_dice"] += 1
                    c["id_right"] += ids[j].name == f"die{i}"
    out = {}
    for mode, c in result.items():
        out[mode] = {
            **dict(c),
            "kinds_right_of_read": _rate(c["kind_right"], c["read"]),
            "faces_right_of_dice": _rate(c["face_right"], c["dice"]),
            "identities_right": _rate(c["id_right"], c["id_dice"]),
        }
    return {"figure": "trays", "trays": n, "what": "renders (not real photos)", **out}


#: The renderer seeds behind each split's renders and trays.
_RENDER_SEEDS = {"train": TRAIN_SEED, "val": VAL_SEED, "test": TEST_SEED}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("what", choices=("d20", "d20-boxed", "renders", "trays", "kinds"))
    p.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    p.add_argument("--split", choices=("train", "val", "test"), default="val")
    p.add_argument(
        "--models",
        type=Path,
        default=None,
        help="folder of candidate numeral_reader.onnx and/or detector.onnx (+ .json; default shipped)",
    )
    p.add_argument("-n", type=int, default=400, help="renders per kind / trays")
    a = p.parse_args(argv)
    if a.what == "d20":
        out = eval_d20(a.datasets / "rsandrini-d20", a.split, a.models)
    elif a.what == "d20-boxed":
        out = eval_d20_boxed(a.datasets / "rsandrini-d20", a.split, a.models)
    elif a.what == "renders":
        out = eval_renders(a.n, a.models, _RENDER_SEEDS[a.split])
    elif a.what == "kinds":
        out = eval_kinds(a.datasets / "lurig-kinds", a.split, a.models)
    else:
        out = eval_trays(a.n, a.models, _RENDER_SEEDS[a.split] + 900_000)
    out = {**out, "split": a.split}
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
