"""The face reader's training loop: random crops of the train split, optionally distilled from a teacher."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...faces.pips import CHANNELS, INPUT
from .augment import Augment, augment_batch, turn_limits
from .data import D6_DATASETS, OTHER_DICE_WEIGHT, OTHER_GROUP
from .nets import load_state, make_model, torch_logits, widen_state

__all__ = ["Distill", "distill_loss", "train"]


@dataclass(frozen=True)
class Distill:
    """How a student mixes its teacher's answer with the label (:func:`distill_loss`)."""

    weight: float = 0.7  #: share of the loss that follows the teacher
    temperature: float = 2.0  #: softens both answers so the runner-up faces carry weight


def distill_loss(student: Any, teacher: Any, labels: Any, hard_loss: Any, d: Distill) -> Any:
    """``(1 - w) * hard_loss + w * T^2 * KL(teacher_T || student_T)`` (Hinton et al. 2015).

    Why distil rather than only fine-tune: the faster shapes change the function the copied
    weights compute, and the teacher's soft answer (how much a crop looks like a 5 as well as
    a 6; which crops are no die) holds what it learned about the noisy labels, so the student
    does not relearn those from scratch. ``T^2`` keeps the soft term's gradients on the
    hard term's scale whatever the temperature.
    """
    import torch.nn.functional as F

    t = d.temperature
    soft = F.kl_div(
        F.log_softmax(student / t, dim=1),
        F.log_softmax(teacher / t, dim=1),
        log_target=True,
        reduction="batchmean",
    )
    return (1.0 - d.weight) * hard_loss(student, labels) + d.weight * t * t * soft


def _label_where(teacher_logits: Any, labels: Any, mask: Any, margin: float = 12.0) -> Any:
    """The teacher's logits with the rows under ``mask`` replaced by their label (one-hot x margin).

    Why: a student distilled from the shipped reader keeps its answers on the d6 crops, but on
    crops of other dice (``--other-dice``) the teacher is the very thing being corrected (it
    reads a d20's numeral as a 1), so there the student learns the label alone (learning
    without forgetting, Li & Hoiem 2016). At the default temperature 2 a margin of 12 puts
    ~0.99 on the label.
    """
    import torch.nn.functional as F

    if not bool(mask.any()):
        return teacher_logits
    out = teacher_logits.clone()
    out[mask] = F.one_hot(labels[mask], teacher_logits.shape[1]).to(out.dtype) * margin
    return out


def _batches(n: int, bs: int, rng: np.random.Generator) -> list[np.ndarray]:
    idx = rng.permutation(n)
    return [idx[i : i + bs] for i in range(0, n, bs)]


def train(
    data: dict[str, np.ndarray],
    epochs: int,
    seed: int,
    log: Any,
    max_minutes: float,
    init: Path | None = None,
    arch: str = "v3s",
    aug: Augment | None = None,
    dataset_weight: dict[str, float] | None = None,
    teacher: Any = None,
    distill: Distill | None = None,
    oblique: dict[str, float] | None = None,
) -> Any:
    """Train on random crops of the train contexts for ``max_minutes`` (optionally from ``init``).

    ``dataset_weight`` multiplies a dataset's share of the sampled crops (by name), for
    leaning a run on the dataset the reader still underfits. ``teacher`` (a trained reader
    network) turns the run into distillation (:func:`distill_loss`): a cheaper network learns
    the teacher's whole answer on each augmented crop, not only the label. ``oblique`` maps
    datasets photographed at an angle to the largest turn their crops get (:func:`turn_limits`).
    """
    import torch

    aug = aug or Augment()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    tr = np.flatnonzero(data["split"] == 0)
    faces = data["face"][tr]
    turns = np.radians(turn_limits(data["ds"][tr], oblique)) if oblique else None
    # Balance datasets a little: tomitomi3 (easy, 840 crops) should not dominate the hard ones.
    weights = np.ones(len(tr))
    for di in np.unique(data["ds"][tr]):
        sel = data["ds"][tr] == di
        weights[sel] = 1.0 / math.sqrt(sel.sum())
        if di == OTHER_GROUP:  # other kinds of dice: only ever class 0
            weights[sel] *= OTHER_DICE_WEIGHT
        elif di >= len(D6_DATASETS):  # rendered dice: a helper, not the evidence
            weights[sel] *= 0.5
        elif dataset_weight:
            weights[sel] *= dataset_weight.get(D6_DATASETS[di], 1.0)
    weights /= weights.sum()
    per_epoch = 8_000
    model = make_model(arch)
    max_lr = 3e-3
    if init is not None:
        # Continuing a run: start from its weights with a gentler peak learning rate.
        model.load_state_dict(widen_state(load_state(Path(init), arch), model.state_dict()))
        max_lr = 1e-3
    opt = torch.optim.AdamW(model.parameters(), lr=max_lr, weight_decay=1e-4)
    lossf = torch.nn.CrossEntropyLoss(label_smoothing=0.02)
    val = np.flatnonzero(data["split"] == 1)
    val_crops = data["crop"][val]
    budget = max_minutes * 60.0
    t0 = time.time()
    # The learning rate follows whichever budget runs out first, time or epochs (warm-up, then
    # cosine to zero): a run on a busy shared machine still anneals instead of stopping
    # mid-schedule, and so does one that reaches --epochs before its minutes are spent.
    per_batch = 1.0 / math.ceil(per_epoch / 128)
    for ep in range(epochs):
        if time.time() - t0 >= budget:
            log("time budget spent")
            break
        model.train()
        pick = rng.choice(len(tr), per_epoch, p=weights)
        is_other = data["ds"][tr[pick]] == OTHER_GROUP
        xs = np.empty((per_epoch, CHANNELS, INPUT, INPUT), np.float32)
        ys = np.empty(per_epoch, np.int64)
        for j in range(0, per_epoch, 512):
            k = pick[j : j + 512]
            xs[j : j + len(k)], ys[j : j + len(k)] = augment_batch(
                data["ctx"][tr[k]],
                faces[k],
                rng,
                aug,
                max_turn=None if turns is None else turns[k],
            )
        tot, nb = 0.0, 0
        for bi, b in enumerate(_batches(per_epoch, 128, rng)):
            frac = min(max((time.time() - t0) / budget, (ep + bi * per_batch) / epochs), 1.0)
            lr = max_lr * (
                frac / 0.05 if frac < 0.05 else 0.5 * (1 + math.cos(math.pi * (frac - 0.05) / 0.95))
            )
            for grp in opt.param_groups:
                grp["lr"] = lr
            opt.zero_grad()
            xb, yb = torch.from_numpy(xs[b]), torch.from_numpy(ys[b])
            if teacher is None:
                loss = lossf(model(xb), yb)
            else:
                with torch.no_grad():
                    soft = teacher(xb)
                    soft = _label_where(soft, yb, torch.from_numpy(is_other[b]))
                loss = distill_loss(model(xb), soft, yb, lossf, distill or Distill())
            loss.backward()
            opt.step()
            tot += float(loss.detach())
            nb += 1
            if frac >= 1.0:
                break
        model.eval()
        right = torch_logits(model, val_crops).argmax(1) == data["face"][val]
        per_ds = " ".join(
            f"{D6_DATASETS[d][:6]} {right[data['ds'][val] == d].mean():.3f}"
            for d in np.unique(data["ds"][val])
            if d < len(D6_DATASETS)
        )
        log(
            f"epoch {ep + 1} loss {tot / nb:.4f} val acc {right.mean():.4f} ({per_ds}) lr {lr:.5f} "
            f"({time.time() - t0:.0f}s)"
        )
    model.eval()
    return model
