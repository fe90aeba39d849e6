"""Per-face reject rates from the roll log: from the camera's truth, apparent without it, and the tilt."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.rolllog import RollLog
from dicetower.firmware.server.fairness import DieStats, fairness_from_rows, format_fairness
from dicetower.firmware.server.fairness_page import fairness_html
from dicetower.firmware.server.rejects import RATIO_FLOOR, accepted_shares, max_tilt
from dicetower.firmware.server.stats import rolls_to_see, wilson_interval
from dicetower.vision.eval.evaluate import REJECT_RATE_FLOOR

FACES = (1, 2, 3, 4, 5, 6)
#: the white dice's reader rejects a 6 far more often than the rest; the red die's rejects all alike
WHITE = (0.02, 0.02, 0.02, 0.02, 0.02, 0.30)
RED = (0.05,) * 6


def _look(die: str, face: int, rejected: bool, truth: bool) -> dict[str, Any]:
    look: dict[str, Any] = {"die": die, "face": None if rejected else face}
    if truth:
        look["truth"] = face
    return look


def _throw(
    rng: random.Random, truth: bool, taps: int = 1, reshakes: int = 2
) -> tuple[list[int] | None, dict]:
    """One throw of a white and a red d6 as the tower runs it, the reader's reject sticking to a landing.

    A tap re-reads the dice where they lie (the same faces, the same rejects); a re-shake lands them
    anew. Returns the faces that counted (None: the throw failed) and the throw as the log keeps it.
    """
    attempts: list[dict[str, Any]] = []
    retries: list[dict[str, Any]] = []
    after = "shake"
    while True:
        if after == "shake":
            faces = [rng.choice(FACES), rng.choice(FACES)]
            rejected = [rng.random() < rates[f - 1] for f, rates in zip(faces, (WHITE, RED), strict=True)]
        looks = [
            _look(d, f, r, truth) for d, f, r in zip(("white d6", "red d6"), faces, rejected, strict=True)
        ]
        attempts.append({"after": after, "dice": looks})
        if not any(rejected):
            return faces, {"index": 0, "retries": retries, "attempts": attempts}
        if taps:
            taps, after = taps - 1, "tap"
        elif reshakes:
            reshakes, after = reshakes - 1, "shake"
        else:
            return None, {"index": 0, "retries": retries, "attempts": attempts}
        retries.append(
            {"action": after if after == "tap" else "reshake", "reason": "1 unreadable", "dice": []}
        )


def _rows(n: int, seed: int, truth: bool, per_row: int = 100) -> list[dict[str, Any]]:
    """``n`` throws as log rows: those that counted in done rows of ``per_row``, each failed one alone."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    done: list[tuple[list[int], dict]] = []
    for i in range(n):
        faces, throw = _throw(rng, truth)
        if faces is None:
            rows.append({"status": "failed", "dice": [], "throws": [throw], "error": "unreadable"})
            continue
        done.append((faces, throw))
        if len(done) == per_row or i == n - 1:
            dice = [
                {"slot": 2 * i + k, "kind": "d6", "face": f, "die": die, "throw": i}
                for i, (fs, _t) in enumerate(done)
                for k, (die, f) in enumerate(zip(("white d6", "red d6"), fs, strict=True))
            ]
            rows.append(
                {
                    "status": "done",
                    "dice": dice,
                    "throws": [dict(t, index=i) for i, (_f, t) in enumerate(done)],
                }
            )
            done = []
    return rows


def _logged(rows: Sequence[dict[str, Any]], data: Path) -> list[dict[str, Any]]:
    """The rows written to a real roll log and read back as the server and the CLI read them."""
    with RollLog(data, photo_cap_bytes=None) as log:
        for row in rows:
            rid = log.accept({"notation": "2d6"}, roller="t", client="127.0.0.1")
            log.mark_rolling(rid)
            log.commit(
                rid,
                status=row["status"],
                source="tower:sim",
                dice=row["dice"],
                throws=row["throws"],
                error=row.get("error"),
            )
        return list(log.iter_rows())


def _by_die(stats: Sequence[DieStats]) -> dict[str, DieStats]:
    return {s.die: s for s in stats}


def test_accepted_shares_keep_what_the_reader_keeps() -> None:
    shares = accepted_shares([0, 0, 0, 0, 0, 0.5])
    assert shares[5] == pytest.approx(0.5 / 5.5) and shares[0] == pytest.approx(1 / 5.5)
    assert max_tilt(shares) == pytest.approx(1 / 6 - 0.5 / 5.5)
    assert accepted_shares([0.2] * 6) == pytest.approx([1 / 6] * 6) and max_tilt([1 / 6] * 6) == 0
    with pytest.raises(ValueError):
        accepted_shares([1.0] * 6)


def test_rolls_to_see_grows_as_the_tilt_shrinks() -> None:
    small = rolls_to_see(accepted_shares([0.02] * 5 + [0.1]))
    large = rolls_to_see(accepted_shares([0.02] * 5 + [0.3]))
    assert small is not None and large is not None and small > 10 * large
    assert rolls_to_see([1 / 6] * 6) is None


def test_the_ratio_floor_is_evals() -> None:
    assert RATIO_FLOOR == REJECT_RATE_FLOOR  # one reject ratio, on /fairness and in dicetower eval


def test_rates_from_the_truth_find_the_face_the_reader_rejects(tmp_path: Path) -> None:
    rows = _logged(_rows(3000, seed=3, truth=True), tmp_path)
    assert any(r["status"] == "failed" for r in rows)
    stats = _by_die(fairness_from_rows(rows))
    white = stats["white d6"].to_json()["rejects"]
    assert white["basis"] == "truth" and white["truth_looks"] == white["looks"]
    for face, true_rate in zip(white["faces"], WHITE, strict=True):
        assert face["rate"] == face["rejected"] / face["looks"]
        lo, hi = wilson_interval(face["rejected"], face["looks"], z=3.29)  # 99.9 %: six faces, one seed
        assert lo <= true_rate <= hi, face
    assert white["faces"][5]["ci95"][0] > max(f["ci95"][1] for f in white["faces"][:5])
    assert white["face_p"] < 1e-6 and white["ratio"] > 5
    red = stats["red d6"].to_json()["rejects"]
    assert red["face_p"] > 0.01 and red["ratio"] < white["ratio"]
    # the tilt the measured rates predict is the tilt the counts show
    predicted = white["predicted_shares"]
    assert predicted == pytest.approx(accepted_shares([f["rate"] for f in white["faces"]]))
    assert white["predicted_tilt"] == pytest.approx(max_tilt(predicted))
    counts = stats["white d6"].counts
    n = sum(counts.values())
    lo, hi = wilson_interval(counts[6], n)
    assert lo <= predicted[5] <= hi and hi < 1 / 6  # fewer sixes than fair: the 6 is rejected most
    assert white["rolls_to_see_tilt"] == rolls_to_see(predicted)
    # a failed throw's rejects count: every look of every throw is there
    throws = sum(len(r["throws"]) for r in rows)
    assert white["throws"] == throws and 0 < white["throws_retried"] < throws


def test_without_the_truth_the_rates_are_apparent(tmp_path: Path) -> None:
    rows = _logged(_rows(3000, seed=3, truth=False), tmp_path)
    white = _by_die(fairness_from_rows(rows))["white d6"].to_json()["rejects"]
    with_truth = _by_die(fairness_from_rows(_rows(3000, seed=3, truth=True)))["white d6"].to_json()["rejects"]
    assert white["basis"] == "apparent" and white["truth_looks"] == 0
    assert (white["looks"], white["rejected"]) == (with_truth["looks"], with_truth["rejected"])
    assert white["ratio"] is None and white["face_p"] is None and white["predicted_tilt"] is None
    k = len(FACES)
    for face in white["faces"]:
        assert face["rate"] == pytest.approx(max(0.0, 1 - k * face["read"] / white["looks"]))
        assert face["looks"] is None and face["rejected"] is None
    # the die is fair here, so the apparent rates are the reader's: the 6 stands out
    assert white["faces"][5]["ci95"][0] > 0.15


def _exact_log(true_faces: Sequence[int], read: Sequence[bool], truth: bool) -> list[dict[str, Any]]:
    """One done row per fresh look of the white die, its throw read or rejected as given."""
    rows = []
    for face, ok in zip(true_faces, read, strict=True):
        attempts = [{"after": "shake", "dice": [_look("white d6", face, not ok, truth)]}]
        dice = [{"slot": 0, "kind": "d6", "face": face, "die": "white d6"}] if ok else []
        rows.append({"status": "done" if ok else "failed", "dice": dice, "throws": [{"attempts": attempts}]})
    return rows


def test_a_biased_die_and_a_biased_reader_leave_the_same_log_without_truth() -> None:
    # a fair die whose 6 the reader rejects 4 times in 10, and a die that shows a 6 less often whose
    # reader rejects four of its 1s: the same faces read, the same rejects, different truths
    reader = [f for f in FACES for _ in range(10)]
    read_reader = [True] * 50 + [False] * 4 + [True] * 6
    die = [f for f in FACES for _ in range(10 if f != 6 else 6)] + [1, 1, 1, 1]
    read_die = [True] * 56 + [False] * 4
    blind = [
        _by_die(fairness_from_rows(_exact_log(t, r, False)))["white d6"]
        for t, r in ((reader, read_reader), (die, read_die))
    ]
    assert blind[0].to_json() == blind[1].to_json()
    seen = [
        _by_die(fairness_from_rows(_exact_log(t, r, True)))["white d6"].to_json()["rejects"]
        for t, r in ((reader, read_reader), (die, read_die))
    ]
    assert seen[0]["faces"][5]["rate"] == pytest.approx(0.4) and seen[1]["faces"][5]["rate"] == 0
    assert seen[1]["faces"][0]["rate"] == pytest.approx(4 / 14)


def test_only_a_die_that_just_landed_is_a_fresh_look() -> None:
    throw = {
        "attempts": [
            {"after": "jam", "dice": [_look("white d6", 2, False, True)]},  # nothing moved
            {"after": "shake", "dice": [_look("white d6", 6, True, True)]},
            {"after": "tap", "dice": [_look("white d6", 6, True, True)]},  # the same die again
            {
                "after": "shake",
                "dice": [
                    _look("white d6", 3, False, True),
                    {"die": "white d6", "face": None, "truth": None, "cocked": True},
                ],
            },
        ]
    }
    rows = [
        {
            "status": "done",
            "dice": [{"slot": 0, "kind": "d6", "face": 3, "die": "white d6"}],
            "throws": [throw],
        }
    ]
    rej = _by_die(fairness_from_rows(rows))["white d6"].to_json()["rejects"]
    assert (rej["looks"], rej["rejected"], rej["truth_looks"]) == (3, 2, 2)
    assert (rej["leaning_looks"], rej["leaning_rejected"]) == (1, 1)
    assert [(f["looks"], f["rejected"]) for f in rej["faces"]] == [
        (0, 0),
        (0, 0),
        (1, 0),
        (0, 0),
        (0, 0),
        (1, 1),
    ]
    assert (rej["throws"], rej["throws_retried"]) == (1, 1)
    assert rej["ratio"] is None and rej["predicted_tilt"] is None  # faces never seen: no rate to predict from


def test_rng_dice_have_no_reject_figures() -> None:
    rows = [{"status": "done", "dice": [{"slot": 0, "kind": "d6", "face": 4}], "throws": [{"retries": []}]}]
    (rng,) = fairness_from_rows(rows)
    assert rng.die == "rng d6" and rng.rejects is None and rng.to_json()["rejects"] is None
    assert "rejects" not in format_fairness([rng]) and "<th>rejected</th>" not in fairness_html([rng])


def test_the_cli_and_the_page_show_the_rates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _logged(_rows(600, seed=5, truth=True), tmp_path / "sim")
    assert main(["fairness", "--data", str(tmp_path / "sim")]) == 0
    text = capsys.readouterr().out
    assert (
        "rejects: " in text
        and "per face from the camera's truth" in text
        and "tilt these rates predict" in text
    )
    assert main(["fairness", "--json", "--data", str(tmp_path / "sim")]) == 0
    dice = {d["die"]: d for d in json.loads(capsys.readouterr().out)["dice"]}
    white = dice["white d6"]["rejects"]
    rate6 = f"{100 * white['faces'][5]['rate']:.1f} %"
    assert f"rej {rate6:>8}" in text.split("white d6 (d6)")[1]
    _logged(_rows(600, seed=5, truth=False), tmp_path / "real")
    assert main(["fairness", "--data", str(tmp_path / "real")]) == 0
    text = capsys.readouterr().out
    assert "per face ~" in text and "only if the die is fair" in text and "rej   ~" in text
    with RollLog(tmp_path / "real") as log:
        page = fairness_html(fairness_from_rows(log.iter_rows()))
    assert page.count("<th>rejected</th>") == 2 and "is apparent" in page and "<td>~" in page
    with RollLog(tmp_path / "sim") as log:
        page = fairness_html(fairness_from_rows(log.iter_rows()))
    assert "tilt predicted" in page and "is apparent" not in page
    looks, rejected = white["faces"][5]["looks"], white["faces"][5]["rejected"]
    assert f"<td>{rejected}/{looks} (" in page
