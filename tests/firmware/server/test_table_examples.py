"""``dicetower log examples``: the sim tower's photos, labelled with the faces the table gave."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.server.app import ServerConfig
from dicetower.firmware.server.table import TableSettings
from dicetower.vision.manifest import read_manifest
from server_helpers import live_server, wait_for
from table_helpers import unsure_tower


def test_the_table_s_faces_become_labelled_examples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    config = ServerConfig(
        data_dir=data,
        supply_factory=unsure_tower,
        rate_per_second=0,
        table=TableSettings(unreadable="rethrow"),
    )
    with live_server(config) as base:
        ids = [httpx.post(f"{base}/api/rolls", json={"notation": "5d6"}).json()["id"] for _ in range(3)]
        rolls = [
            wait_for(
                lambda rid=rid: (r := httpx.get(f"{base}/api/rolls/{rid}").json())["status"] == "done" and r,
                60,
            )
            for rid in ids
        ]
        last = rolls[-1]
        new = last["dice"][1]["face"] % 6 + 1
        r = httpx.post(
            f"{base}/api/rolls/{last['id']}/corrections", json={"die": 1, "face": new, "by": "Ann"}
        )
        assert r.status_code == 201
    out = tmp_path / "examples"
    assert main(["log", "examples", "--data", str(data), "--out", str(out)]) == 0
    assert "wrote 1 photos: 0 dice typed by the table, 1 corrected, 4 confirmed" in capsys.readouterr().out
    (entry,) = list(read_manifest(out))
    faces = [d.face for d in entry.dice]
    expected = [d["face"] for d in last["dice"]]
    expected[1] = new
    assert sorted(faces) == sorted(expected)
    assert all(d.box is not None and d.crop and (out / d.crop).is_file() for d in entry.dice)
    (side,) = [json.loads(line) for line in (out / "table.jsonl").read_text().splitlines()]
    assert side["roll"] == last["id"]
    assert [d for d in side["dice"] if d["how"] == "corrected"] == [
        {"slot": 1, "face": new, "how": "corrected", "read": last["dice"][1]["face"]}
    ]
    assert main(["eval", str(out)]) == 0  # the reader scores itself on the table's labels
    every = tmp_path / "every"
    assert main(["log", "examples", "--data", str(data), "--out", str(every), "--confirmed"]) == 0
    assert len(list(read_manifest(every))) == 3
    assert main(["log", "examples", "--data", str(data), "--out", str(every)]) == 1  # never over a manifest
