"""``teach collect`` and ``teach group`` on the simulated tower: mock pins, real files, real grouping."""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import pytest
from dicetower.firmware import collect as collect_module
from dicetower.firmware import tower as tower_module
from dicetower.firmware.cli import main
from dicetower.firmware.cli.teach_collect import MAX_ROLLS, add_collect_parser, add_group_parser
from dicetower.firmware.cli.teach_fit import check_ready
from dicetower.vision.eval.intervals import binomial_upper
from dicetower.vision.kinds import faces_of
from dicetower.vision.manifest import read_manifest
from dicetower.vision.taught import folder as folder_module
from dicetower.vision.taught.enough import dice_to_show
from dicetower.vision.taught.group import MAX_CROPS
from dicetower.vision.taught.naming import load_teach

TRAY = """\
[dice]
plain = ["blue d20", "2 white d6"]
tens = "red d10t"
units = "white d10"
"""
PAIR = '[dice]\nplain = "2 white d6"\n'
LOADED = Counter({("d20", "blue"): 1, ("d6", "white"): 2, ("d10t", "red"): 1, ("d10", "white"): 1})
SLUG = re.compile(r"[a-z0-9-]+")


def teach_parser() -> argparse.ArgumentParser:
    """The ``teach`` command as its module builds it: these actions on a sub-parsers object."""
    parser = argparse.ArgumentParser(prog="dicetower teach")
    actions = parser.add_subparsers(dest="action", required=True)
    add_collect_parser(actions)
    add_group_parser(actions)
    return parser


@dataclass
class Run:
    rc: int
    out: str
    err: str
    towers: list[Any]
    pins: list[Any]


def teach(argv: list[str]) -> Run:
    """Run a ``teach`` action as ``main`` does; errors come back as its one line."""
    towers: list[Any] = []
    pins: list[Any] = []
    real_open = tower_module.open_tower

    def open_and_keep(*args: Any, **kwargs: Any) -> Any:
        towers.append(real_open(*args, **kwargs))
        pins.append(towers[-1].shaker.pin)  # the mock pin keeps its record after the tower closes
        return towers[-1]

    out, err = io.StringIO(), io.StringIO()
    with (
        pytest.MonkeyPatch.context() as mp,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        mp.setattr(tower_module, "open_tower", open_and_keep)
        args = teach_parser().parse_args(argv)
        try:
            rc = args.func(args)
        except Exception as exc:
            print(f"dicetower: error: {exc}", file=err)
            rc = 1
    return Run(rc, out.getvalue(), err.getvalue(), towers, pins)


def config(tmp: Path, text: str = TRAY) -> str:
    path = tmp / "tray.toml"
    path.write_text(text)
    return str(path)


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run]:
    """30 rolls of a d20, a red d10t + white d10 pair and two white d6 (about 15 s)."""
    tmp = tmp_path_factory.mktemp("collect")
    out = tmp / "teach"
    argv = [
        "collect",
        "--tower",
        "sim",
        "--config",
        config(tmp),
        "--rolls",
        "30",
        "--out",
        str(out),
        "--sim-seed",
        "5",
    ]
    run = teach(argv)
    run.out += "\n" + run.err
    return out, run


def side_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def truth_by_crop(folder: Path) -> dict[tuple[int, int], int]:
    """(manifest line, die index) -> the face the camera knows."""
    truth = {t["image"]: t["faces"] for t in side_lines(folder / "truth.jsonl")}
    return {
        (e.line, i): truth[e.relpath][i]
        for e in read_manifest(folder, unnamed=True)
        for i in range(len(e.dice))
    }


def purity(folder: Path) -> dict[str, float]:
    """Per die: the share of its crops in a group whose most common true face is theirs."""
    truth = truth_by_crop(folder)
    out = {}
    for die in json.loads((folder / "teach.json").read_text())["dice"]:
        faces = [truth[(c["line"], c["index"])] for c in die["crops"]]
        right = sum(Counter(faces[i] for i in g).most_common(1)[0][1] for g in die["groups"])
        out[die["id"]] = right / len(faces)
    return out


def test_the_folder_is_a_manifest_of_unnamed_dice_with_their_crops(collected: tuple[Path, Run]) -> None:
    folder, run = collected
    assert run.rc == 0, run.out
    entries = list(read_manifest(folder, unnamed=True))
    assert run.out.startswith(f"{folder}: 30 rolls kept, 0 failed; 30 rolls in all")
    assert [e.relpath for e in entries] == [f"images/roll-{n:05d}.jpg" for n in range(1, 31)]
    for e in entries:
        assert e.image.is_file() and e.reference == (folder / "images/empty.png").resolve()
        assert Counter((d.die, d.colour) for d in e.dice) == LOADED
        for d in e.dice:
            assert d.face is None and d.box is not None and d.crop.startswith(f"crops/{d.colour}-{d.die}/")
            assert cv2.imread(str(folder / d.crop)).shape == (128, 128, 3)
    assert '"face"' not in (folder / "manifest.jsonl").read_text()


def test_the_camera_s_truth_and_the_reader_s_hints_sit_beside_the_manifest_line_for_line(
    collected: tuple[Path, Run],
) -> None:
    folder, _ = collected
    entries = list(read_manifest(folder, unnamed=True))
    for name in ("truth.jsonl", "hints.jsonl"):
        lines = side_lines(folder / name)
        assert [t["image"] for t in lines] == [e.relpath for e in entries]
        assert [len(t["faces"]) for t in lines] == [len(e.dice) for e in entries]
    for (line, i), face in truth_by_crop(folder).items():
        assert face in faces_of(entries[line - 1].dice[i].die)


def test_teach_json_has_the_documented_format_and_every_crop_in_exactly_one_group(
    collected: tuple[Path, Run],
) -> None:
    folder, _ = collected
    entries = list(read_manifest(folder, unnamed=True))
    assert [d.id for d in load_teach(folder).dice] == [
        "white d6",
        "white d10",
        "red d10t",
        "blue d20",
    ]  # it checks
    doc = json.loads((folder / "teach.json").read_text())
    assert set(doc) == {"schema", "dice"} and doc["schema"] == "dicetower.teach/1"
    assert [d["id"] for d in doc["dice"]] == ["white d6", "white d10", "red d10t", "blue d20"]
    assert len({d["slug"] for d in doc["dice"]}) == len(doc["dice"])
    for die in doc["dice"]:
        assert set(die) >= {"id", "slug", "kind", "colour", "faces", "crops", "groups", "names", "loose"}
        assert (
            1 <= len(die["id"]) <= 40
            and SLUG.fullmatch(die["slug"])
            and die["id"] == f"{die['colour']} {die['kind']}"
        )
        assert die["faces"] == list(faces_of(die["kind"]))
        assert die["names"] == {} and die["loose"] == [] and die.get("loose_names", {}) == {}
        for c in die["crops"]:
            d = entries[c["line"] - 1].dice[c["index"]]
            assert (d.crop, d.die, d.colour) == (c["crop"], die["kind"], die["colour"])
            assert c["crop"].startswith(f"crops/{die['slug']}/")
        assert len(die["crops"]) == 30 * LOADED[(die["kind"], die["colour"])]
        indices = [i for g in die["groups"] for i in g]
        assert sorted(indices) == list(range(len(die["crops"])))  # each crop in exactly one group
        assert all(die["groups"]) and len(die["groups"]) <= len(die["faces"])
        sizes = [len(g) for g in die["groups"]]
        assert sizes == sorted(sizes, reverse=True)
        sheet = cv2.imread(str(folder / "sheets" / f"{die['slug']}.png"))
        assert sheet is not None and sheet.shape[0] >= 68 * len(die["groups"])


def test_grouping_puts_the_sim_dice_s_crops_with_their_own_face(collected: tuple[Path, Run]) -> None:
    """Measured at 30 rolls: white d6 100 %, the numeral dice 87-100 % (seeds 5, 11, 17; this is seed 5:
    100, 100, 100, 90 %); at 300 rolls 100, 98, 90, 90 %."""
    folder, _ = collected
    got = purity(folder)
    assert got["white d6"] >= 0.95, got
    numeral = [got[k] for k in ("white d10", "red d10t", "blue d20")]
    assert min(numeral) >= 0.8 and sum(numeral) / 3 >= 0.9, got


def test_every_pulse_stays_within_the_solenoid_s_limits(collected: tuple[Path, Run]) -> None:
    _, run = collected
    (tower,), (pin,) = run.towers, run.pins
    limits = tower.shaker.pattern.limits
    states = pin.states
    spans = [(a.timestamp, b.timestamp) for a, b in itertools.pairwise(states) if a.state and not b.state]
    assert len(spans) >= 30 * tower.config.shaker.shake_count
    assert all(off - on <= limits.max_on_s + 1e-6 for on, off in spans)
    assert all(b[0] - a[1] >= limits.min_off_s - 1e-6 for a, b in itertools.pairwise(spans))
    for start, _ in spans:  # the duty of every window that opens with a pulse
        end = start + limits.window_s
        on = sum(min(off, end) - max(s, start) for s, off in spans if s < end and off > start)
        assert on <= limits.max_duty * limits.window_s + 1e-6
    assert not pin.state and tower.closed


def test_a_crash_mid_run_leaves_a_complete_folder_and_running_again_carries_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "teach"
    argv = [
        "collect",
        "--tower",
        "sim",
        "--config",
        config(tmp_path, PAIR),
        "--out",
        str(out),
        "--sim-seed",
        "4",
    ]
    real = folder_module.write_atomic
    crops = []

    def fails_on_the_ninth_crop(path: Path, data: bytes) -> None:
        if "crops" in path.parts:
            crops.append(path)
            if len(crops) == 9:  # roll 5's first die: its photo is written, its line is not
                raise OSError("the card was pulled")
        real(path, data)

    monkeypatch.setattr(folder_module, "write_atomic", fails_on_the_ninth_crop)
    run = teach([*argv, "--rolls", "8"])
    assert run.rc == 1 and "dicetower: error: the card was pulled" in run.err
    assert not run.pins[0].state and run.towers[0].closed
    assert len(list(read_manifest(out, unnamed=True))) == 4 and (out / "images/roll-00005.jpg").is_file()
    monkeypatch.setattr(folder_module, "write_atomic", real)
    run = teach([*argv, "--rolls", "3", "--resume"])
    assert run.rc == 0, run.err
    assert f"{out}: carrying on after 4 rolls, at roll 5" in run.err
    entries = list(read_manifest(out, unnamed=True))
    assert [e.relpath for e in entries] == [f"images/roll-{n:05d}.jpg" for n in range(1, 8)]
    assert [t["image"] for t in side_lines(out / "truth.jsonl")] == [e.relpath for e in entries]
    run = teach([*argv, "--rolls", "2"])  # a teach folder of the same dice is carried on by itself
    assert run.rc == 0 and len(list(read_manifest(out, unnamed=True))) == 9


def test_ctrl_c_ends_the_run_with_a_complete_folder_and_the_estimate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "teach"
    real = collect_module.Collector.throw

    def interrupted_at_the_fourth(self: Any, n: int) -> None:
        if n == 4:
            raise KeyboardInterrupt
        real(self, n)

    monkeypatch.setattr(collect_module.Collector, "throw", interrupted_at_the_fourth)
    run = teach(
        ["collect", "--tower", "sim", "--config", config(tmp_path, PAIR), "--rolls", "9", "--out", str(out)]
    )
    assert run.rc == 130
    assert run.out.startswith(f"{out}: 3 rolls kept, 0 failed; interrupted: the folder is complete")
    assert (
        "white d6: " in run.out and "faces seen at least 8 times (estimated by grouping 6 crops)" in run.out
    )
    assert "the general reader (a hint: it reads untaught dice poorly)" in run.out
    assert len(list(read_manifest(out, unnamed=True))) == 3 and (out / "teach.json").is_file()


def test_it_stops_early_once_every_face_is_seen_often_enough(tmp_path: Path) -> None:
    out = tmp_path / "teach"
    argv = [
        "collect",
        "--tower",
        "sim",
        "--config",
        config(tmp_path, PAIR),
        "--out",
        str(out),
        "--sim-seed",
        "2",
    ]
    # --max-wrong 1: fit's bound asks for no held-back dice, so the faces alone decide
    run = teach([*argv, "--rolls", "80", "--min-per-face", "3", "--check-every", "5", "--max-wrong", "1"])
    assert run.rc == 0, run.err
    kept = int(re.match(rf"{re.escape(str(out))}: (\d+) rolls kept", run.out).group(1))  # type: ignore[union-attr]
    assert kept < 40 and kept % 5 == 0
    assert "stopped early: enough rolls held back for fit's bound, and every face of every die" in run.out
    assert "white d6: 6 of 6 faces seen at least 3 times" in run.out
    doc = json.loads((out / "teach.json").read_text())
    assert min(len(g) for g in doc["dice"][0]["groups"]) >= 3


def test_the_early_stop_waits_until_the_held_back_rolls_can_show_fit_s_bound(tmp_path: Path) -> None:
    """Every face is seen 3 times long before roll 47, but fit holds back the latest 30 % of the
    rolls, and showing at most 10 % wrong takes 29 dice with none wrong: 15 photos of two d6, which
    47 rolls give (47 - floor(0.7 x 47) = 15) and 46 do not (14)."""
    assert dice_to_show(0.1) == 29 and binomial_upper(0, 29) <= 0.1 < binomial_upper(0, 28)
    out = tmp_path / "teach"
    argv = ["collect", "--tower", "sim", "--config", config(tmp_path, PAIR), "--out", str(out)]
    run = teach(
        [
            *argv,
            "--sim-seed",
            "2",
            "--rolls",
            "80",
            "--min-per-face",
            "3",
            "--check-every",
            "5",
            "--max-wrong",
            "0.1",
        ]
    )
    assert run.rc == 0, run.err
    assert run.out.startswith(f"{out}: 50 rolls kept, 0 failed; stopped early: enough rolls held back")
    assert (
        "fit holds back enough dice to show at most 10.0% wrong (29) only after about 2 more rolls" in run.err
    )
    assert "about 7 more rolls" in run.err  # at roll 40: 12 held back, 15 wanted at roll 47
    assert (
        "teach fit holds back the latest 30% of the rolls: 30 dice; "
        "showing at most 10.0% wrong takes 29: enough" in run.out
    )
    # the default bound, 1 %: 299 dice, 150 photos of two d6, 497 rolls; a short run says how many more
    run = teach([*argv, "--rolls", "5", "--check-every", "5"])
    assert run.rc == 0, run.err
    assert "showing at most 1.0% wrong takes 299: roll about 442 more" in run.out  # 55 rolls now


def name_by_truth(folder: Path) -> None:
    """Name each group of the folder's one die by its crops' most common true face (``teach name``)."""
    truth = truth_by_crop(folder)
    (die,) = json.loads((folder / "teach.json").read_text())["dice"]
    faces = [truth[(c["line"], c["index"])] for c in die["crops"]]
    names = {str(g): Counter(faces[i] for i in m).most_common(1)[0][0] for g, m in enumerate(die["groups"])}
    labels = folder.parent / "labels.json"
    labels.write_text(json.dumps({die["id"]: {"groups": names}}))
    assert main(["teach", "name", str(folder), "--labels", str(labels)]) == 0


def test_a_named_folder_collected_on_keeps_every_name_and_its_new_crops_join_the_groups(
    tmp_path: Path,
) -> None:
    out = tmp_path / "teach"
    argv = [
        "collect",
        "--tower",
        "sim",
        "--config",
        config(tmp_path, PAIR),
        "--out",
        str(out),
        "--check-every",
        "0",
    ]
    assert teach([*argv, "--rolls", "15", "--sim-seed", "3"]).rc == 0
    name_by_truth(out)
    named = load_teach(out).dice[0]
    assert all(f is not None for f in named.names)

    run = teach([*argv, "--rolls", "5", "--sim-seed", "4"])  # carries on: 10 new crops
    assert run.rc == 0, run.err
    assert f"{out / 'teach.json'}: 10 new crops added to the groups, every name kept" in run.out
    assert "holds names" not in run.out
    after = load_teach(out).dice[0]
    assert after.names == named.names and after.work == named.work and after.crops[:30] == named.crops
    assert len(after.crops) == 40 and sorted(i for g in after.groups for i in g) + sorted(
        after.loose
    ) == list(range(40))
    truth = truth_by_crop(out)
    by_crop = {(e.line, i): d.face for e in read_manifest(out, unnamed=True) for i, d in enumerate(e.dice)}
    new_named = [c for g, f in zip(after.groups, after.names, strict=True) for c in g if c >= 30]
    assert new_named  # the saved manifest follows: each new crop in a named group has its group's face
    for c in new_named:
        crop = after.crops[c]
        assert by_crop[(crop.line, crop.index)] == truth[(crop.line, crop.index)]

    run = teach(["group", str(out)])  # without --force: nothing new, nothing lost
    assert run.rc == 0 and "every crop is in a group already, names kept" in run.out, run.err
    assert load_teach(out).dice[0] == after


def test_the_rolls_fit_asks_for_are_the_rolls_that_make_the_folder_ready(tmp_path: Path) -> None:
    """A newcomer's loop: fit refuses, saying how many rolls; collecting those (names kept) is enough."""
    out = tmp_path / "teach"
    argv = [
        "collect",
        "--tower",
        "sim",
        "--config",
        config(tmp_path, PAIR),
        "--out",
        str(out),
        "--check-every",
        "0",
    ]
    assert teach([*argv, "--rolls", "15", "--sim-seed", "3"]).rc == 0
    name_by_truth(out)
    fit = argparse.Namespace(folder=out, hold_back=0.3, min_per_face=3, max_wrong=0.1, seen_faces_only=False)
    logged: list[str] = []
    with pytest.raises(ValueError, match="teach more rolls before fitting: the white d6 about") as refused:
        check_ready(fit, logged.append)
    more = int(re.search(r"the white d6 about (\d+) more", str(refused.value)).group(1))  # type: ignore[union-attr]
    assert more == 32  # 29 held-back dice for 10 %: 15 photos of two d6, 47 rolls
    assert logged == [f"white d6: too few held-back dice for the wrong-rate bound: roll about {more} more"]
    run = teach([*argv, "--rolls", str(more), "--sim-seed", "4"])
    assert run.rc == 0 and "new crops added to the groups, every name kept" in run.out, run.err
    check_ready(fit, logged.append)  # ready: no refusal
    assert len(logged) == 1


def test_a_tray_that_would_give_a_die_more_crops_than_grouping_takes_is_refused(tmp_path: Path) -> None:
    assert MAX_ROLLS == MAX_CROPS
    rolls = MAX_CROPS // 2 + 1
    argv = ["collect", "--tower", "sim", "--config", config(tmp_path, PAIR), "--out", str(tmp_path / "t")]
    run = teach([*argv, "--rolls", str(rolls)])
    assert run.rc == 1 and f"roll at most {MAX_CROPS // 2} more" in run.err
    assert not (tmp_path / "t" / "manifest.jsonl").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["collect", "--tower", "sim", "--rolls", "0", "--out", "x"],
            "argument --rolls: expected 1 to 1500, got 0",
        ),
        (["collect", "--tower", "replay", "--rolls", "3", "--out", "x"], "argument --tower: invalid choice"),
        (["collect", "--tower", "sim", "--rolls", "3"], "the following arguments are required: --out"),
    ],
)
def test_bad_arguments_are_refused_by_the_parser(argv: list[str], message: str, capsys: Any) -> None:
    with pytest.raises(SystemExit):
        teach_parser().parse_args(argv)
    assert message in capsys.readouterr().err


def test_every_help_page_has_examples() -> None:
    for action in ("collect", "group"):
        text = io.StringIO()
        with contextlib.redirect_stdout(text), pytest.raises(SystemExit):
            teach_parser().parse_args([action, "--help"])
        assert "examples:\n  dicetower teach " + action in text.getvalue()


# -- teach group on a folder dicetower record wrote


def test_a_labelled_record_folder_is_made_a_teach_folder_beside_it_its_truth_to_the_side(
    tmp_path: Path,
) -> None:
    record = tmp_path / "recorded"
    assert main(["record", str(record), "--rolls", "6", "--tower", "sim", "--sim-seed", "3"]) == 0
    before = (record / "manifest.jsonl").read_text()
    run = teach(["group", str(record)])
    assert run.rc == 1 and "its photos are labelled" in run.err and "give --out DIR" in run.err
    out = tmp_path / "teach"
    run = teach(["group", str(record), "--out", str(out), "--no-sheets"])
    assert run.rc == 0, run.err
    assert (record / "manifest.jsonl").read_text() == before and not (record / "crops").exists()
    entries = list(read_manifest(out, unnamed=True))
    assert entries and all(d.face is None and d.crop and d.colour for e in entries for d in e.dice)
    labels = {e.relpath: e for e in read_manifest(record)}
    for t in side_lines(out / "truth.jsonl"):
        assert sorted(t["faces"]) == sorted(d.face for d in labels[t["image"]].dice)
    assert (out / "teach.json").is_file() and not (out / "sheets").exists()
    assert run.out.startswith(f"{out}: a teach folder made: ")


def test_an_unlabelled_record_folder_is_converted_in_place_keeping_its_manifest(tmp_path: Path) -> None:
    record = tmp_path / "recorded"
    assert main(["record", str(record), "--rolls", "5", "--tower", "sim", "--sim-seed", "6"]) == 0
    lines = [json.loads(line) for line in (record / "manifest.jsonl").read_text().splitlines()]
    unlabelled = "".join(json.dumps({**line, "dice": []}) + "\n" for line in lines)  # a real camera's
    (record / "manifest.jsonl").write_text(unlabelled)
    run = teach(
        [
            "group",
            str(record),
            "--config",
            config(tmp_path, '[dice]\nplain = "4 white d6"\nwild = "red d6"\n'),
        ]
    )
    assert run.rc == 0, run.err
    assert (record / "manifest.record.jsonl").read_text() == unlabelled
    entries = list(read_manifest(record, unnamed=True))
    assert entries and all(Counter(d.colour for d in e.dice) == {"white": 4, "red": 1} for e in entries)
    assert not (record / "truth.jsonl").exists() and (record / "sheets" / "red-d6.png").is_file()
    assert teach(["group", str(record)]).rc == 0  # now a teach folder: grouped again
    assert "--config is for photos" in teach(["group", str(record), "--config", "x.toml"]).err
