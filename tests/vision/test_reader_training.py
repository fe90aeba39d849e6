"""The reader's training code: the faster network shapes and distillation (torch parts skip without torch)."""

from __future__ import annotations

import numpy as np
import pytest


def test_strided_shapes_start_from_v3s_weights_and_drop_its_pools() -> None:
    torch = pytest.importorskip("torch")
    from dicetower.vision.training.d6.nets import make_model

    torch.manual_seed(0)
    v3s = make_model("v3s").eval()
    x = torch.randn(5, 4, 48, 48)
    outs = {}
    for arch, pools in (("v3ss", 0), ("v3sl", 1)):
        net = make_model(arch)
        net.load_state_dict(v3s.state_dict())  # same layer indices and shapes: --init works
        net.eval()
        assert sum(isinstance(m, torch.nn.MaxPool2d) for m in net.modules()) == pools
        with torch.no_grad():
            outs[arch] = net(x)
        assert outs[arch].shape == (5, 7)
    with torch.no_grad():
        plain = v3s(x)
    # The strides really change what the copied weights compute (so a run must fine-tune them).
    assert not torch.allclose(outs["v3ss"], plain, atol=1e-3)
    assert not torch.allclose(outs["v3sl"], plain, atol=1e-3)


# torch's exporter warns about its own internals (a deprecated pytree check); not ours to fix.
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_strided_shape_exports_to_the_runtime_with_the_same_answers(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    from dicetower.vision.dnn import load_onnx
    from dicetower.vision.training.d6.nets import export, make_model

    torch.manual_seed(1)
    net = make_model("v3ss").eval()
    path = tmp_path / "d6_reader.onnx"
    export(net, path)
    x = np.random.default_rng(2).standard_normal((9, 4, 48, 48)).astype(np.float32)
    dnn = load_onnx(path)
    dnn.setInput(x)
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(np.asarray(dnn.forward()).reshape(9, 7), want, atol=1e-4)


def test_distill_loss_mixes_label_and_teacher_as_weighted() -> None:
    torch = pytest.importorskip("torch")
    from dicetower.vision.training.d6.loop import Distill, distill_loss

    torch.manual_seed(3)
    hard = torch.nn.CrossEntropyLoss()
    student, teacher = torch.randn(16, 7), torch.randn(16, 7)
    labels = torch.randint(0, 7, (16,))
    # weight 0: the label alone; weight 1 with the teacher's own answer: nothing left to learn.
    assert torch.isclose(
        distill_loss(student, teacher, labels, hard, Distill(0.0, 2.0)), hard(student, labels)
    )
    assert float(distill_loss(teacher, teacher, labels, hard, Distill(1.0, 2.0))) == pytest.approx(
        0.0, abs=1e-6
    )
    # Following the teacher lowers the soft term: a student nearer the teacher costs less.
    far = distill_loss(student, teacher, labels, hard, Distill(1.0, 2.0))
    near = distill_loss(0.5 * (student + teacher), teacher, labels, hard, Distill(1.0, 2.0))
    assert float(near) < float(far)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--distill", "1.5", "2"], "--distill"),
        (["--distill", "0.5", "0"], "--distill"),
        (["--distill", "0.5", "x"], "--distill"),
        (["--teacher", "t.pt", "--teacher-arch", "v2", "--arch", "v3ss"], "--teacher-arch"),
        (["--distill", "0.9", "2"], "--distill needs --teacher"),
        (["--synth-oblique", "100"], "--synth-oblique needs --oblique"),
        (["--synth-oblique", "-1"], "--synth-oblique is a number"),
        (["--synth-oblique", "60000"], "--synth-oblique is a number"),
        (["--synth-oblique-elevation", "50,15"], "need LO <= HI within [5.0, 90.0]"),
        (["--synth-oblique-elevation", "2,40"], "need LO <= HI within [5.0, 90.0]"),
        (["--synth-oblique-elevation", "forty"], "expected LO,HI"),
        (["--teacher", "/nonexistent/t.pt", "--arch", "v3ss"], "no such state dict"),
        (["--init", "/nonexistent/i.pt"], "no such state dict"),
    ],
)
def test_training_refuses_bad_distillation_settings_before_any_work(
    args: list[str], says: str, capsys
) -> None:
    from dicetower.vision.training.d6.train import main

    with pytest.raises(SystemExit) as exc:
        main([*args, "--work", "/nonexistent/never-created"])
    assert exc.value.code == 2
    assert says in capsys.readouterr().err


def test_widened_network_answers_as_the_narrow_one_it_starts_from() -> None:
    torch = pytest.importorskip("torch")
    from dicetower.vision.training.d6.nets import make_model, widen_state

    torch.manual_seed(4)
    narrow = make_model("v3ss")
    with torch.no_grad():  # non-trivial batch-norm statistics, as a trained net has
        for m in narrow.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    narrow.eval()
    wide = make_model("v3sw")
    fresh = {k: v.clone() for k, v in wide.state_dict().items()}
    wide.load_state_dict(widen_state(narrow.state_dict(), wide.state_dict()))
    wide.eval()
    assert wide[4][0].weight.shape[0] > narrow[4][0].weight.shape[0]  # really wider
    x = torch.randn(6, 4, 48, 48)
    with torch.no_grad():
        torch.testing.assert_close(wide(x), narrow(x), atol=1e-5, rtol=1e-5)
    # The new channels keep their fresh start (they can learn); only what reads them is zeroed.
    new_filters = wide.state_dict()["4.0.weight"][96:, :48]
    torch.testing.assert_close(new_filters, fresh["4.0.weight"][96:, :48])
    assert float(wide.state_dict()["4.0.weight"][:, 48:].abs().sum()) == 0.0


def test_widen_state_refuses_a_narrowing() -> None:
    pytest.importorskip("torch")
    from dicetower.vision.training.d6.nets import make_model, widen_state

    with pytest.raises(ValueError, match="cannot widen"):
        widen_state(make_model("v3sw").state_dict(), make_model("v3ss").state_dict())


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--oblique", "nosuch"], "unknown dataset"),
        (["--oblique", "epanemu-dice3", "--oblique-turn", "200"], "--oblique-turn"),
        (["--calibrate-only"], "--calibrate-only needs --init"),
    ],
)
def test_training_refuses_bad_oblique_settings_before_any_work(args: list[str], says: str, capsys) -> None:
    from dicetower.vision.training.d6.train import main

    with pytest.raises(SystemExit) as exc:
        main([*args, "--work", "/nonexistent/never-created"])
    assert exc.value.code == 2
    assert says in capsys.readouterr().err


def test_right_answers_are_counted_up_to_each_allowed_number_of_wrong_ones() -> None:
    from dicetower.vision.training.d6.rank import right_before_wrong

    conf = np.array([0.99, 0.98, 0.97, 0.9, 0.8, 0.7, 0.6])
    right = np.array([True, True, False, True, True, False, True])
    assert right_before_wrong(conf, right, (0, 1, 2, 4)) == [2, 4, 5, 5]
    # Order comes from the confidence, not from the input order.
    shuffled = np.array([6, 0, 3, 5, 1, 4, 2])
    assert right_before_wrong(conf[shuffled], right[shuffled], (0, 1)) == [2, 4]
    assert right_before_wrong(np.array([0.9]), np.array([False]), (0,)) == [0]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["/nonexistent/model-dir"], "no d6_reader.onnx"),
        (["--datasets", "/nonexistent/datasets"], "none of"),
    ],
)
def test_rank_reader_refuses_a_missing_model_or_dataset_folder(args: list[str], says: str, capsys) -> None:
    from dicetower.vision.training.d6.rank import main

    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    assert says in capsys.readouterr().err


def test_a_reject_rate_rejects_that_share_of_each_face_pooled_and_counts_each_dataset() -> None:
    from dicetower.vision.training.d6.rank import Answers, outcomes_at

    # Dataset "a": 10 dice per face read right at confidences 0.55 .. 1.0. Dataset "b": 10 dice
    # per face read right at 0.95 .. 1.0 and 6 confidently wrong ones (a 1 read as a 2 at 0.97).
    faces = np.repeat(np.arange(1, 7), 10)
    a = Answers(_probs(faces, np.tile(np.linspace(0.55, 1.0, 10), 6)), faces, faces)
    b_labels = np.concatenate([faces, np.ones(6, np.int64)])
    b_pred = np.concatenate([faces, np.full(6, 2)])
    b_conf = np.concatenate([np.tile(np.linspace(0.95, 1.0, 10), 6), np.full(6, 0.97)])
    b = Answers(_probs(b_pred, b_conf), b_labels, b_pred)
    thr, counts = outcomes_at({"a": a, "b": b}, 0.0)
    assert counts == {"a": (60, 0, 0), "b": (60, 6, 0)}  # r 0 takes every best guess
    assert thr[1] == pytest.approx(0.55)
    thr, counts = outcomes_at({"a": a, "b": b}, 0.5)
    # Half of each face's 20 right answers fall under its bar (pooled: the median lies between
    # 0.95 and 0.956), so of "a" only its surest die per face (1.0) is taken.
    assert thr[2] == pytest.approx(
        float(np.quantile(np.concatenate([a.probs[10:20, 2], b.probs[10:20, 2]]), 0.5))
    )
    assert counts["a"] == (6, 0, 54)
    assert counts["b"][1] == 6  # the wrong answers, surer than the bar, still pass
    # A die whose most likely class is "not a die" is never taken, whatever the thresholds.
    none = Answers(_probs(np.zeros(3, np.int64), np.full(3, 0.6)), np.array([1, 2, 3]), np.zeros(3, np.int64))
    assert outcomes_at({"a": a, "none": none}, 0.0)[1]["none"] == (0, 0, 3)


@pytest.mark.parametrize("text", ["0,x", "1.5", "-0.1", ",".join(["0.1"] * 51)])
def test_rank_reader_refuses_reject_rates_that_are_not_shares(text: str, capsys) -> None:
    from dicetower.vision.training.d6.rank import main

    with pytest.raises(SystemExit) as exc:
        main(["--reject-rates", text])
    assert exc.value.code == 2
    assert "reject rates" in capsys.readouterr().err


def _probs(pred: np.ndarray, conf: np.ndarray) -> np.ndarray:
    """Rows with ``conf`` on class ``pred`` and the rest spread evenly over the other six."""
    p = np.repeat(((1.0 - conf) / 6.0)[:, None], 7, axis=1)
    p[np.arange(len(pred)), pred] = conf
    return p


def test_thresholds_price_another_die_read_as_a_face_like_a_wrong_face() -> None:
    from dicetower.vision.faces.thresholds import MARGIN, choose_thresholds

    # 100 val dice per face, all read right, confidences evenly 0.5 .. 1.0
    faces = np.repeat(np.arange(1, 7), 100)
    conf = np.tile(np.linspace(0.5, 1.0, 100), 6)
    # 50 crops of d20s (group 9, class 0) that the net calls a 1 at p 0.52
    labels = np.concatenate([faces, np.zeros(50, np.int64)])
    probs = np.concatenate([_probs(faces, conf), _probs(np.ones(50, np.int64), np.full(50, 0.52))])
    groups = np.concatenate([np.zeros(600, np.int64), np.full(50, 9)])

    # Unpriced, nothing on the dice is wrong, so nothing is rejected and the d20s read as 1s.
    thr, stats = choose_thresholds(probs, labels, groups)
    assert thr[1] == pytest.approx(0.5 - MARGIN) and stats["reject_rate_target"] == 0.0  # just under p 0.5
    assert "9" not in stats["val_wrong_by_group"]
    # Priced, the cheapest reject rate is the first whose threshold for 1 lies above 0.52.
    thr, stats = choose_thresholds(probs, labels, groups, negative_groups=(9,))
    assert 0.52 < thr[1] < 0.53
    assert stats["val_wrong_by_group"]["9"] == 0.0 and stats["val_rejected_by_group"]["9"] == 0.0
    assert 0.04 < stats["reject_rate_target"] < 0.06
    # Out of reach under the reject cap (p 0.9 would need r ~ 0.8): rejecting dice buys nothing.
    probs[600:] = _probs(np.ones(50, np.int64), np.full(50, 0.9))
    thr, stats = choose_thresholds(probs, labels, groups, negative_groups=(9,))
    assert stats["reject_rate_target"] == 0.0 and stats["val_wrong_by_group"]["9"] == 1.0


def test_other_dice_negatives_take_every_proposal_of_non_test_photos(tmp_path) -> None:
    import json

    import cv2
    from dicetower.vision.synth.render import render_scene
    from dicetower.vision.training.d6.data import OTHER_DICE, OTHER_GROUP, build_other_dice_negatives

    folder = tmp_path / OTHER_DICE[0]
    (folder / "images").mkdir(parents=True)
    frame, _ref, labels = render_scene(3, 4)
    # numbers 0, 160 and 192 fall in the train, val and test blocks (splits.RSANDRINI_BLOCK)
    lines = []
    for n in (0, 160, 192):
        cv2.imwrite(str(folder / "images" / f"d20_color{n}.png"), frame)
        lines.append(json.dumps({"image": f"images/d20_color{n}.png", "dice": [{"die": "d20", "face": 7}]}))
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    out = tmp_path / "work" / "other_dice.npz"
    got = build_other_dice_negatives(tmp_path, out)
    assert got is not None
    per_photo = len(got["face"]) // 2
    assert per_photo >= len(labels)  # every rendered die is proposed, each one a negative here
    assert sorted(got["split"].tolist()) == [0] * per_photo + [1] * per_photo  # no test photo
    assert (got["face"] == 0).all() and (got["ds"] == OTHER_GROUP).all()
    assert got["ctx"].shape[1:] == (112, 112, 3) and got["crop"].shape[1:] == (48, 48, 3)
    # built once: a second call reads the stored arrays back
    again = build_other_dice_negatives(tmp_path / "elsewhere", out)
    assert again is not None and np.array_equal(again["split"], got["split"])


def test_other_dice_negatives_are_none_without_those_datasets(tmp_path) -> None:
    from dicetower.vision.training.d6.data import build_other_dice_negatives

    assert build_other_dice_negatives(tmp_path, tmp_path / "work" / "o.npz") is None


def test_distillation_takes_the_label_on_crops_of_other_dice() -> None:
    torch = pytest.importorskip("torch")
    from dicetower.vision.training.d6.loop import Distill, _label_where, distill_loss

    teacher = torch.tensor([[0.0, 9.0, 0, 0, 0, 0, 0], [0.0, 0, 0, 0, 0, 0, 9.0]])  # reads a 1 and a 6
    labels = torch.tensor([0, 6])  # the first crop is a d20's numeral: class 0
    mask = torch.tensor([True, False])
    soft = _label_where(teacher, labels, mask)
    assert soft.argmax(1).tolist() == [0, 6]
    assert torch.equal(soft[1], teacher[1])
    assert teacher[0].argmax() == 1  # the teacher's own logits are not edited in place
    assert _label_where(teacher, labels, torch.tensor([False, False])) is teacher
    # a student that answers class 0 on the numeral now loses less than one that copies the teacher
    lossf = torch.nn.CrossEntropyLoss()
    copies, learns = teacher.clone(), teacher.clone()
    learns[0] = torch.tensor([9.0, 0, 0, 0, 0, 0, 0])
    d = Distill()
    assert distill_loss(learns, soft, labels, lossf, d) < distill_loss(copies, soft, labels, lossf, d)


def _real_like_datasets(root):
    """A byler-like folder (two rendered photos with boxes) and a tomitomi-like one (no boxes)."""
    import cv2
    from dicetower.vision.manifest import write_manifest_line
    from dicetower.vision.synth.render import render_scene

    byler = root / "byler-d6"
    (byler / "images").mkdir(parents=True)
    dice = []
    with (byler / "manifest.jsonl").open("w", encoding="utf-8") as fh:
        for seed, name in ((3, "a.png"), (4, "b1.png")):  # split_of: test, val
            frame, _ref, labels = render_scene(seed, 4)
            cv2.imwrite(str(byler / "images" / name), frame)
            labels = [d for d in labels if not d.cocked]
            write_manifest_line(fh, f"images/{name}", labels)
            dice += labels
    tomi = root / "tomitomi3-gray-d6"
    (tomi / "images").mkdir(parents=True)
    frame, _ref, _labels = render_scene(5, 1)
    cv2.imwrite(str(tomi / "images" / "3_0001.png"), cv2.resize(frame, (128, 128)))
    line = '{"image": "images/3_0001.png", "dice": [{"die": "d6", "face": 3}]}\n'
    (tomi / "manifest.jsonl").write_text(line, encoding="utf-8")
    return dice


def test_cache_cuts_every_labelled_die_and_two_backgrounds_a_boxed_photo(tmp_path) -> None:
    from dicetower.vision.training.d6.data import D6_DATASETS, build_cache

    dice = _real_like_datasets(tmp_path / "datasets")
    got = build_cache(tmp_path / "datasets", tmp_path / "work" / "cache.npz")
    byler = got["ds"] == D6_DATASETS.index("byler-d6")
    tomi = got["ds"] == D6_DATASETS.index("tomitomi3-gray-d6")
    faces = got["face"][byler]
    assert sorted(faces[faces > 0].tolist()) == sorted(d.face for d in dice)
    assert (faces == 0).sum() == 2 * 2  # two background squares per photo with boxes
    assert sorted(set(got["split"][byler].tolist())) == [1, 2]  # val and test photos, as split_of says
    assert got["face"][tomi].tolist() == [3] and got["split"][tomi].tolist() == [0]  # no background cut
    assert got["ctx"].shape[1:] == (112, 112, 3) and got["crop"].shape[1:] == (48, 48, 3)


# torch's exporter warns about its own internals (a deprecated pytree check); not ours to fix.
@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("arch", ["v3s", "v3sw"])
def test_a_state_read_back_from_the_exported_file_answers_as_the_trained_net(tmp_path, arch: str) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    from dicetower.vision.training.d6.nets import export, load_state, make_model

    torch.manual_seed(4)
    net = make_model(arch)
    # Batch norms with statistics of their own, so folding them into the convolutions matters.
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.3, 0.3)
    net.eval()
    path = tmp_path / "d6_reader.onnx"
    export(net, path)
    back = make_model(arch)
    back.load_state_dict(load_state(path, arch))
    back.eval()
    x = torch.randn(6, 4, 48, 48)
    with torch.no_grad():
        torch.testing.assert_close(back(x), net(x), atol=1e-4, rtol=1e-4)
    wrong = "v3" if arch != "v3" else "v3s"
    with pytest.raises(ValueError, match=r"d6_reader\.onnx"):
        load_state(path, wrong)


def test_training_refuses_an_exported_file_of_another_network_before_any_work(tmp_path, capsys) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from pathlib import Path

    from dicetower.vision.training.d6.train import main

    shipped = Path(__file__).parents[2] / "vision" / "models" / "d6_reader.onnx"  # a v3s
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a network")
    for args, says in (
        (["--init", str(shipped), "--arch", "v3"], "--init"),
        (["--init", str(broken), "--arch", "v3s"], "not a readable ONNX file"),
        (["--teacher", str(shipped), "--teacher-arch", "v3sw"], "--teacher"),
    ):
        with pytest.raises(SystemExit) as exc:
            main([*args, "--work", str(tmp_path / "never-created")])
        assert exc.value.code == 2
        assert says in capsys.readouterr().err
        assert not (tmp_path / "never-created").exists()


def test_the_cache_learns_the_corrected_label_and_each_errata_list_has_its_own_cache(tmp_path) -> None:
    import json

    from dicetower.vision.manifest import read_manifest
    from dicetower.vision.training.d6.data import D6_DATASETS, build_cache, cache_name

    _real_like_datasets(tmp_path / "datasets")
    entry = next(iter(read_manifest(tmp_path / "datasets" / "byler-d6")))
    label = entry.dice[0].face
    fix = {"image": entry.relpath, "die": 0, "label": label, "face": 7 - label, "why": "the photo shows it"}
    errata = tmp_path / "errata"
    errata.mkdir()
    (errata / "byler-d6.jsonl").write_text(json.dumps(fix) + "\n")

    plain = build_cache(tmp_path / "datasets", tmp_path / "work" / cache_name(None))
    fixed = build_cache(tmp_path / "datasets", tmp_path / "work" / cache_name(errata), errata_dir=errata)
    byler = D6_DATASETS.index("byler-d6")
    faces = [sorted(c["face"][(c["ds"] == byler) & (c["face"] > 0)].tolist()) for c in (plain, fixed)]
    assert len(faces[0]) == len(faces[1]) and faces[0] != faces[1]
    assert faces[1].count(7 - label) == faces[0].count(7 - label) + 1
    before = cache_name(errata)
    (errata / "byler-d6.jsonl").write_text(json.dumps({**fix, "face": None}) + "\n")  # now: cocked
    assert cache_name(errata) not in (before, "cache.npz")
    cocked = build_cache(tmp_path / "datasets", tmp_path / "work" / cache_name(errata), errata_dir=errata)
    assert ((cocked["ds"] == byler) & (cocked["face"] > 0)).sum() == len(faces[0]) - 1  # no top face to learn


@pytest.mark.parametrize(("make", "says"), [(False, "no such folder"), (True, "bad errata line")])
def test_training_refuses_unusable_errata_before_any_work(tmp_path, make: bool, says: str, capsys) -> None:
    from dicetower.vision.training.d6.train import main

    errata = tmp_path / "errata"
    if make:
        errata.mkdir()
        (errata / "byler-d6.jsonl").write_text("{not json\n")
    with pytest.raises(SystemExit) as exc:
        main(["--errata", str(errata), "--work", "/nonexistent/never-created"])
    assert exc.value.code == 2
    assert says in capsys.readouterr().err


def test_oblique_cache_holds_labelled_contexts_of_rendered_dice_and_is_reused(tmp_path) -> None:
    from dicetower.vision.faces.pips import INPUT
    from dicetower.vision.training.d6.data import CTX, OBLIQUE_GROUP, build_oblique_cache

    out = tmp_path / "oblique.npz"
    data = build_oblique_cache(out, 12, seed=3)
    assert data is not None and out.is_file()
    assert data["ctx"].shape == (12, CTX, CTX, 3) and data["crop"].shape[0] == 12
    assert data["crop"].shape[1:] == (INPUT, INPUT, 3)  # cut as the runtime cuts a die
    assert set(data["face"].tolist()) <= set(range(1, 7)) and len(set(data["face"].tolist())) > 2
    assert (data["split"] == 0).all() and (data["ds"] == OBLIQUE_GROUP).all()  # train only, own group
    # The die sits in the middle of its context: the centre differs from the corners (the table).
    centre = data["ctx"][:, CTX // 2 - 8 : CTX // 2 + 8, CTX // 2 - 8 : CTX // 2 + 8].astype(float)
    corners = data["ctx"][:, :8, :8].astype(float)
    assert float(np.abs(centre.mean((1, 2)) - corners.mean((1, 2))).sum(axis=1).mean()) > 10
    again = build_oblique_cache(out, 999, seed=99)  # the cache stands: built once, read after
    assert again is not None and np.array_equal(again["ctx"], data["ctx"])
    low = build_oblique_cache(tmp_path / "low.npz", 12, seed=3, elevation=(15.0, 20.0))
    assert low is not None and not np.array_equal(low["ctx"], data["ctx"])  # the camera's range is used
