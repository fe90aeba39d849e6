"""The server's start on the roll log: refused when it does not verify, files set aside never
deleted, ids never reused, a head file left behind by a crash, and a version 1 log migrated."""

from __future__ import annotations

import hashlib
import socket
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.rolllog import PhotoFile, RollLog, verify_log
from dicetower.firmware.server.app import ServerConfig, create_app
from old_log import write_v1_log
from starlette.testclient import TestClient


def _roll(log: RollLog, i: int) -> int:
    rid = log.accept({"notation": "1d6"}, roller="Ann", client="127.0.0.1")
    log.commit(
        rid,
        status="done",
        source="sim",
        total=1,
        dice=[{"slot": 0, "kind": "d6", "face": 1, "crop": "die-0.jpg", "throw": 0}],
        throws=[{"index": 0, "photo": "throw-0.jpg"}],
        photos=[
            PhotoFile("throw-0.jpg", b"\xff\xd8photo" + bytes([i])),
            PhotoFile("die-0.jpg", b"\xff\xd8c" + bytes([i])),
        ],
    )
    return rid


def _files(d: Path) -> dict[str, str]:
    """Every photo under ``d`` by content hash -> its path below ``d`` (wherever it moved)."""
    return {hashlib.sha256(p.read_bytes()).hexdigest(): p.relative_to(d).as_posix() for p in d.rglob("*.jpg")}


def _start(config: ServerConfig) -> None:
    """Start the app (its lifespan runs) and stop it."""
    with TestClient(create_app(config)):
        pass


def _verify(d: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["log", "verify", "--data", str(d)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(config: ServerConfig) -> Path:
    with RollLog(config.data_dir) as log:
        for i in range(3):
            _roll(log, i)
    return config.data_dir


def test_the_server_refuses_a_log_that_does_not_verify(config: ServerConfig, data: Path) -> None:
    db = sqlite3.connect(data / "rolls.sqlite3")
    db.execute("UPDATE rolls SET total = '6' WHERE id = 2")
    db.commit()
    db.close()
    before = _files(data)
    with pytest.raises(RuntimeError, match=r"does not verify: row 2: edited: .*--accept-broken-log"):
        _start(config)
    assert _files(data) == before


def test_serve_refuses_with_one_error_line(data: Path) -> None:
    (data / "rolls.head").unlink()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [
        sys.executable,
        "-m",
        "dicetower.firmware.cli",
        "serve",
        "--rng",
        "--data",
        str(data),
        "--port",
        str(port),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"dicetower: error: the roll log in {data} does not verify: the head file rolls.head is missing"
    )
    assert len(done.stderr.splitlines()) == 1


def test_accepting_a_broken_log_records_why_in_it(
    config: ServerConfig, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = sqlite3.connect(data / "rolls.sqlite3")
    db.execute("UPDATE rolls SET roller = 'Mallory' WHERE id = 2")
    db.commit()
    db.close()
    with TestClient(create_app(replace(config, accept_broken_log=True))) as client:
        rid = client.post("/api/rolls", json={"notation": "1d6"}).json()["id"]
    code, _, err = _verify(data, capsys)
    assert code == 1
    assert err.splitlines() == [
        "dicetower: log: row 2: edited: its contents do not match its hash",
        "dicetower: log: record 1 (after row 3): row 2: edited: its contents do not match its hash "
        "(the server was told to start with this)",
    ]
    with TestClient(create_app(config)) as client:  # accepted once: the next start needs no flag
        assert client.get(f"/api/rolls/{rid}").json()["id"] == rid


def test_a_truncated_log_keeps_its_photos_aside_and_ids_carry_on(
    config: ServerConfig, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _files(data)
    (data / "rolls.sqlite3").write_bytes(b"")
    with pytest.raises(RuntimeError, match="deleted: the log ended at row 3, now it holds no rows"):
        _start(config)
    assert _files(data) == before  # a refused start touches nothing
    with TestClient(create_app(replace(config, accept_broken_log=True))) as client:
        rid = client.post("/api/rolls", json={"notation": "1d6"}).json()["id"]
    assert rid == 4  # never 1 again: the head file knew of row 3
    after = _files(data)
    assert set(before) <= set(after)  # no photo deleted ...
    (aside,) = (data / "orphans").iterdir()  # ... each moved aside, with a note saying why
    assert {after[h] for h in before} == {f"orphans/{aside.name}/{p}" for p in before.values()}
    note = (aside / "NOTE.txt").read_text()
    assert "photos/00000002/die-0.jpg: no row of the log records it for roll 2" in note
    code, _, err = _verify(data, capsys)
    assert code == 1 and "the server was told to start with this" in err


def test_a_crash_leftover_folder_is_set_aside_not_deleted(config: ServerConfig, data: Path) -> None:
    with RollLog(data) as log:
        rid = log.accept({"notation": "1d6"}, roller="Bo", client="127.0.0.1")
        log.mark_rolling(rid)
    folder = data / "photos" / f"{rid:08d}"
    folder.mkdir()
    (folder / "throw-0.jpg").write_bytes(b"\xff\xd8written before the crash")
    with TestClient(create_app(config)) as client:
        assert "server stopped" in client.get(f"/api/rolls/{rid}").json()["error"]
    assert not folder.exists()
    (moved,) = (data / "orphans").glob(f"*/photos/{rid:08d}/throw-0.jpg")
    assert moved.read_bytes() == b"\xff\xd8written before the crash"
    with RollLog(data) as log:
        assert log.verify().ok


def test_a_stray_file_is_set_aside_and_the_photo_folder_stays(config: ServerConfig) -> None:
    d = config.data_dir
    d.mkdir()
    (d / "photos").mkdir()
    (d / "photos" / "notes.txt").write_text("not a roll's")
    with TestClient(create_app(config)) as client:
        rid = client.post("/api/rolls", json={"notation": "1d6"}).json()["id"]
        assert client.get(f"/api/rolls/{rid}").json()["id"] == rid
    assert (d / "photos").is_dir()
    (kept,) = (d / "orphans").glob("*/photos/notes.txt")
    assert kept.read_text() == "not a roll's"
    assert "photos/notes.txt: not a roll's folder" in (kept.parent.parent / "NOTE.txt").read_text()


def test_a_pruned_file_left_by_a_crash_is_removed_only_with_its_recorded_bytes(config: ServerConfig) -> None:
    d, config = config.data_dir, replace(config, photo_cap_bytes=30)
    with RollLog(d, photo_cap_bytes=30) as log:  # room for two rolls' files: roll 1's are pruned
        for i in range(3):
            _roll(log, i)
    (d / "photos" / "00000001").mkdir()
    (d / "photos" / "00000001" / "throw-0.jpg").write_bytes(b"\xff\xd8photo\x00")  # the pruned bytes
    _start(config)  # the prune is finished
    assert not (d / "photos" / "00000001").exists()
    (d / "photos" / "00000001").mkdir()
    (d / "photos" / "00000001" / "die-0.jpg").write_bytes(b"\xff\xd8other")  # not the pruned crop
    with pytest.raises(RuntimeError, match=r"row 1: photo die-0\.jpg was pruned \(record 1\), but other"):
        _start(config)
    _start(replace(config, accept_broken_log=True))
    assert not (d / "photos" / "00000001").exists()
    (kept,) = (d / "orphans").glob("*/photos/00000001/*")
    assert kept.name == "die-0.jpg" and kept.read_bytes() == b"\xff\xd8other"


def test_a_head_file_behind_after_a_crash_is_repaired_at_start(
    config: ServerConfig, data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    behind = (data / "rolls.head").read_bytes()
    with RollLog(data) as log:
        _roll(log, 9)
    (data / "rolls.head").write_bytes(behind)  # killed between the commit and the head write
    assert _verify(data, capsys)[0] == 0
    _start(config)
    code, out, _ = _verify(data, capsys)
    assert code == 0 and "one link behind" not in out


# -- a log written before version 2 ---------------------------------------------------------


def test_a_version_1_log_verifies_migrates_once_and_then_hashes_its_crops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "data"
    d.mkdir()
    files = write_v1_log(d, 4, pruned=1)
    code, out, _ = _verify(d, capsys)  # read as it is: nothing migrated by a check
    assert code == 0 and out.startswith("ok: 4 rows, 0 records") and "6 without a hash" in out
    assert "note: written before rolls.head" in out and not (d / "rolls.head").exists()
    with RollLog(d, photo_cap_bytes=None) as log:
        crop = log.photo_path(3, "die-1.jpg")
        assert crop is not None and crop.read_bytes() == files[3]["die-1.jpg"]
        kinds = [r[0] for r in log.db.execute("SELECT kind FROM notes")]
        rid = _roll(log, 7)
    assert kinds == ["migrate"] and rid == 5
    code, out, _ = _verify(d, capsys)
    assert code == 0 and out.startswith("ok: 5 rows, 1 records") and "without a hash" not in out
    with RollLog(d, photo_cap_bytes=None) as log:
        assert [r[0] for r in log.db.execute("SELECT kind FROM notes")] == ["migrate"]  # once
    (d / "photos" / "00000003" / "die-1.jpg").write_bytes(b"\xff\xd8replaced after the migration")
    code, _, err = _verify(d, capsys)
    assert code == 1 and err.splitlines() == ["dicetower: log: row 3: photo die-1.jpg was changed"]


def test_a_crash_between_the_migration_and_its_head_file_is_not_a_broken_log(
    config: ServerConfig, capsys: pytest.CaptureFixture[str]
) -> None:
    d = config.data_dir
    d.mkdir()
    write_v1_log(d, 2)
    RollLog(d).close()
    (d / "rolls.head").unlink()  # the migration committed; the head file was never written
    code, out, _ = _verify(d, capsys)
    assert code == 0 and "note: rolls.head is missing: the server stopped right after migrating" in out
    _start(config)
    assert (d / "rolls.head").is_file() and _verify(d, capsys)[0] == 0


def test_a_migrated_log_checked_from_its_tail_knows_what_version_1_pruned(tmp_path: Path) -> None:
    d = tmp_path / "data"
    d.mkdir()
    write_v1_log(d, 4, pruned=3)
    with RollLog(d, photo_cap_bytes=None) as log:
        _roll(log, 9)
    report = verify_log(d, tail_rows=3)  # rows 3-5: row 3's files were pruned before the migration
    assert report.ok, report.problems
    assert (report.from_row, report.files_pruned, report.files_checked) == (3, 3, 5)


def test_a_version_1_log_with_an_edited_row_is_refused_before_migrating(config: ServerConfig) -> None:
    d = config.data_dir
    d.mkdir()
    write_v1_log(d, 3)
    db = sqlite3.connect(d / "rolls.sqlite3")
    db.execute("UPDATE rolls SET roller = 'Mallory' WHERE id = 1")
    db.commit()
    db.close()
    with pytest.raises(RuntimeError, match="row 1: edited"):
        _start(config)
    db = sqlite3.connect(d / "rolls.sqlite3")
    assert db.execute("PRAGMA user_version").fetchone()[0] == 0  # not migrated
    db.close()
