"""The d6 face reader and the frame reader: synthetic dice drawn here, and real labelled photos."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.locate import DieCandidate
from dicetower.vision.pips import D6Reader, ReaderModelError, blur_score, count_pips, crop_die
from dicetower.vision.reader import FrameReader
from dicetower.vision.reading import ReadStatus, UnreadableReason

DATASETS = Path(__file__).parents[2] / ".." / "shared" / "datasets"
MODELS = Path(__file__).parents[2] / "vision" / "models"

#: Pip centres on a unit face, per face value (the standard layout).
_LAYOUT = {
    1: [(0.5, 0.5)],
    2: [(0.25, 0.25), (0.75, 0.75)],
    3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
    4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
    5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)],
    6: [(0.25, 0.22), (0.75, 0.22), (0.25, 0.5), (0.75, 0.5), (0.25, 0.78), (0.75, 0.78)],
}


def draw_die(
    face: int,
    angle: float = 0.0,
    *,
    side: int = 60,
    body: tuple[int, int, int] = (235, 235, 235),
    pip: tuple[int, int, int] = (20, 20, 20),
    background: tuple[int, int, int] = (120, 120, 120),
    canvas: int = 160,
) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """A BGR frame with one top-down die (rounded square, ``face`` pips) rotated by ``angle``."""
    img = np.full((canvas, canvas, 3), background, np.uint8)
    c = canvas / 2
    rot = math.radians(angle)

    def to_frame(u: float, v: float) -> tuple[float, float]:
        x, y = (u - 0.5) * side, (v - 0.5) * side
        return (c + x * math.cos(rot) - y * math.sin(rot), c + x * math.sin(rot) + y * math.cos(rot))

    corners = np.array([to_frame(u, v) for u, v in ((0, 0), (1, 0), (1, 1), (0, 1))], np.float32)
    cv2.fillPoly(img, [np.round(corners * 16).astype(np.int32)], body, cv2.LINE_AA, shift=4)
    for u, v in _LAYOUT[face]:
        x, y = to_frame(u, v)
        cv2.circle(
            img, (round(x * 16), round(y * 16)), round(side * 0.09 * 16), pip, -1, cv2.LINE_AA, shift=4
        )
    img = cv2.GaussianBlur(img, (3, 3), 0.7)
    x0, y0 = corners.min(axis=0)
    x1, y1 = corners.max(axis=0)
    return img, (float(x0), float(y0), float(x1 - x0), float(y1 - y0))


def _fixed(*cands: DieCandidate):
    return lambda frame, reference, tray: list(cands)


def _read_all(reader: D6Reader, angles: tuple[float, ...], **style: object) -> list[tuple[int, int | None]]:
    out = []
    for face in range(1, 7):
        for angle in angles:
            frame, box = draw_die(face, angle, **style)  # type: ignore[arg-type]
            (r,) = reader.read_crops([crop_die(frame, box)])
            out.append((face, r.face))
    return out


#: Augment overrides that switch off every random distortion but the turn (and scale, shift):
#: tests compare crops that must differ only in what they test.
NO_DISTORTION = dict.fromkeys(
    ("p_cut", "p_perm", "p_mono", "p_small", "p_heavy", "p_light", "p_invert", "p_noise"), 0.0
)

RED = {"body": (40, 40, 200), "pip": (240, 240, 240), "background": (200, 200, 200)}


#: Sharp-cornered, flat drawn dice (``draw_die``) are cruder than any real die: the shipped reader
#: (session 19's soup, as session 17's R4b before it) rejects more of the white-on-red ones, and
#: reads a white-on-red 5 lying square to its crop as a 4. Rounded, bevelled dice of the same
#: colours (the synthetic renderer's, ``test_rendered_dice_square_or_turned_are_never_misread``)
#: it reads right at every size and turn.
#: Kept as strict xfails so the day a reader fixes them the run says so.
DRAWN_WHITE_ON_RED = pytest.param(
    RED,
    marks=pytest.mark.xfail(
        strict=True,
        reason="R4b (shipped in session 18) and the soup shipped since session 19 each reject 7 of these "
        "24 drawn white-on-red dice (every 5, p 0.76-0.95 under face 5's threshold, and three 3s); "
        "they misread none",
    ),
    id="white-on-red",
)


@pytest.mark.parametrize("style", [{}, RED], ids=["black-on-white", "white-on-red"])
def test_synthetic_rotated_dice_are_never_misread(reader: D6Reader, style: dict) -> None:
    reads = _read_all(reader, (27.0, 61.0, 200.0, 295.0), **style)
    assert [(f, got) for f, got in reads if got is not None and got != f] == []


@pytest.mark.parametrize("style", [{}, DRAWN_WHITE_ON_RED], ids=["black-on-white", "white-on-red"])
def test_synthetic_rotated_dice_are_mostly_read(reader: D6Reader, style: dict) -> None:
    reads = _read_all(reader, (27.0, 61.0, 200.0, 295.0), **style)
    assert sum(got == f for f, got in reads) >= 0.75 * len(reads)


@pytest.mark.parametrize("style", [{}, DRAWN_WHITE_ON_RED], ids=["black-on-white", "white-on-red"])
def test_synthetic_rotated_dice_show_every_face_readable(reader: D6Reader, style: dict) -> None:
    reads = _read_all(reader, (27.0, 61.0, 200.0, 295.0), **style)
    assert {got for _f, got in reads} - {None} == set(range(1, 7))


@pytest.mark.parametrize(
    "style",
    [
        {},
        pytest.param(
            RED,
            marks=pytest.mark.xfail(
                strict=True,
                reason="R4b (shipped in session 18) and the soup shipped since session 19 read this "
                "sharp-cornered drawn white-on-red 5, square to its 60 px crop, as a 4 (p 0.96, 0.95); "
                "the renderer's rounded dice they read right",
            ),
        ),
    ],
    ids=["black-on-white", "white-on-red"],
)
def test_synthetic_axis_aligned_dice_are_never_misread(reader: D6Reader, style: dict) -> None:
    reads = _read_all(reader, (0.0,), **style)
    assert [(f, got) for f, got in reads if got is not None and got != f] == []


@pytest.mark.parametrize(
    "body, pip, background",
    [((235, 235, 235), (20, 20, 20), (120, 120, 120)), (RED["body"], RED["pip"], RED["background"])],
    ids=["black-on-white", "white-on-red"],
)
def test_rendered_dice_square_or_turned_are_never_misread(
    reader: D6Reader, body: tuple, pip: tuple, background: tuple
) -> None:
    """Dice drawn as the synthetic renderer draws them (rounded, bevelled), every face, 30-90 px,
    square to the frame or turned: none read as another face, nearly all read."""
    from dicetower.vision.synth.render import draw_face

    reads = []
    for face in range(1, 7):
        for side in (30, 45, 60, 90):
            patch, mask = draw_face(face, side, body, pip)
            canvas = np.full((3 * side, 3 * side, 3), background, np.uint8)
            canvas[side : 2 * side, side : 2 * side][mask > 0] = patch[mask > 0]
            for angle in (0.0, 27.0, 61.0):
                m = cv2.getRotationMatrix2D((1.5 * side, 1.5 * side), angle, 1.0)
                frame = cv2.warpAffine(canvas, m, canvas.shape[1::-1], borderValue=background)
                frame = cv2.GaussianBlur(frame, (3, 3), 0.7)
                a = math.radians(angle)
                ext = side * (abs(math.cos(a)) + abs(math.sin(a)))
                box = (1.5 * side - ext / 2, 1.5 * side - ext / 2, ext, ext)
                (r,) = reader.read_crops([crop_die(frame, box)])
                reads.append((face, r.face))
    assert [(f, got) for f, got in reads if got is not None and got != f] == []
    assert sum(got == f for f, got in reads) >= 0.95 * len(reads)


def test_blank_crop_is_unreadable(reader: D6Reader) -> None:
    frame = np.full((120, 120, 3), 128, np.uint8)
    (r,) = reader.read_crops([crop_die(frame, (30, 30, 60, 60))])
    assert r.face is None
    assert r.reason in (UnreadableReason.LOW_CONFIDENCE, UnreadableReason.BLURRED)


def test_heavily_blurred_die_is_unreadable(reader: D6Reader) -> None:
    frame, box = draw_die(5, 10.0)
    blurred = cv2.GaussianBlur(frame, (0, 0), 12)
    (r,) = reader.read_crops([crop_die(blurred, box)])
    assert r.face is None
    assert blur_score(crop_die(blurred, box)) < blur_score(crop_die(frame, box))


def test_confidence_is_a_probability(reader: D6Reader) -> None:
    frame, box = draw_die(3, 40.0)
    probs = reader.probabilities([crop_die(frame, box)])
    assert probs.shape == (1, 7)
    assert np.isclose(probs.sum(), 1.0, atol=1e-5)
    (r,) = reader.read_crops([crop_die(frame, box)])
    assert 0.0 < r.confidence <= 1.0


def test_extra_looks_on_their_own_network_copy_change_nothing(reader: D6Reader) -> None:
    """The second network (kept for its own batch shape) is the same model as the first."""
    from dicetower.vision.pips import looked_twice, to_blob

    crops = [crop_die(*draw_die(face, 17.0 * face, side=40 + 3 * face)) for face in range(1, 7)]
    crops += [np.full((48, 48, 3), 120, np.uint8), cv2.GaussianBlur(crops[4], (0, 0), 3.0)]
    blob = to_blob(crops, reader.channels)
    one_net = looked_twice(reader._forward, blob, 2, 1.01)  # every crop gets its extra look
    two_nets = looked_twice(reader._forward, blob, 2, 1.01, reader._forward_again)
    assert np.allclose(one_net, two_nets, atol=1e-5)
    # And the batch sizes a frame alternates between leave the first network's answers alone.
    first = reader._forward(blob)
    reader._forward_again(blob[:3])
    assert np.allclose(reader._forward(blob), first, atol=1e-5)


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReaderModelError, match="missing"):
        D6Reader(tmp_path)


def test_model_metadata_is_sane() -> None:
    meta_path = MODELS / "d6_reader.json"
    if not meta_path.is_file():
        pytest.skip("face-reader model not built")
    meta = json.loads(meta_path.read_text())
    assert meta["input"] == 48
    assert 0.05 < meta["temperature"] < 20
    assert set(meta["thresholds"]) == {str(f) for f in range(1, 7)}
    assert all(0.0 < t < 1.0 for t in meta["thresholds"].values())
    assert (MODELS / "d6_reader.onnx").stat().st_size < 2_000_000


@pytest.mark.parametrize("face", range(1, 7))
def test_classical_pip_count_on_a_square_die(face: int) -> None:
    frame, box = draw_die(face, 0.0, side=70)
    assert count_pips(crop_die(frame, box)) == face


def test_frame_reader_composes_locate_read_colour(reader: D6Reader) -> None:
    left, box_l = draw_die(6, 20.0, body=(40, 40, 200), pip=(240, 240, 240))
    right, box_r = draw_die(2, 70.0)
    frame = np.hstack([left, right])
    box_r = (box_r[0] + left.shape[1], *box_r[1:])
    fr = FrameReader(locate=_fixed(DieCandidate(box_l), DieCandidate(box_r)))
    reading = fr.read(frame)
    assert reading.faces == [6, 2]
    assert [d.colour for d in reading.dice] == ["red", "white"]
    assert (reading.width, reading.height) == (frame.shape[1], frame.shape[0])
    assert {"locate", "read", "colour"} <= set(reading.timings_ms)
    assert reading.to_json()["dice"][0]["face"] == 6


def test_frame_reader_reasons_for_boxes_it_cannot_or_would_not_read(reader: D6Reader) -> None:
    frame, box = draw_die(4, 30.0)
    x, y, w, h = box
    blank = (5.0, 5.0, 40.0, 40.0)  # plain background: nothing to read
    cands = (
        DieCandidate((10, 10, 6, 6)),  # a speck
        DieCandidate((x, y, w * 0.4, h), cut_off=True),  # clipped by the edge to a sliver
        DieCandidate(box, cut_off=True),  # at the edge but whole: read
        DieCandidate(box, touching=True),  # split from its neighbour: read
        DieCandidate(blank, touching=True),  # not read, and touching says why
        DieCandidate(box),
    )
    keep_all = FrameReader(locate=_fixed(*cands))
    keep_all.not_a_die_drop = 1.01  # report every candidate, even sure non-dice
    reading = keep_all.read(frame)
    assert [d.reason for d in reading.dice] == [
        UnreadableReason.TOO_SMALL,
        UnreadableReason.CUT_OFF,
        None,
        None,
        UnreadableReason.TOUCHING,
        None,
    ]
    assert [d.face for d in reading.dice] == [None, None, 4, 4, None, 4]
    assert reading.dice[0].status is ReadStatus.UNREADABLE
    assert len(reading.unreadable) == 3


def test_sure_non_dice_are_dropped_not_reported_unreadable(reader: D6Reader) -> None:
    # An unreadable die makes the tower throw again; a patch of tray the reader is sure is
    # no die must not. The real die next to it is still read.
    frame, box = draw_die(4, 30.0)
    blank = (5.0, 5.0, 40.0, 40.0)
    reading = FrameReader(locate=_fixed(DieCandidate(blank), DieCandidate(box))).read(frame)
    assert [d.face for d in reading.dice] == [4]


def test_frame_reader_on_an_empty_frame(reader: D6Reader) -> None:
    reading = FrameReader(locate=_fixed()).read(np.zeros((50, 80), np.uint8))
    assert reading.dice == ()
    assert reading.status.value == "tray_empty"


def _gt_accuracy(dataset: str, split: str, limit: int) -> tuple[float, float, int]:
    from dicetower.vision.training.eval_reader import evaluate_dataset

    r = evaluate_dataset(FrameReader(), DATASETS / dataset, split, "gt", limit)
    return r["correct"], r["wrong"], r["dice"]


# Regression floors a little under what the shipped model measures on the whole test split
# (see the reader report); the targets of the issue (99 % byler) are NOT met yet. matteop65's
# wrong-read bar is 2 %: the v2 reader (chosen on val) reads two test 6s as 4s (0.8 % of the
# split, 2 of the first 40 photos' 117 dice), where v1 read none wrong.
@pytest.mark.datasets
@pytest.mark.skipif(not DATASETS.is_dir(), reason="../shared/datasets not present")
@pytest.mark.parametrize(
    ("dataset", "floor", "max_wrong"),
    [("byler-d6", 0.70, 0.03), ("matteop65-d6-wood", 0.95, 0.02), ("tomitomi3-gray-d6", 0.97, 0.0)],
)
def test_reads_held_out_photos_with_labelled_boxes(
    reader: D6Reader, dataset: str, floor: float, max_wrong: float
) -> None:
    correct, wrong, n = _gt_accuracy(dataset, "test", 40)
    assert n >= 30
    assert correct >= floor
    assert wrong <= max_wrong


def _disc_contexts(n: int) -> np.ndarray:
    from dicetower.vision.training.reader import CTX, CTX_FACTOR

    ctx = np.zeros((n, CTX, CTX, 3), np.uint8)
    for c in ctx:
        cv2.circle(c, (CTX // 2, CTX // 2), round(CTX / CTX_FACTOR / 2), (230, 210, 250), -1, cv2.LINE_AA)
    return ctx


def test_batched_augmentation_keeps_the_die_centred_and_labels_honest() -> None:
    pytest.importorskip("torch")
    from dicetower.vision.training.reader import augment_batch

    n = 600
    labels = np.tile(np.arange(7), n // 7 + 1)[:n]
    x, y = augment_batch(_disc_contexts(n), labels, np.random.default_rng(3))
    assert x.shape == (n, 1, 48, 48) and x.dtype == np.float32
    assert np.all((y == labels) | (y == 0))  # a die may become "unreadable", never another face
    dice = labels > 0
    assert 0.08 < np.mean(y[dice] == 0) < 0.3  # cut or heavily blurred dice (17 % expected)
    assert np.allclose(x.reshape(n, -1).mean(1), 0.0, atol=1e-3)  # standardised per crop
    kept = y > 0
    centre = x[kept, 0, 20:28, 20:28].mean(axis=(1, 2))
    corners = np.stack([x[kept, 0, a : a + 4, b : b + 4].mean(axis=(1, 2)) for a in (0, 44) for b in (0, 44)])
    # The disc (the die) fills the middle of every crop whose label was kept.
    assert np.mean(np.abs(centre - corners.mean(0)) > 0.8) > 0.95
    again, y2 = augment_batch(_disc_contexts(n), labels, np.random.default_rng(3))
    assert np.array_equal(y, y2) and np.allclose(x, again, atol=1e-4)  # the seed decides it all


def test_false_alarms_are_unlabelled_proposals_the_reader_does_not_read() -> None:
    """Hard negatives: a proposal on a label is not one, nor one read as a face (a skipped die)."""
    from dicetower.vision.training.reader import false_alarms

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
    from dicetower.vision.training.reader import main

    with pytest.raises(SystemExit) as exc:
        main([*bad, "--work", "/nonexistent/never-created"])
    assert exc.value.code == 2
    assert bad[0] in capsys.readouterr().err


def test_thin_train_keeps_a_share_of_one_datasets_train_crops_and_nothing_else_changes() -> None:
    from dicetower.vision.training.reader import D6_DATASETS, thin_train

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
    from dicetower.vision.training.reader import Augment, parse_augment

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
    from dicetower.vision.training.reader import main

    with pytest.raises(SystemExit) as exc:
        main(["--augment", bad, "--work", "/nonexistent/never-created"])
    assert exc.value.code == 2
    assert "--augment" in capsys.readouterr().err


def _turn(crop: np.ndarray) -> float:
    from dicetower.vision.pips import die_angles

    return float(die_angles(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)[None])[0])


def _mod90(a: float) -> float:
    """Distance of an angle from the nearest quarter turn (a die looks alike every 90 degrees)."""
    return abs((a + 45.0) % 90.0 - 45.0)


@pytest.mark.parametrize("angle", [0.0, 7.0, 18.0, 33.0, 44.0, 62.0, -25.0])
def test_die_angles_finds_how_far_a_drawn_die_is_turned(angle: float) -> None:
    frame, box = draw_die(4, angle, side=50)
    turn = _turn(crop_die(frame, box))
    # draw_die turns the die by `angle` in image coordinates (y down); any quarter turn is the same die
    assert _mod90(turn - angle) < 2.0


@pytest.mark.parametrize("angle", [12.0, 30.0, 41.0, -20.0])
def test_upright_crops_turn_each_die_square_to_its_crop(angle: float) -> None:
    from dicetower.vision.pips import upright_crops

    frame, box = draw_die(5, angle, side=50, body=(40, 40, 200), pip=(240, 240, 240))
    assert _mod90(_turn(crop_die(frame, box))) > 10.0
    (crop,) = upright_crops(frame, [box])
    assert crop.shape == crop_die(frame, box).shape
    assert _mod90(_turn(crop)) < 2.0
    assert upright_crops(frame, []) == []


def _drawn_contexts() -> np.ndarray:
    """Context squares as the reader cache holds them: a die (of any turn) 1/2.5 of the side."""
    from dicetower.vision.training.reader import CTX, CTX_FACTOR

    return np.stack(
        [
            draw_die(1 + i % 6, float(angle), side=round(CTX / CTX_FACTOR), canvas=CTX)[0]
            for i, angle in enumerate(np.linspace(0.0, 85.0, 12))
        ]
    )


def test_calibration_crops_are_turned_square_as_the_runtime_turns_them() -> None:
    """jitter_crop and exact_crops (the calibration crops) must feed what pips.upright_crops feeds."""
    from dicetower.vision.training.reader import exact_crops, jitter_crop

    ctx = _drawn_contexts()
    rng = np.random.default_rng(3)
    assert max(_mod90(_turn(jitter_crop(c, rng, upright=True))) for c in ctx) < 3.0
    assert np.median([_mod90(_turn(jitter_crop(c, rng))) for c in ctx]) > 10.0
    exact = exact_crops({"ctx": ctx, "crop": ctx}, np.arange(len(ctx)), upright=True)
    assert max(_mod90(_turn(c)) for c in exact) < 3.0


def test_motion_kernels_smear_along_their_angle_and_keep_brightness() -> None:
    """A smear is a line of the asked length and direction whose weights sum to one."""
    from dicetower.vision.training.reader import motion_kernels

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
    """p_motion 0 leaves earlier recipes' crops bit for bit; p_motion 1 smears every crop."""
    pytest.importorskip("torch")
    from dicetower.vision.training.reader import Augment, augment_batch

    ctx = _drawn_contexts()
    labels = np.ones(len(ctx), np.int64)

    def crops(p_motion: float | None) -> tuple[np.ndarray, np.ndarray]:
        extra = {} if p_motion is None else {"p_motion": p_motion}
        return augment_batch(ctx, labels, np.random.default_rng(7), 4, Augment(**NO_DISTORTION, **extra))

    plain, _ = crops(None)
    again, _ = crops(0.0)
    assert np.array_equal(plain, again)
    moved, lab = crops(1.0)
    assert np.array_equal(lab, labels)  # a smeared face is still that face

    # Same crops, smeared: edges soften, so every crop's gradient energy drops.
    def energy(x: np.ndarray) -> np.ndarray:
        return (np.diff(x[:, 0], axis=1) ** 2).mean((1, 2)) + (np.diff(x[:, 0], axis=2) ** 2).mean((1, 2))

    assert np.all(energy(moved) < energy(plain))


def test_training_crops_are_turned_square_as_the_runtime_turns_them() -> None:
    """augment_batch (torch, training only) must turn its crops as pips.upright_crops does."""
    pytest.importorskip("torch")
    from dicetower.vision.pips import die_angles
    from dicetower.vision.training.reader import Augment, augment_batch

    ctx = _drawn_contexts()
    rng = np.random.default_rng(3)
    plain = Augment(**NO_DISTORTION)
    turned, _ = augment_batch(ctx, np.ones(len(ctx), np.int64), rng, 4, plain, upright=True)
    as_drawn, _ = augment_batch(ctx, np.ones(len(ctx), np.int64), rng, 4, plain)
    assert np.median([_mod90(a) for a in die_angles(turned[:, 1])]) < 2.0
    assert np.median([_mod90(a) for a in die_angles(as_drawn[:, 1])]) > 10.0


def _die_extent(crops: np.ndarray) -> np.ndarray:
    """Width of the drawn red die's upright outline over the crop's side, per crop.

    ``crops`` are BGR crops ``(N, S, S, 3)`` or the reader's planes ``(N, 4, S, S)`` (red minus
    blue marks the red body either way).
    """
    if crops.shape[-1] == 3:
        red = crops[..., 2].astype(np.float32) - crops[..., 0].astype(np.float32)
    else:
        red = crops[:, 3] - crops[:, 1]
    out = []
    for plane in red:
        cols = np.flatnonzero((plane > 0.5 * plane.max()).any(axis=0))
        out.append((cols[-1] - cols[0] + 1) / plane.shape[-1])
    return np.array(out)


def _red_contexts() -> tuple[np.ndarray, np.ndarray]:
    """Red dice lying at 0-85 degrees in their photos, as the reader cache's context squares
    (CTX_FACTOR x the labelled box), and their exact runtime crops."""
    from dicetower.vision.pips import CROP_MARGIN
    from dicetower.vision.training.reader import CTX, CTX_FACTOR

    side = round(CTX / CTX_FACTOR)
    ctx, exact = [], []
    for i, angle in enumerate(np.linspace(0.0, 85.0, 12)):
        frame, box = draw_die(1 + i % 6, float(angle), side=side, canvas=4 * side, **RED)
        x, y, w, h = box
        big = max(w, h) * CTX_FACTOR / CROP_MARGIN  # crop_die cuts CROP_MARGIN x the box it is given
        ctx.append(crop_die(frame, (x + w / 2 - big / 2, y + h / 2 - big / 2, big, big), size=CTX))
        exact.append(crop_die(frame, box))
    return np.stack(ctx), np.stack(exact)


def test_turned_training_crops_frame_the_die_as_the_runtime_frames_it() -> None:
    """--turn-geometry: whatever the turn, the die's upright outline keeps the runtime's share of the crop.

    The runtime cuts every die at CROP_MARGIN x its upright box, so a die's outline spans
    1 / CROP_MARGIN of the crop at any angle. Turning a labelled crop at random while keeping
    the label's size breaks that (a die square in its photo turned 45 degrees spills out of
    its crop); turned_side puts it back.
    """
    pytest.importorskip("torch")
    from dicetower.vision.pips import CROP_MARGIN
    from dicetower.vision.training.reader import Augment, augment_batch, photo_turns

    ctx, exact = _red_contexts()
    runtime = _die_extent(exact)
    assert np.all(np.abs(runtime - 1 / CROP_MARGIN) < 0.06)
    plain = Augment(scale=(1.0, 1.0), shift=0.0, **NO_DISTORTION)
    labels = np.ones(len(ctx), np.int64)
    turns = photo_turns(exact)
    fitted, _ = augment_batch(ctx, labels, np.random.default_rng(5), 4, plain, photo_turn=turns)
    kept, _ = augment_batch(ctx, labels, np.random.default_rng(5), 4, plain)
    assert np.max(np.abs(_die_extent(fitted) - 1 / CROP_MARGIN)) < 0.08
    assert np.max(np.abs(_die_extent(kept) - 1 / CROP_MARGIN)) > 0.15


def test_turned_calibration_crops_frame_the_die_as_the_runtime_frames_it() -> None:
    """jitter_crop (calibration, numpy only) follows the same geometry when given the photo's turn."""
    from dicetower.vision.pips import CROP_MARGIN
    from dicetower.vision.training.reader import jitter_crop, photo_turns

    ctx, exact = _red_contexts()
    turns = photo_turns(exact)
    rng = np.random.default_rng(9)
    fitted = np.stack([jitter_crop(c, rng, photo_turn=float(t)) for c, t in zip(ctx, turns, strict=True)])
    rng = np.random.default_rng(9)
    kept = np.stack([jitter_crop(c, rng) for c in ctx])
    # Replay the draws: each crop is first scaled by u in [0.9, 1.2] (an imprecise box), then
    # shifted (two draws) and turned (one); the die's share of its crop is 1 / (CROP_MARGIN u).
    rng = np.random.default_rng(9)
    u = []
    for _ in ctx:
        u.append(rng.uniform(0.9, 1.2))
        rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1), rng.uniform(0, 360)
    u = np.array(u)
    assert np.max(np.abs(_die_extent(fitted) * u - 1 / CROP_MARGIN)) < 0.1
    assert np.max(np.abs(_die_extent(kept) * u - 1 / CROP_MARGIN)) > 0.15


def test_turned_side_is_one_without_a_turn_and_grows_a_square_die_turned_45_degrees() -> None:
    from dicetower.vision.training.reader import turned_side

    assert turned_side(17.0, 0.0) == pytest.approx(1.0)
    assert turned_side(0.0, 45.0) == pytest.approx(np.sqrt(2.0))
    assert turned_side(45.0, 45.0) == pytest.approx(1 / np.sqrt(2.0))
    # a quarter turn more changes nothing
    assert turned_side(10.0, 100.0) == pytest.approx(turned_side(10.0, 10.0))


def test_reader_cuts_upright_crops_when_its_model_card_says_so(tmp_path: Path) -> None:
    from dicetower.vision.pips import upright_crops

    for name in ("d6_reader.onnx", "d6_reader.json"):
        (tmp_path / name).write_bytes((MODELS / name).read_bytes())
    meta = json.loads((tmp_path / "d6_reader.json").read_text())
    frame, box = draw_die(3, 28.0, side=50)
    for upright in (False, True):
        (tmp_path / "d6_reader.json").write_text(json.dumps({**meta, "upright": upright}))
        reader = D6Reader(tmp_path)
        (crop,) = reader.crops(frame, [box])
        expected = upright_crops(frame, [box])[0] if upright else crop_die(frame, box)
        assert np.array_equal(crop, expected)


def _die_share(crop: np.ndarray) -> float:
    """Share of a crop's side the bright drawn die spans (its upright width)."""
    cols = np.flatnonzero((cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) > 180).any(axis=0))
    return (cols[-1] - cols[0] + 1) / crop.shape[1]


def test_fitted_upright_crops_frame_a_turned_die_as_an_upright_one() -> None:
    """A box outlines a turned die upright; fit=True shrinks the crop back to the die itself."""
    from dicetower.vision.pips import turned_fit, upright_crops

    assert turned_fit(0.0) == pytest.approx(1.0) and turned_fit(45.0) == pytest.approx(math.sqrt(0.5))
    square, box0 = draw_die(2, 0.0, side=50)
    turned, box40 = draw_die(2, 40.0, side=50)
    upright_share = _die_share(crop_die(square, box0))
    (loose,) = upright_crops(turned, [box40])
    (fitted,) = upright_crops(turned, [box40], fit=True)
    assert _die_share(loose) < 0.8 * upright_share  # the turned die's outline box is larger
    assert _die_share(fitted) == pytest.approx(upright_share, abs=0.05)
    assert _mod90(_turn(fitted)) < 2.0


@pytest.mark.parametrize(
    "card", [{"upright": "yes"}, {"upright": 1}, {"fit_turned": True}, {"upright": False, "fit_turned": "no"}]
)
def test_reader_refuses_a_model_card_with_a_bad_crop_setting(tmp_path: Path, card: dict) -> None:
    for name in ("d6_reader.onnx", "d6_reader.json"):
        (tmp_path / name).write_bytes((MODELS / name).read_bytes())
    meta = json.loads((tmp_path / "d6_reader.json").read_text())
    (tmp_path / "d6_reader.json").write_text(json.dumps({**meta, **card}))
    with pytest.raises(ReaderModelError, match="upright"):
        D6Reader(tmp_path)


def _top_lit_contexts(n: int = 64) -> np.ndarray:
    """Context squares whose upper half is bright and lower half dark: where "up" is, is plain."""
    from dicetower.vision.training.reader import CTX

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
    from dicetower.vision.training.reader import Augment, augment_batch

    ctx = _top_lit_contexts()
    plain = Augment(**NO_DISTORTION)
    ones = np.ones(len(ctx), np.int64)
    limited, _ = augment_batch(ctx, ones, np.random.default_rng(5), 4, plain, max_turn=np.full(len(ctx), 0.4))
    anyway, _ = augment_batch(ctx, ones, np.random.default_rng(5), 4, plain)
    assert _up_is_up(limited[:, 0]).all()  # mirrored left-right sometimes, never upside down
    assert 0.2 < _up_is_up(anyway[:, 0]).mean() < 0.8
    # One batch can mix both: the bound is per crop.
    mixed = np.where(np.arange(len(ctx)) % 2 == 0, 0.4, np.pi)
    both, _ = augment_batch(ctx, ones, np.random.default_rng(6), 4, plain, max_turn=mixed)
    assert _up_is_up(both[::2, 0]).all() and not _up_is_up(both[1::2, 0]).all()


def test_oblique_calibration_crops_keep_up_up() -> None:
    from dicetower.vision.training.reader import D6_DATASETS, OBLIQUE_GROUP, jitter_crop, turn_limits

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


def test_mirrored_second_look_keeps_the_top_of_the_picture_on_top() -> None:
    from dicetower.vision.pips import looked_twice, with_views

    blob = np.arange(2 * 1 * 4 * 4, dtype=np.float32).reshape(2, 1, 4, 4)
    v = with_views(blob, 2, "mirror")
    assert np.array_equal(v[:2], blob) and np.array_equal(v[2:], blob[..., ::-1])
    assert np.array_equal(v[2:, :, 0].sum(-1), blob[:, :, 0].sum(-1))  # the same rows, mirrored
    assert np.array_equal(with_views(blob, 1, "mirror"), blob)
    with pytest.raises(ValueError, match="two views"):
        with_views(blob, 4, "mirror")
    with pytest.raises(ValueError, match="second_view"):
        with_views(blob, 2, "flip")
    seen: list[np.ndarray] = []

    def forward(b: np.ndarray) -> np.ndarray:
        seen.append(b.copy())
        return np.zeros((len(b), 7), np.float32)  # unsure of everything: every crop looked at twice

    looked_twice(forward, blob, 2, 0.9, None, "mirror")
    assert np.array_equal(seen[1], blob[..., ::-1])


def test_reader_looks_again_as_its_model_card_says(tmp_path: Path) -> None:
    for name in ("d6_reader.onnx", "d6_reader.json"):
        (tmp_path / name).write_bytes((MODELS / name).read_bytes())
    meta = json.loads((tmp_path / "d6_reader.json").read_text())
    assert D6Reader(tmp_path).second_view == meta.get("second_view", "quarter")
    (tmp_path / "d6_reader.json").write_text(json.dumps({**meta, "views": 2, "second_view": "mirror"}))
    reader = D6Reader(tmp_path)
    crops = [_top_lit_contexts(1)[0][:48, :48].copy(), draw_die(5, 20.0, side=50)[0][:48, :48].copy()]
    reader.second_look_below = 1.01  # every crop gets its second look
    calls: list[np.ndarray] = []
    reader._forward_again = lambda b: (calls.append(b.copy()), reader._forward(b))[1]  # type: ignore[method-assign]
    reader.probabilities(crops)
    from dicetower.vision.pips import to_blob

    assert np.allclose(calls[0], to_blob(crops, reader.channels)[..., ::-1])
    for card in ({"views": 4, "second_view": "mirror"}, {"second_view": "flip"}):
        (tmp_path / "d6_reader.json").write_text(json.dumps({**meta, **card}))
        with pytest.raises(ReaderModelError, match="second_view"):
            D6Reader(tmp_path)


def test_a_second_reader_named_by_the_card_reads_the_unsure_crops_as_they_are(tmp_path: Path) -> None:
    for name in ("d6_reader.onnx", "d6_reader.json"):
        (tmp_path / name).write_bytes((MODELS / name).read_bytes())
    # The second reader here is the first one again, so reading the crops unturned must give
    # exactly the answers of a single look; a turned or mirrored second look would not.
    (tmp_path / "d6_reader_second.onnx").write_bytes((MODELS / "d6_reader.onnx").read_bytes())
    meta = json.loads((tmp_path / "d6_reader.json").read_text())
    card = {**meta, "views": 2, "second_view": "reader", "second_reader": "d6_reader_second.onnx"}
    (tmp_path / "d6_reader.json").write_text(json.dumps(card))
    reader = D6Reader(tmp_path)
    crops = [_top_lit_contexts(1)[0][:48, :48].copy(), draw_die(5, 20.0, side=50)[0][:48, :48].copy()]
    reader.second_look_below = 1.01  # every crop gets its second look
    calls: list[np.ndarray] = []
    reader._forward_again = lambda b: (calls.append(b.copy()), reader._forward(b))[1]  # type: ignore[method-assign]
    both = reader.probabilities(crops)
    from dicetower.vision.pips import to_blob

    assert len(calls) == 1 and np.allclose(calls[0], to_blob(crops, reader.channels))
    reader.views = 1
    np.testing.assert_allclose(both, reader.probabilities(crops), atol=1e-5)
    # A broken second file is named in the error, not loaded as the first reader's copy.
    (tmp_path / "d6_reader_second.onnx").write_bytes(b"not a network")
    with pytest.raises(ReaderModelError, match=r"d6_reader_second\.onnx"):
        D6Reader(tmp_path)


@pytest.mark.parametrize(
    ("card", "says"),
    [
        ({"second_view": "reader", "views": 2}, "second_reader must name"),
        ({"second_view": "reader", "views": 2, "second_reader": "../d6_reader.onnx"}, "must name"),
        ({"second_view": "reader", "views": 2, "second_reader": "nosuch.onnx"}, r"missing nosuch\.onnx"),
        ({"second_view": "reader", "views": 1, "second_reader": "d6_reader.onnx"}, "gives 2 views"),
        ({"second_view": "reader", "views": 4, "second_reader": "d6_reader.onnx"}, "second_view must be"),
        ({"second_view": "quarter", "second_reader": "d6_reader.onnx"}, "needs second_view"),
    ],
)
def test_a_card_with_a_bad_second_reader_is_refused(tmp_path: Path, card: dict, says: str) -> None:
    for name in ("d6_reader.onnx", "d6_reader.json"):
        (tmp_path / name).write_bytes((MODELS / name).read_bytes())
    meta = json.loads((tmp_path / "d6_reader.json").read_text())
    (tmp_path / "d6_reader.json").write_text(json.dumps({**meta, **card}))
    with pytest.raises(ReaderModelError, match=says):
        D6Reader(tmp_path)


def test_kept_candidate_readers_load_and_are_not_the_shipped_one() -> None:
    """vision/training/candidates: readers measured but not shipped must stay readable with --models."""
    import hashlib

    from dicetower.vision.detector import MODEL_PATH  # the shipped reader lives beside the detector
    from dicetower.vision.training import candidates

    folders = sorted(p.parent for p in Path(candidates.__file__).parent.glob("*/d6_reader.onnx"))
    assert folders, "no candidate folders"
    shipped = hashlib.sha256((MODEL_PATH.parent / "d6_reader.onnx").read_bytes()).digest()
    for folder in folders:
        reader = D6Reader(folder)
        assert set(reader.thresholds) == set(range(1, 7))
        assert hashlib.sha256((folder / "d6_reader.onnx").read_bytes()).digest() != shipped
