"""Corrections: a die said to show another face, the roll evaluated again, both kept in the chain."""

from __future__ import annotations

import io
import json
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

import httpx
from dicetower.firmware.cli import main
from dicetower.firmware.outputs import OUTPUTS
from dicetower.firmware.rolllog import LogReader, verify_log
from dicetower.firmware.rolls.outputs import Output, OutputEvent
from dicetower.firmware.rolls.rolling import RandomSupply
from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.firmware.server.table import TableSettings
from dicetower.rules.notation import Roller
from dicetower.rules.source import FixedSource
from dicetower.rules.systems import get_system, run_check
from server_helpers import live_server, wait_for
from starlette.testclient import TestClient


class Amendments(Output):
    """Keeps the ``amended`` events it is sent (class-wide: the lifespan makes the instance)."""

    name = "amendments"
    seen: ClassVar[list[dict]] = []

    async def send(self, event: OutputEvent) -> None:
        if event.type == "amended":
            Amendments.seen.append(event.data)


def _roll(client: TestClient, body: dict) -> dict:
    rid = client.post("/api/rolls", json=body).json()["id"]

    def done():
        got = client.get(f"/api/rolls/{rid}").json()
        return got if got["status"] in ("done", "failed") else None

    return wait_for(done)


def _other_face(face: int, sides: int = 6) -> int:
    return face % sides + 1


def test_a_correction_is_evaluated_by_the_rules_and_kept_beside_the_roll(config: ServerConfig) -> None:
    Amendments.seen.clear()
    config = replace(config, outputs=(*OUTPUTS, Amendments))
    with TestClient(create_app(config)) as client:
        roll = _roll(client, {"notation": "4d6kh3+2", "roller": "Ann"})
        read = [d["face"] for d in roll["dice"]]
        new = _other_face(read[2])
        r = client.post(f"/api/rolls/{roll['id']}/corrections", json={"die": 2, "face": new, "by": "Bo"})
        assert r.status_code == 201, r.text
        corrected = r.json()
        shown = client.get(f"/api/rolls/{roll['id']}").json()
        listed = client.get("/api/rolls").json()["rolls"][0]
        wait_for(lambda: Amendments.seen)
    faces = [*read[:2], new, read[3]]
    expected = Roller().roll("4d6kh3+2", FixedSource(faces))
    for view in (corrected, shown):
        assert [d["face"] for d in view["dice"]] == faces
        assert view["total"] == expected.total == sum(sorted(faces)[1:]) + 2
        assert view["corrected"] is True and view["as_read"]["total"] == roll["total"]
        assert view["dice"][2]["corrected"]["read"] == read[2] and view["dice"][2]["corrected"]["by"] == "Bo"
        assert "corrected" not in view["dice"][0]
        assert view["dice"][2]["die"] == "rng d6" and view["dice"][2]["throw"] == 0
        assert view["corrections"] == [
            {
                "die": 2,
                "kind": "d6",
                "old": read[2],
                "new": new,
                "by": "Bo",
                "at": view["corrections"][0]["at"],
                "record": 1,
            }
        ]
        assert view["text"] == expected.text
    assert listed["corrected"] is True and listed["faces"] == faces and listed["total"] == expected.total
    assert Amendments.seen[0]["roll"]["total"] == expected.total
    assert Amendments.seen[0]["correction"]["new"] == new
    report = verify_log(config.data_dir)
    assert report.ok, [str(p) for p in report.problems]
    assert report.records == 1
    with LogReader(config.data_dir) as log:
        out = io.StringIO()
        log.export(out, "json")
        (exported,) = [json.loads(line) for line in out.getvalue().splitlines()]
        assert exported["dice"][2]["face"] == read[2]  # the roll as read is kept
        assert exported["corrections"][0]["new"] == new and exported["corrections"][0]["by"] == "Bo"
        csv_out = io.StringIO()
        log.export(csv_out, "csv")
        assert csv_out.getvalue().splitlines()[0].endswith(",corrections")


def test_a_check_outcome_follows_the_corrected_faces(config: ServerConfig) -> None:
    params = {"level": 3, "stat": 4, "difficulty": 15}
    with TestClient(create_app(config)) as client:
        roll = _roll(client, {"system": "runic-flux", "check": "skill", "params": params})
        read = [d["face"] for d in roll["dice"]]
        new = _other_face(read[0])
        r = client.post(f"/api/rolls/{roll['id']}/corrections", json={"die": 0, "face": new})
    assert r.status_code == 201, r.text
    expected = run_check(get_system("runic-flux"), "skill", FixedSource([new, *read[1:]]), params)
    body = r.json()
    assert body["outcome"] == expected.outcome and body["total"] == expected.to_json()["total"]
    assert body["as_read"]["outcome"] == roll["outcome"]
    assert body["odds"]["outcome"] == expected.outcome


def test_refusals_name_the_reason(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        roll = _roll(client, {"notation": "2d6"})
        url = f"/api/rolls/{roll['id']}/corrections"
        face = roll["dice"][0]["face"]
        bad_face = client.post(url, json={"die": 0, "face": 7})
        no_die = client.post(url, json={"die": 5, "face": 3})
        not_int = client.post(url, json={"die": "0", "face": 3})
        missing = client.post(url, json={"die": 0})
        unknown = client.post(url, json={"die": 0, "face": 3, "total": 12})
        same = client.post(url, json={"die": 0, "face": face})
        no_roll = client.post("/api/rolls/999/corrections", json={"die": 0, "face": 3})
        first = client.post(url, json={"die": 0, "face": _other_face(face)})
        again = client.post(url, json={"die": 0, "face": face})
        later = _roll(client, {"notation": "1d6"})
        closed = client.post(url, json={"die": 1, "face": _other_face(roll["dice"][1]["face"])})
        assert later["status"] == "done"
    assert bad_face.status_code == 422 and bad_face.json()["error"]["field"] == "face"
    assert "not on a d6" in bad_face.json()["error"]["message"]
    assert no_die.status_code == 422 and no_die.json()["error"]["field"] == "die"
    assert not_int.status_code == 422 and not_int.json()["error"]["field"] == "die"
    assert missing.status_code == 422 and missing.json()["error"]["field"] == "face"
    assert unknown.status_code == 422 and unknown.json()["error"]["field"] == "total"
    assert same.status_code == 422 and "already" in same.json()["error"]["message"]
    assert no_roll.status_code == 404
    assert first.status_code == 201
    assert again.status_code == 409 and "corrected already" in again.json()["error"]["message"]
    assert closed.status_code == 409 and "came after" in closed.json()["error"]["message"]
    report = verify_log(config.data_dir)
    assert report.ok and report.records == 1  # nothing refused reached the chain


def test_the_window_closes_and_unfinished_rolls_wait(config: ServerConfig) -> None:
    config = replace(config, table=TableSettings(correct_window_s=0.05))
    with TestClient(create_app(config)) as client:
        roll = _roll(client, {"notation": "1d6"})
        threading.Event().wait(0.1)
        late = client.post(
            f"/api/rolls/{roll['id']}/corrections", json={"die": 0, "face": 1 + roll["total"] % 6}
        )
    assert late.status_code == 409 and "close after" in late.json()["error"]["message"]
    slow = replace(config, supply_factory=lambda: RandomSupply(1, throw_time=1.0))
    with TestClient(create_app(slow)) as client:
        rid = client.post("/api/rolls", json={"notation": "1d6"}).json()["id"]
        early = client.post(f"/api/rolls/{rid}/corrections", json={"die": 0, "face": 2})
    assert early.status_code == 409 and "not finished" in early.json()["error"]["message"]


def test_the_table_code_opens_corrections_but_not_rolls(config: ServerConfig) -> None:
    config = replace(config, require_token=True)
    with TestClient(create_app(config)) as client:
        token = (config.data_dir / "api-token").read_text().strip()
        code = (config.data_dir / "table-code").read_text().strip()
        assert code and code != token
        rid = client.post(
            "/api/rolls", json={"notation": "1d6"}, headers={"Authorization": f"Bearer {token}"}
        )
        roll = wait_for(
            lambda: (b := client.get(f"/api/rolls/{rid.json()['id']}").json())["status"] == "done" and b
        )
        url = f"/api/rolls/{roll['id']}/corrections"
        body = {"die": 0, "face": 1 + roll["total"] % 6}
        none = client.post(url, json=body)
        wrong = client.post(url, json=body, headers={"Authorization": "Bearer nope"})
        players_roll = client.post(
            "/api/rolls", json={"notation": "1d6"}, headers={"Authorization": f"Bearer {code}"}
        )
        ok = client.post(url, json=body, headers={"Authorization": f"Bearer {code}"})
    assert none.status_code == 401 and none.json()["error"]["field"] == "authorization"
    assert wrong.status_code == 401
    assert players_roll.status_code == 401
    assert ok.status_code == 201


def test_of_two_answers_at_once_the_first_wins(config: ServerConfig) -> None:
    with live_server(config) as base:
        rid = httpx.post(f"{base}/api/rolls", json={"notation": "1d6"}).json()["id"]
        roll = wait_for(lambda: (b := httpx.get(f"{base}/api/rolls/{rid}").json())["status"] == "done" and b)
        answers: list[int] = []
        faces = [f for f in range(1, 7) if f != roll["total"]]
        start = threading.Barrier(len(faces))

        def answer(face: int) -> None:
            start.wait()
            r = httpx.post(f"{base}/api/rolls/{rid}/corrections", json={"die": 0, "face": face})
            answers.append(r.status_code)

        threads = [threading.Thread(target=answer, args=(f,)) for f in faces]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert sorted(answers) == [201] + [409] * (len(faces) - 1)
    assert verify_log(config.data_dir).records == 1


def test_an_edited_correction_fails_log_verify_and_is_named(config: ServerConfig, capsys) -> None:
    with TestClient(create_app(config)) as client:
        roll = _roll(client, {"notation": "3d6"})
        face = roll["dice"][1]["face"]
        assert (
            client.post(
                f"/api/rolls/{roll['id']}/corrections", json={"die": 1, "face": _other_face(face)}
            ).status_code
            == 201
        )
    assert main(["log", "verify", "--data", str(config.data_dir)]) == 0
    db = sqlite3.connect(Path(config.data_dir) / "rolls.sqlite3")
    with db:
        body = json.loads(db.execute("SELECT body FROM notes WHERE kind = 'correct'").fetchone()[0])
        body["new"] = 6 if body["new"] != 6 else 5
        db.execute("UPDATE notes SET body = ? WHERE kind = 'correct'", (json.dumps(body),))
    db.close()
    capsys.readouterr()
    assert main(["log", "verify", "--data", str(config.data_dir)]) == 1
    out = capsys.readouterr()
    assert (
        f"record 1 (after row {roll['id']}): edited: this correction does not match its hash"
        in out.out + out.err
    )
