"""Weight soups of readers (vision/training/d6/soup.py; torch, training only: skips without it)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from dicetower.vision.training.d6.nets import make_model  # noqa: E402
from dicetower.vision.training.d6.soup import MAX_INGREDIENTS, main, soup  # noqa: E402


def _states(n: int, arch: str = "v3s") -> list[dict]:
    out = []
    for seed in range(n):
        torch.manual_seed(seed)
        net = make_model(arch)
        net.train()
        net(torch.randn(8, 4, 48, 48))  # one forward in train mode moves the batch-norm statistics
        out.append({k: v.clone() for k, v in net.state_dict().items()})
    return out


def test_a_soup_is_the_mean_of_every_weight_and_statistic() -> None:
    states = _states(3)
    mixed = soup(states)
    assert mixed.keys() == states[0].keys()
    for key, value in mixed.items():
        if value.dtype.is_floating_point:
            want = (states[0][key] + states[1][key] + states[2][key]) / 3
            assert torch.allclose(value, want, atol=1e-6), key
        else:  # batch counters: the first reader's
            assert torch.equal(value, states[0][key])
    assert any("running_mean" in k for k in mixed)  # the statistics were among those averaged


def test_a_soup_of_one_reader_with_itself_reads_as_that_reader() -> None:
    (state,) = _states(1)
    mixed = soup([state, state])
    a, b = make_model("v3s").eval(), make_model("v3s").eval()
    a.load_state_dict(state)
    b.load_state_dict(mixed)
    x = torch.randn(4, 4, 48, 48)
    with torch.no_grad():
        assert torch.allclose(a(x), b(x), atol=1e-5)


def test_a_soup_refuses_other_networks_and_odd_counts() -> None:
    v3s, v3 = _states(1)[0], _states(1, "v3")[0]
    with pytest.raises(ValueError, match="another network"):
        soup([v3s, v3])
    with pytest.raises(ValueError, match="2 to"):
        soup([v3s])
    with pytest.raises(ValueError, match="2 to"):
        soup([v3s] * (MAX_INGREDIENTS + 1))


def test_the_command_writes_a_soup_and_refuses_mixed_or_missing_files(tmp_path, capsys) -> None:
    paths = []
    for i, state in enumerate(_states(2)):
        paths.append(tmp_path / f"r{i}.pt")
        torch.save(state, paths[-1])
    out = tmp_path / "soup" / "mixed.pt"
    assert main(["--arch", "v3s", "--out", str(out), *map(str, paths)]) == 0
    written = torch.load(out, weights_only=True)
    assert torch.allclose(
        written["0.0.weight"], (torch.load(paths[0])["0.0.weight"] + torch.load(paths[1])["0.0.weight"]) / 2
    )
    for argv, says in (
        ([str(paths[0]), str(tmp_path / "nothing.pt")], "no such file"),
        ([str(paths[0]), str(tmp_path / "r.onnx")], "no such file"),
    ):
        with pytest.raises(SystemExit):
            main(["--arch", "v3s", "--out", str(tmp_path / "x.pt"), *argv])
        assert says in capsys.readouterr().err
    fake_onnx = tmp_path / "r.onnx"
    fake_onnx.write_bytes(b"not read: refused first")
    with pytest.raises(SystemExit):
        main(["--arch", "v3s", "--out", str(tmp_path / "x.pt"), str(paths[0]), str(fake_onnx)])
    assert "mix of .onnx and .pt" in capsys.readouterr().err
    assert not (tmp_path / "x.pt").exists()


def test_the_command_refuses_files_that_are_not_readers_of_its_arch(tmp_path, capsys) -> None:
    """Garbage, a pickled non-state and another network's states each get a clear error, no soup."""
    good = tmp_path / "good.pt"
    torch.save(_states(1)[0], good)
    garbage = tmp_path / "garbage.pt"
    garbage.write_text("not a torch file")
    a_list = tmp_path / "list.pt"
    torch.save([1, 2], a_list)
    out = tmp_path / "x.pt"
    for bad, arch, says in (
        (garbage, "v3s", "not a reader state"),
        (a_list, "v3s", "not a state dict of tensors"),
        (good, "v3", "not a v3 reader"),
    ):
        with pytest.raises(SystemExit):
            main(["--arch", arch, "--out", str(out), str(good), str(bad)])
        assert says in capsys.readouterr().err
    assert not out.exists()


def test_detector_checkpoints_make_a_detector_soup_and_nothing_else_does(tmp_path, capsys) -> None:
    from dicetower.vision.training.detector.model import build_model

    paths = []
    for seed in range(2):
        torch.manual_seed(seed)
        paths.append(tmp_path / f"det{seed}.pt")
        torch.save(build_model().state_dict(), paths[-1])
    out = tmp_path / "soup.pt"
    assert main(["--arch", "detector", "--out", str(out), *map(str, paths)]) == 0
    assert "soup of 2 detectors" in capsys.readouterr().out
    a, b, mixed = torch.load(paths[0]), torch.load(paths[1]), torch.load(out)
    key = next(k for k, v in mixed.items() if v.dtype.is_floating_point)
    assert torch.equal(mixed[key], (a[key] + b[key]) / 2)
    loaded = build_model().load_state_dict(mixed)  # a checkpoint the detector trainer can --resume
    assert not loaded.missing_keys and not loaded.unexpected_keys
    reader = tmp_path / "reader.pt"
    torch.save(_states(1)[0], reader)
    fake_onnx = tmp_path / "det.onnx"
    fake_onnx.write_bytes(b"exports are refused before they are read")
    for argv, says in (
        ([str(paths[0]), str(reader)], "not a detector"),
        ([str(fake_onnx), str(fake_onnx)], "checkpoints (.pt)"),
        ([str(paths[0]), str(paths[1])], "not a v3s reader"),
    ):
        arch = "v3s" if says.startswith("not a v3s") else "detector"
        with pytest.raises(SystemExit):
            main(["--arch", arch, "--out", str(tmp_path / "x.pt"), *argv])
        assert says in capsys.readouterr().err
    assert not (tmp_path / "x.pt").exists()
