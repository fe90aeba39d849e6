"""A sim run where the table corrects every die the reader got wrong (it reads 5 as 6): fairness counts the
true faces and shows the tower's corrected share per die, and the corrections become labelled examples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.rolllog import LogReader
from dicetower.firmware.server.app import ServerConfig
from dicetower.vision.manifest import read_manifest
from server_helpers import live_server, wait_for
from table_helpers import misreading_tower

ROLLS = 6
#: rolls of the re-fit run: enough of each face of the red die for a relaxed fit
FIT_ROLLS = 60


def _truth_of(box: list[float], truth: list[dict]) -> int:
    cx, cy = box[0] + box[2] / 2, box[1] + box[3] / 2
    near = min(
        truth,
        key=lambda t: (t["box"][0] + t["box"][2] / 2 - cx) ** 2 + (t["box"][1] + t["box"][3] / 2 - cy) ** 2,
    )
    return int(near["face"])


def _play(data: Path, rolls: int) -> tuple[list[int], int, list[dict], str]:
    """Roll ``rolls`` times on the misreading tower, correcting what the camera's truth says is wrong
    as a player would; the true faces, the corrections, /api/fairness and the /fairness page."""
    config = ServerConfig(data_dir=data, supply_factory=misreading_tower, rate_per_second=0)
    truths: list[int] = []
    corrected = 0
    with live_server(config) as base:
        for _ in range(rolls):
            rid = httpx.post(f"{base}/api/rolls", json={"notation": "5d6", "roller": "Ann"}).json()["id"]
            roll = wait_for(
                lambda rid=rid: (r := httpx.get(f"{base}/api/rolls/{rid}").json())["status"] == "done" and r,
                60,
            )
            with LogReader(data) as log:
                row = log.get(rid)
            assert row is not None
            truth = row["throws"][0]["reading"]["truth"]
            for d in roll["dice"]:
                real = _truth_of(d["box"], truth)
                truths.append(real)
                if real != d["face"]:  # a player sees the 5 the tower called a 6
                    r = httpx.post(
                        f"{base}/api/rolls/{rid}/corrections",
                        json={"die": d["slot"], "face": real, "by": "Bo"},
                    )
                    assert r.status_code == 201, r.text
                    corrected += 1
        fairness = httpx.get(f"{base}/api/fairness").json()["dice"]
        page = httpx.get(f"{base}/fairness").text
    return truths, corrected, fairness, page


def test_the_table_corrects_the_misread_dice_and_the_tower_measures_itself(tmp_path: Path) -> None:
    data = tmp_path / "data"
    truths, corrected, fairness, page = _play(data, ROLLS)
    assert corrected == truths.count(5) > 0  # every 5 was misread, and only the 5s
    counts: dict[int, int] = {}
    reading = {"read_by_tower": 0, "corrected": 0}
    for die in fairness:
        for f in die["faces"]:
            counts[f["face"]] = counts.get(f["face"], 0) + f["count"]
        for k in reading:
            reading[k] += die["reading"][k]
    assert counts == {f: truths.count(f) for f in range(1, 7)}  # the true faces, as the table settled them
    assert reading == {"read_by_tower": ROLLS * 5, "corrected": corrected}
    assert "corrected by the table" in page
    out = tmp_path / "examples"
    assert main(["log", "examples", "--data", str(data), "--out", str(out), "--confirmed"]) == 0
    labelled = [d.face for entry in read_manifest(out) for d in entry.dice]
    assert sorted(labelled) == sorted(truths)  # the reader's own photos, labelled right


@pytest.mark.slow
def test_a_reader_fitted_on_the_table_s_labels_reads_the_dice_the_tower_got_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, examples, model = tmp_path / "data", tmp_path / "examples", tmp_path / "model"
    truths, corrected, _fairness, _page = _play(data, FIT_ROLLS)
    assert corrected == truths.count(5) > 0
    assert main(["log", "examples", "--data", str(data), "--out", str(examples), "--confirmed"]) == 0
    code = (  # few rolls: the fit's limits relaxed, one BLAS thread (as tests/firmware/taught_helpers.py)
        "import sys\nfrom dicetower.vision.taught.fit import FitOptions, fit_model\n"
        "fit_model(sys.argv[1], sys.argv[2], FitOptions(min_per_face=3, max_wrong=1.0))"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-c", code, str(examples), str(model)], env=env, check=True, timeout=600)
    capsys.readouterr()
    assert main(["eval", str(examples), "--taught", str(model), "--json"]) == 0
    scored = json.loads(capsys.readouterr().out.splitlines()[0])
    fives = scored["per_face"]["d6"]["5"]
    assert fives["dice"] == corrected and fives["wrong"] == 0  # the taught reader never calls a 5 a 6
    assert fives["correct"] >= 0.9 * fives["dice"]
