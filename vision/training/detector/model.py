"""The detector's network (torch, training only), its loss, and its ONNX file in both directions.

torch is imported inside each function: the tower runs the exported ONNX file through
``cv2.dnn`` and never imports torch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from dicetower.vision.detector import INPUT_SIZE
from dicetower.vision.training.onnx_weights import unfolded_state

from .data import MODEL_PATH

__all__ = ["build_model", "centre_loss", "export_onnx", "state_from_onnx"]


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


def centre_loss(out, heat, reg, mask):
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
