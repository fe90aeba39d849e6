"""The naming API through TestClient (inside ``with``: the lifespan opens the teach folder)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.firmware.server.teach import next_step
from dicetower.vision.manifest import read_manifest
from dicetower.vision.taught.naming import TeachError, load_teach
from starlette.testclient import TestClient
from teach_folders import TeachFolder


@pytest.fixture
def teach_config(config: ServerConfig, teach_folder: TeachFolder) -> ServerConfig:
    return replace(config, teach_dir=teach_folder.path)


def _die(client: TestClient, slug: str) -> dict:
    (die,) = [d for d in client.get("/api/teach").json()["dice"] if d["slug"] == slug]
    return die


def _step(client: TestClient, slug: str, **body: object) -> dict:
    r = client.post(f"/api/teach/{slug}", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_without_a_teach_folder_the_page_says_how_to_open_one(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        page = client.get("/teach")
        assert page.status_code == 404 and "dicetower serve --teach DIR" in page.text
        assert "script" not in page.text
        for r in (
            client.get("/api/teach"),
            client.get("/api/teach/crops/white-d6/00001.png"),
            client.post("/api/teach/white-d6", json={"op": "undo"}),
            client.post("/api/teach/save"),
        ):
            assert r.status_code == 404
            assert "dicetower serve --teach DIR" in r.json()["error"]["message"]


def test_the_state_lists_groups_crops_and_progress(teach_config: ServerConfig) -> None:
    with TestClient(create_app(teach_config)) as client:
        page = client.get("/teach")
        assert page.status_code == 200 and '<script src="/static/teach.js" defer>' in page.text
        assert "unsafe-inline" not in page.headers["content-security-policy"]
        state = client.get("/api/teach").json()
        assert state["folder"] == "teach" and state["token_required"] is False
        assert [d["id"] for d in state["dice"]] == ["white d6", "blue d20"]
        d6 = state["dice"][0]
        assert [[c["index"] for c in g["crops"]] for g in d6["groups"]] == [
            [0, 1, 2],
            [3, 4, 5, 6],
            [7, 8],
            [9],
        ]
        assert d6["groups"][0]["crops"][0]["url"] == "/api/teach/crops/white-d6/00001.png"
        assert d6["progress"]["text"] == "white d6: 0 of 6 faces named, 10 crops left"
        assert d6["faces_left"] == [1, 2, 3, 4, 5, 6] and d6["version"] == 0 and d6["can_undo"] is False
        crop = client.get(d6["groups"][1]["crops"][3]["url"])
        assert crop.status_code == 200 and crop.headers["content-type"] == "image/png"
        assert crop.content == (teach_config.teach_dir / "crops" / "white-d6" / "00007.png").read_bytes()
        assert crop.headers["x-content-type-options"] == "nosniff"


def test_each_step_is_written_to_teach_json_and_can_be_undone(teach_config: ServerConfig) -> None:
    folder = teach_config.teach_dir
    assert folder is not None
    with TestClient(create_app(teach_config)) as client:
        d6 = _step(client, "white-d6", op="name", group=0, face=3, version=0)
        assert d6["groups"][0]["face"] == 3 and d6["version"] == 1 and d6["can_undo"] is True
        assert load_teach(folder).die("white d6").names[0] == 3  # on disk at once
        d6 = _step(client, "white-d6", op="move_out", crop=6)
        assert [c["index"] for c in d6["loose"]] == [6] and d6["loose"][0]["face"] is None
        d6 = _step(client, "white-d6", op="name_loose", crop=6, face=2)
        assert d6["loose"][0]["face"] == 2 and d6["progress"]["named"] == 2
        d6 = _step(client, "white-d6", op="unname", crop=6)
        assert d6["loose"][0]["face"] is None
        d20 = _step(client, "blue-d20", op="split", group=1, crops=[5, 6])
        assert [[c["index"] for c in g["crops"]] for g in d20["groups"]][1:3] == [[3, 4], [5, 6]]
        d20 = _step(client, "blue-d20", op="name", group=2, face=9)
        d20 = _step(client, "blue-d20", op="undo")
        assert d20["groups"][2]["face"] is None and d20["work"] == {
            "names": 1,
            "moves": 0,
            "splits": 1,
            "undos": 1,
        }
        d20 = _step(client, "blue-d20", op="undo")
        assert len(d20["groups"]) == 4 and d20["can_undo"] is False
        r = client.post("/api/teach/blue-d20", json={"op": "undo"})
        assert r.status_code == 409 and r.json()["error"]["message"] == "nothing to undo for blue d20"
        stale = client.post("/api/teach/white-d6", json={"op": "name", "group": 1, "face": 5, "version": 1})
        assert stale.status_code == 409 and stale.json()["error"]["field"] == "version"
        assert _die(client, "white-d6")["version"] == 4
    d20 = load_teach(folder).die("blue d20")
    assert d20.work.undos == 2 and d20.work.splits == 1 and d20.touched == {5, 6}


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"op": "rename", "group": 0}, 422, "op"),
        ({"group": 0}, 422, "op"),
        ({"op": "name", "group": 0, "face": 3, "colour": "red"}, 422, "colour"),
        ({"op": "name", "face": 3}, 422, "group"),
        ({"op": "name", "group": 9, "face": 3}, 422, "group"),
        ({"op": "name", "group": "0", "face": 3}, 422, "group"),
        ({"op": "name", "group": 0, "face": 7}, 422, "face"),
        ({"op": "move_out", "crop": -1}, 422, "crop"),
        ({"op": "name_loose", "crop": 3, "face": 3}, 422, "crop"),
        ({"op": "split", "group": 1, "crops": [0]}, 422, "crops"),
        ({"op": "split", "group": 1, "crops": [3, 4, 5, 6]}, 422, "crops"),
        ({"op": "split", "group": 1, "crops": "3"}, 422, "crops"),
        ({"op": "undo", "version": "0"}, 422, "version"),
        ([1, 2], 422, "body"),
    ],
)
def test_a_bad_step_is_refused_naming_its_field(
    teach_config: ServerConfig, body: object, status: int, field: str
) -> None:
    with TestClient(create_app(teach_config)) as client:
        r = client.post("/api/teach/white-d6", json=body)
        assert (r.status_code, r.json()["error"]["field"]) == (status, field), r.text
        assert _die(client, "white-d6")["version"] == 0
    assert load_teach(teach_config.teach_dir).die("white d6").work.names == 0  # type: ignore[arg-type]


def test_bodies_types_and_dice_are_checked(teach_config: ServerConfig) -> None:
    with TestClient(create_app(teach_config)) as client:
        assert client.post("/api/teach/green-d6", json={"op": "undo"}).status_code == 404
        assert (
            client.post(
                "/api/teach/white-d6", content=b"{", headers={"content-type": "application/json"}
            ).status_code
            == 400
        )
        assert (
            client.post(
                "/api/teach/white-d6", content=b"{}", headers={"content-type": "text/plain"}
            ).status_code
            == 415
        )
        big = {"op": "split", "group": 1, "crops": list(range(5000))}
        assert client.post("/api/teach/white-d6", json=big).status_code == 413


@pytest.mark.parametrize(
    "path",
    [
        "/api/teach/crops/white-d6/..%2F..%2Fteach.json",
        "/api/teach/crops/white-d6/..%2Fblue-d20%2F00001.png",
        "/api/teach/crops/white-d6/00099.png",
        "/api/teach/crops/white-d6/teach.json",
        "/api/teach/crops/green-d6/00001.png",
        "/api/teach/crops/..%2Fimages/roll-00001.jpg",
    ],
)
def test_crops_are_served_only_as_teach_json_lists_them(teach_config: ServerConfig, path: str) -> None:
    with TestClient(create_app(teach_config)) as client:
        assert client.get(path).status_code == 404


def test_a_listed_crop_that_links_outside_the_folder_is_not_served(
    teach_config: ServerConfig, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"not for the network")
    crop = teach_config.teach_dir / "crops" / "white-d6" / "00001.png"  # type: ignore[operator]
    crop.unlink()
    crop.symlink_to(secret)
    with TestClient(create_app(teach_config)) as client:
        assert client.get("/api/teach/crops/white-d6/00001.png").status_code == 404
        assert client.get("/api/teach/crops/white-d6/00002.png").status_code == 200


def test_changes_need_the_token_where_rolling_does(teach_config: ServerConfig) -> None:
    with TestClient(create_app(replace(teach_config, require_token=True))) as client:
        token = (teach_config.data_dir / "api-token").read_text().strip()
        assert client.get("/api/teach").json()["token_required"] is True
        assert client.get("/api/teach/crops/white-d6/00001.png").status_code == 200  # reading is open
        for path in ("/api/teach/white-d6", "/api/teach/save"):
            r = client.post(path, json={"op": "undo"})
            assert r.status_code == 401 and r.json()["error"]["field"] == "authorization"
            wrong = client.post(path, json={"op": "undo"}, headers={"authorization": "Bearer nope"})
            assert wrong.status_code == 401
        ok = client.post(
            "/api/teach/white-d6",
            json={"op": "name", "group": 0, "face": 3},
            headers={"authorization": f"Bearer {token}"},
        )
        assert ok.status_code == 200


def test_save_writes_the_labelled_manifest(teach_config: ServerConfig, teach_folder: TeachFolder) -> None:
    with TestClient(create_app(teach_config)) as client:
        for g, face in enumerate([3, 5, 1, 6]):
            _step(client, "white-d6", op="name", group=g, face=face)
        r = client.post("/api/teach/save")
        assert r.status_code == 200, r.text
        body = r.json()
        assert (body["named"], body["unnamed"], body["lines"]) == (10, 10, 10)
        assert body["progress"] == [
            "white d6: 4 of 6 faces named, 0 crops left",
            "blue d20: 0 of 20 faces named, 10 crops left",
        ]
    entries = list(read_manifest(teach_folder.path, unnamed=True))
    assert [e.dice[0].face for e in entries] == [
        3,
        3,
        3,
        5,
        5,
        5,
        5,
        1,
        1,
        6,
    ]  # the misfit named with its group
    assert all(e.dice[1].face is None for e in entries)
    assert (teach_folder.path / "manifest.unnamed.jsonl").is_file()


def test_save_refuses_a_manifest_that_disagrees(
    teach_config: ServerConfig, teach_folder: TeachFolder
) -> None:
    manifest = teach_folder.path / "manifest.jsonl"
    lines = [json.loads(line) for line in manifest.read_text().splitlines()]
    lines[2]["dice"].reverse()
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with TestClient(create_app(teach_config)) as client:
        r = client.post("/api/teach/save")
        assert r.status_code == 409 and "manifest.jsonl line 3" in r.json()["error"]["message"]


def test_a_bad_teach_json_stops_the_server_at_start(
    teach_config: ServerConfig, teach_folder: TeachFolder
) -> None:
    (teach_folder.path / "teach.json").write_text('{"schema": "dicetower.teach/9", "dice": []}')
    with pytest.raises(TeachError, match="schema"), TestClient(create_app(teach_config)):
        pass


def test_serve_opens_the_teach_folder_from_the_flag_or_the_environment(
    teach_folder: TeachFolder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from dicetower.firmware.cli import main
    from dicetower.firmware.server import listen

    apps = []
    monkeypatch.setattr(
        listen, "serve", lambda app, host, port, announce, **_: (announce(port), apps.append(app))
    )
    data = str(tmp_path / "data")
    assert main(["serve", "--rng", "--data", data, "--teach", str(teach_folder.path)]) == 0
    monkeypatch.setenv("DICETOWER_TEACH_DIR", str(teach_folder.path))
    assert main(["serve", "--rng", "--data", data]) == 0
    assert "naming /teach" in capsys.readouterr().err
    for app in apps:
        with TestClient(app, base_url="http://localhost") as client:  # a name the Host check allows
            assert [d["slug"] for d in client.get("/api/teach").json()["dice"]] == ["white-d6", "blue-d20"]


def test_serve_refuses_a_bad_teach_folder_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dicetower.firmware.cli import main
    from dicetower.firmware.server import listen

    monkeypatch.setattr(
        listen, "serve", lambda app, host, port, announce, **_: pytest.fail("the server started")
    )
    assert main(["serve", "--rng", "--data", str(tmp_path / "data"), "--teach", str(tmp_path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("dicetower: error: ") and "no teach.json" in err[0]


def _rewrite_without_names(folder: Path) -> str:
    """What ``teach group --force`` does to the names: another command rewrites teach.json."""
    doc = json.loads((folder / "teach.json").read_text())
    for die in doc["dice"]:
        die["names"], die["loose_names"] = {}, {}
    text = json.dumps(doc, indent=1) + "\n"
    (folder / "teach.json").write_text(text)
    return text


def test_a_page_read_before_another_command_rewrote_teach_json_cannot_write_over_it(
    teach_config: ServerConfig, teach_folder: TeachFolder
) -> None:
    with TestClient(create_app(teach_config)) as client:
        r = client.get("/api/teach")
        first = r.json()["etag"]
        assert r.headers["etag"] == f'"{first}"' and len(first) == 16
        assert client.get("/api/teach", headers={"if-none-match": f'"{first}"'}).status_code == 304
        view = _step(client, "white-d6", op="name", group=0, face=3, etag=first)  # its own write: same etag
        assert client.get("/api/teach", headers={"if-none-match": f'"{first}"'}).status_code == 304

        on_disk = _rewrite_without_names(teach_folder.path)
        r = client.get("/api/teach", headers={"if-none-match": f'"{first}"'})
        assert r.status_code == 200 and r.json()["etag"] != first  # the page's poll sees the change
        second = r.json()["etag"]
        for stale in (
            client.post("/api/teach/white-d6", json={"op": "name", "group": 1, "face": 5, "etag": first}),
            client.post("/api/teach/save", json={"etag": first}),
        ):
            assert stale.status_code == 409, stale.text
            error = stale.json()["error"]
            assert (
                error["field"] == "etag"
                and "teach.json changed on disk since this page read it" in error["message"]
            )
        assert (teach_folder.path / "teach.json").read_text() == on_disk  # nothing stale written
        assert not (teach_folder.path / "manifest.unnamed.jsonl").exists()
        # the undo history of the old file is gone with it; a die's old version is refused
        assert client.post("/api/teach/white-d6", json={"op": "undo"}).status_code == 409
        old = client.post(
            "/api/teach/white-d6", json={"op": "name", "group": 1, "face": 5, "version": view["version"]}
        )
        assert old.status_code == 409 and old.json()["error"]["field"] == "version"
        _step(client, "white-d6", op="name", group=1, face=5, etag=second)  # reloaded: it applies
        assert load_teach(teach_folder.path).dice[0].names == (None, 5, None, None)
        r = client.post("/api/teach/white-d6", json={"op": "undo", "etag": 7})
        assert r.status_code == 422 and r.json()["error"]["field"] == "etag"
        (teach_folder.path / "teach.json").write_text("{not json")  # a half-written file from another tool
        for _ in range(2):  # refused again and again: never written over, however often asked
            r = client.post("/api/teach/white-d6", json={"op": "name", "group": 2, "face": 1})
            assert r.status_code == 409 and "teach.json changed on disk and cannot be read" in r.text
        assert (teach_folder.path / "teach.json").read_text() == "{not json"


def test_after_a_save_the_answer_says_what_to_run_next(
    teach_config: ServerConfig, teach_folder: TeachFolder, tmp_path: Path
) -> None:
    with TestClient(create_app(teach_config)) as client:
        body = client.post("/api/teach/save").json()
        assert body["ready"] is False and body["next"] == "name the groups: no die has a named face yet"
        _step(client, "white-d6", op="name", group=0, face=3)
        body = client.post("/api/teach/save", json={"etag": client.get("/api/teach").json()["etag"]}).json()
        assert body["ready"] is False and body["next"].startswith(
            "teach more rolls before fitting: the white d6 about "
        )
        assert f"--out {teach_folder.path} carries on" in body["next"]
    # a folder a fit would take: 500 rolls of two d6, every face named 166 times, 300 dice held back
    ready = tmp_path / "my teach"
    ready.mkdir()
    with open(ready / "manifest.jsonl", "w") as fh:
        for n in range(500):
            dice = [
                {"die": "d6", "face": 1 + (n + k) % 6, "colour": "red", "box": [0, 0, 9, 9]} for k in (0, 3)
            ]
            fh.write(json.dumps({"image": "images/a.png", "dice": dice}) + "\n")
    assert next_step(ready) == {
        "ready": True,
        "next": f"dicetower teach fit '{ready}' --out {tmp_path / 'my-dice'}",
    }


def test_teach_group_force_while_the_page_is_open_leaves_the_page_s_names_unsaved(
    teach_config: ServerConfig, teach_folder: TeachFolder, capsys: pytest.CaptureFixture[str]
) -> None:
    with TestClient(create_app(teach_config)) as client:
        etag = client.get("/api/teach").json()["etag"]
        for g, face in enumerate([3, 5, 1, 6]):
            _step(client, "white-d6", op="name", group=g, face=face, etag=etag)
        assert main(["teach", "group", str(teach_folder.path), "--force", "--no-sheets"]) == 0
        capsys.readouterr()
        regrouped = (teach_folder.path / "teach.json").read_text()
        assert all(not d.names or set(d.names) == {None} for d in load_teach(teach_folder.path).dice)
        r = client.post("/api/teach/save", json={"etag": etag})
        assert r.status_code == 409 and r.json()["error"]["field"] == "etag"
        r = client.post("/api/teach/white-d6", json={"op": "name", "group": 0, "face": 2, "etag": etag})
        assert r.status_code == 409
        assert (teach_folder.path / "teach.json").read_text() == regrouped
        assert not (teach_folder.path / "manifest.unnamed.jsonl").exists()
        fresh = client.get("/api/teach").json()
        assert fresh["etag"] != etag and all(g["face"] is None for d in fresh["dice"] for g in d["groups"])
