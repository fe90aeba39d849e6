"""The face reader's training crops and data: augmentation, calibration crops, the trainer's option checks."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from drawn_dice import draw_die

#: Augment overrides that switch off every random distortion but the turn (and scale, shift):
#: tests compare crops that must differ only in what they test.
NO_DISTORTION = dict.fromkeys(
    ("p_cut", "p_perm", "p_mono", "p_small", "p_heavy", "p_light", "p_invert", "p_noise"), 0.0
)


def _disc_contexts(n: int) -> np.ndarray:
    from dicetower.vision.training.d6.data import CTX, CTX_FACTOR

    ctx = np.zeros((n, CTX, CTX, 3), np.uint8)
    for c in ctx:
        cv2.circle(c, (CTX // 2, CTX // 2), round(CTX / CTX_FACTOR / 2), (230, 210, 250), -1, cv2.LINE_AA)
    return ctx


def test_batched_augmentation_keeps_the_die_centred_and_labels_honest() -> None:
    pytest.importorskip("torch")
    from dicetower.vision.training.d6.augment import augment_batch

    n = 600
    labels = np.tile(np.arange(7), n // 7 + 1)[:n]
    x, y = augment_batch(_disc_contexts(n), labels, np.random.default_rng(3))
    assert x.shape == (n, 4, 48, 48) and x.dtype == np.float32
    assert np.all((y == labels) | (y == 0))  # a die may become "unreadable", never another face
    dice = labels > 0
    assert 0.08 < np.mean(y[dice] == 0) < 0.3  # cut or heavily blurred dice (17 % expected)
    assert np.allclose(x[:, 0].reshape(n, -1).mean(1), 0.0, atol=1e-3)  # standardised per crop
    kept = y > 0
    centre = x[kept, 0, 20:28, 20:28].mean(axis=(1, 2))
    corners = np.stack([x[kept, 0, a : a + 4, b : b + 4].mean(axis=(1, 2)) for a in (0, 44) for b in (0, 44)])
    # The disc (the die) fills the middle of every crop whose label was kept.
    assert np.mean(np.abs(centre - corners.mean(0)) > 0.8) > 0.95
    again, y2 = augment_batch(_disc_contexts(n), labels, np.random.default_rng(3))
    assert np.array_equal(y, y2) and np.allclose(x, again, atol=1e-4)  # the seed decides it all


def test_false_alarms_are_unlabelled_proposals_the_reader_does_not_read() -> None:
    """Hard negatives: a proposal on a label is not one, nor one read as a face (a skipped die)."""
    from dicetower.vision.training.d6.data import false_alarms

    labels = [(100.0, 100.0, 40.0, 40.0)]
    boxes = [
        (104.0, 98.0, 38.0, 42.0),  # the labelled die, a little off
        (300.0, 300.0, 40.0, 40.0),  # nothing labelled there, read as "no die"
        (500.0, 100.0, 40.0, 40.0),  # nothing labelled there, but read as a 3: maybe a real die
        (131.0, 100.0, 40.0, 40.0),  # centre 31 px from the label's: more than half its side
    ]
    no_die = [0.9, 0.02, 0.02, 0.02, 0.02, 0.01, 0.01]
    a_three = [0.1, 0.0, 0.0, 0.8, 0.1, 0.0, 0.0]
    probs = np.array([a_three, no_die, a_three, no_die])
    assert false_alarms(boxes, labels, probs) == [1, 3]
    assert false_alarms([], labels, np.zeros((0, 7))) == []


@pytest.mark.parametrize(
    "bad",
    [
        *(
            ["--dataset-weight", v]
            for v in ("byler-d6", "byler-d6=x", "nosuch-d6=2", "byler-d6=0", "byler-d6=1000")
        ),
        *(
            ["--train-share", v]
            for v in ("byler-d6", "byler-d6=x", "nosuch-d6=0.5", "byler-d6=0", "byler-d6=1.5")
        ),
        ["--synth-marbled", "1.5"],
        ["--synth-marbled", "-0.1"],
        ["--synth-marbled", "0.5", "--synth", "0"],
    ],
)
def test_training_refuses_bad_options_before_any_work(bad: list[str], capsys) -> None:
    from dicetower.vision.training.d6.train import main

    with pytest.raises(SystemExit) as exc:
        main([*bad, "--work", "/nonexistent/never-created"])
    assert exc.value.code == 2
    assert bad[0] in capsys.readouterr().err


def test_thin_train_keeps_a_share_of_one_datasets_train_crops_and_nothing_else_changes() -> None:
    from dicetower.vision.training.d6.data import D6_DATASETS, thin_train

    byler, epanemu = D6_DATASETS.index("byler-d6"), D6_DATASETS.index("epanemu-dice3")
    split = np.array([0] * 100 + [1] * 20 + [2] * 20 + [0] * 50)
    ds = np.array([byler] * 140 + [epanemu] * 50)
    data = {"split": split, "ds": ds, "face": np.arange(190) % 7, "ctx": np.arange(190)}
    half = thin_train(data, {"byler-d6": 0.5}, seed=3)
    assert ((half["ds"] == byler) & (half["split"] == 0)).sum() == 50
    assert ((half["ds"] == byler) & (half["split"] > 0)).sum() == 40  # val and test untouched
    assert (half["ds"] == epanemu).sum() == 50
    kept = set(half["ctx"].tolist())
    assert np.array_equal(half["face"], np.array(sorted(kept)) % 7)  # rows stay whole
    assert set(thin_train(data, {"byler-d6": 0.5}, seed=4)["ctx"].tolist()) != kept  # seeded choice
    assert len(thin_train(data, {"byler-d6": 1.0}, seed=3)["face"]) == 190


def test_augment_overrides_change_only_the_fields_named() -> None:
    from dicetower.vision.training.d6.augment import Augment, parse_augment

    aug = parse_augment(["p_small=0.1", "small=30,40", "scale=0.9,1.2"])
    assert (aug.p_small, aug.small, aug.scale) == (0.1, (30, 40), (0.9, 1.2))
    untouched = {"p_small", "small", "scale"}
    default = Augment()
    assert all(getattr(aug, f) == getattr(default, f) for f in vars(default) if f not in untouched)
    assert parse_augment([]) == default
    assert parse_augment(["small=30,30"]).small == (30, 31)  # a non-empty range for rng.integers


@pytest.mark.parametrize(
    "bad",
    [
        "p_small",
        "nosuch=1",
        "p_small=x",
        "p_small=1.5",
        "shift=0.9",
        "scale=1.2",
        "scale=1.2,0.9",
        "small=2,40",
        "motion=2,30",
        "motion=0,5",
    ],
)
def test_training_refuses_a_bad_augment_override_before_any_work(bad: str, capsys) -> None:
    from dicetower.vision.training.d6.train import main

    with pytest.raises(SystemExit) as exc:
        main(["--augment", bad, "--work", "/nonexistent/never-created"])
    assert exc.value.code == 2
    assert "--augment" in capsys.readouterr().err


def _drawn_contexts() -> np.ndarray:
    """Context squares as the reader cache holds them: a die (of any turn) 1/2.5 of the side."""
    from dicetower.vision.training.d6.data import CTX, CTX_FACTOR

    return np.stack(
        [
            draw_die(1 + i % 6, float(angle), side=round(CTX / CTX_FACTOR), canvas=CTX)[0]
            for i, angle in enumerate(np.linspace(0.0, 85.0, 12))
        ]
    )


def test_motion_kernels_smear_along_their_angle_and_keep_brightness() -> None:
    """A smear is a line of the asked length and direction whose weights sum to one."""
    from dicetower.vision.training.d6.augment import motion_kernels

    lengths, angles = np.array([2.0, 9.0, 9.0, 6.5]), np.array([0.0, 0.0, np.pi / 2, np.pi / 4])
    k = motion_kernels(lengths, angles)
    assert k.shape[1] == k.shape[2] and k.shape[1] % 2 == 1
    assert np.allclose(k.sum(axis=(1, 2)), 1.0, atol=1e-5)
    ys, xs = np.mgrid[: k.shape[1], : k.shape[2]]
    c = k.shape[1] // 2
    for kern, length, angle in zip(k, lengths, angles, strict=True):
        # Spread along the angle matches the length (a uniform line's std is L / sqrt(12));
        # across it there is only the splatting's sub-pixel width.
        along = (xs - c) * np.cos(angle) + (ys - c) * np.sin(angle)
        across = -(xs - c) * np.sin(angle) + (ys - c) * np.cos(angle)
        assert abs(np.sqrt((kern * along**2).sum()) - length / np.sqrt(12)) < 0.35
        assert np.sqrt((kern * across**2).sum()) < 0.45
    assert np.allclose(k[1], k[2].T, atol=1e-6)  # a quarter turn of the angle turns the kernel


def test_motion_blur_is_off_by_default_and_smears_when_asked() -> None:
    """p_motion 0 leaves a recipe's crops bit for bit as without the field; p_motion 1 smears every crop."""
    pytest.importorskip("torch")
    from dicetower.vision.training.d6.augment import Augment, augment_batch

    ctx = _drawn_contexts()
    labels = np.ones(len(ctx), np.int64)

    def crops(p_motion: float | None) -> tuple[np.ndarray, np.ndarray]:
        extra = {} if p_motion is None else {"p_motion": p_motion}
        return augment_batch(ctx, labels, np.random.default_rng(7), Augment(**NO_DISTORTION, **extra))

    plain, _ = crops(None)
    again, _ = crops(0.0)
    assert np.array_equal(plain, again)
    moved, lab = crops(1.0)
    assert np.array_equal(lab, labels)  # a smeared face is still that face

    # Same crops, smeared: edges soften, so every crop's gradient energy drops.
    def energy(x: np.ndarray) -> np.ndarray:
        return (np.diff(x[:, 0], axis=1) ** 2).mean((1, 2)) + (np.diff(x[:, 0], axis=2) ** 2).mean((1, 2))

    assert np.all(energy(moved) < energy(plain))


def _top_lit_contexts(n: int = 64) -> np.ndarray:
    """Context squares whose upper half is bright and lower half dark: where "up" is, is plain."""
    from dicetower.vision.training.d6.data import CTX

    ctx = np.full((n, CTX, CTX, 3), 40, np.uint8)
    ctx[:, : CTX // 2] = 220
    return ctx


def _up_is_up(crops: np.ndarray) -> np.ndarray:
    """For crops ``(N, H, W)`` (or ``N, H, W, 3``): whether the top rows are brighter than the bottom."""
    g = crops if crops.ndim == 3 else crops.mean(axis=-1)
    rows = g.shape[1] // 4
    return g[:, :rows].mean(axis=(1, 2)) > g[:, -rows:].mean(axis=(1, 2))


def test_oblique_training_crops_keep_up_up_and_the_others_turn_every_way() -> None:
    """augment_batch's max_turn: a top face is the upper face of an oblique photo, keep it there."""
    pytest.importorskip("torch")
    from dicetower.vision.training.d6.augment import Augment, augment_batch

    ctx = _top_lit_contexts()
    plain = Augment(**NO_DISTORTION)
    ones = np.ones(len(ctx), np.int64)
    limited, _ = augment_batch(ctx, ones, np.random.default_rng(5), plain, max_turn=np.full(len(ctx), 0.4))
    anyway, _ = augment_batch(ctx, ones, np.random.default_rng(5), plain)
    assert _up_is_up(limited[:, 0]).all()  # mirrored left-right sometimes, never upside down
    assert 0.2 < _up_is_up(anyway[:, 0]).mean() < 0.8
    # One batch can mix both: the bound is per crop.
    mixed = np.where(np.arange(len(ctx)) % 2 == 0, 0.4, np.pi)
    both, _ = augment_batch(ctx, ones, np.random.default_rng(6), plain, max_turn=mixed)
    assert _up_is_up(both[::2, 0]).all() and not _up_is_up(both[1::2, 0]).all()


def test_oblique_calibration_crops_keep_up_up() -> None:
    from dicetower.vision.training.d6.augment import jitter_crop, turn_limits
    from dicetower.vision.training.d6.data import D6_DATASETS, OBLIQUE_GROUP

    ctx = _top_lit_contexts(40)
    rng = np.random.default_rng(2)
    assert _up_is_up(np.stack([jitter_crop(c, rng, max_turn=25.0) for c in ctx])).all()
    assert not _up_is_up(np.stack([jitter_crop(c, rng) for c in ctx])).all()
    ds = np.array([0, 1, 2, 3, 4, OBLIQUE_GROUP])  # byler, epanemu, matteop65, tomitomi, synth, oblique synth
    limits = turn_limits(ds, {"epanemu-dice3": 25.0, "matteop65-d6-wood": 10.0})
    # rendered oblique dice keep their up as carefully as the most careful dataset
    assert limits.tolist() == [180.0, 25.0, 10.0, 180.0, 180.0, 10.0]
    assert turn_limits(ds, None).tolist() == [180.0] * 6
    assert D6_DATASETS[1] == "epanemu-dice3"
