"""Tampering ``log verify`` must name: a log cut short or emptied, die crops, photo rows, a damaged page.

Each test changes the data directory as someone with the files would (sqlite3, a file
manager), then runs ``dicetower log verify`` and asserts the exit code and the row named.
Verify never writes: the data directory is byte for byte the same after it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.rolllog import PhotoFile, RollLog, verify_log


def _roll(log: RollLog, i: int) -> int:
    """A roll with a throw photo and two die crops, as the tower stores them."""
    rid = log.accept({"notation": "2d6"}, roller="Ann", client="127.0.0.1")
    log.mark_rolling(rid)
    log.commit(
        rid,
        status="done",
        source="sim",
        total=3,
        dice=[{"slot": s, "kind": "d6", "face": 1 + s, "crop": f"die-{s}.jpg", "throw": 0} for s in range(2)],
        throws=[{"index": 0, "photo": "throw-0.jpg"}],
        photos=[
            PhotoFile("throw-0.jpg", b"\xff\xd8photo" + bytes([i]) * 1000),
            PhotoFile("die-0.jpg", b"\xff\xd8crop0" + bytes([i]) * 100),
            PhotoFile("die-1.jpg", b"\xff\xd8crop1" + bytes([i]) * 100),
        ],
    )
    return rid


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A closed log of five rolls with photos and crops (no server has it open)."""
    d = tmp_path / "data"
    with RollLog(d, photo_cap_bytes=None) as log:
        for i in range(5):
            _roll(log, i)
    return d


def _snapshot(d: Path) -> dict[str, str]:
    return {
        p.relative_to(d).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in d.rglob("*")
        if p.is_file()
    }


def _verify(d: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    """Exit code, the problem lines (without the prefix) and stdout; asserts nothing was written."""
    before = _snapshot(d)
    code = main(["log", "verify", "--data", str(d), *args])
    out, err = capsys.readouterr()
    assert _snapshot(d) == before, "log verify changed the data directory"
    return code, [line.removeprefix("dicetower: log: ") for line in err.splitlines()], out


def _sql(d: Path, *statements: str) -> None:
    db = sqlite3.connect(d / "rolls.sqlite3")
    try:
        for s in statements:
            db.execute(s)
        db.commit()
    finally:
        db.close()


def test_a_sound_log_verifies(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, problems, out = _verify(data, capsys)
    assert (code, problems) == (0, [])
    assert out.startswith("ok: 5 rows, 0 records, head row 5 ") and "15 files checked" in out


# -- the end of the log ----------------------------------------------------------------------


def test_a_database_truncated_to_nothing_is_named(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (data / "rolls.sqlite3").write_bytes(b"")
    code, problems, _ = _verify(data, capsys)
    assert code == 1
    assert problems == ["row 5: deleted: the log ended at row 5, now it holds no rows"]
    assert (data / "rolls.sqlite3").stat().st_size == 0  # read, never written: no tables appear


def test_rows_cut_off_the_end_with_the_head_table_rewritten_are_named(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sql(
        data,
        "DELETE FROM rolls WHERE id > 3",
        "DELETE FROM photos WHERE roll_id > 3",
        "UPDATE head SET id = 3, hash = (SELECT hash FROM rolls WHERE id = 3)",
    )
    code, problems, _ = _verify(data, capsys)
    assert (code, problems) == (1, ["row 5: deleted: the log ended at row 5, now at 3"])


def test_a_missing_head_file_is_named(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (data / "rolls.head").unlink()
    code, problems, _ = _verify(data, capsys)
    assert code == 1
    assert problems == [
        "the head file rolls.head is missing, but the log has 5 rows: "
        "it was deleted, or the database was copied without it"
    ]


def test_a_head_one_link_behind_is_a_crash_two_behind_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "data"
    heads = []
    with RollLog(d, photo_cap_bytes=None) as log:
        for i in range(3):
            _roll(log, i)
            heads.append((d / "rolls.head").read_bytes())
    (d / "rolls.head").write_bytes(heads[1])  # the server died after committing row 3
    code, problems, out = _verify(d, capsys)
    assert (code, problems) == (0, [])
    assert "note: rolls.head is one link behind: row 3 was committed" in out
    (d / "rolls.head").write_bytes(heads[0])  # an older copy: two links behind
    code, problems, _ = _verify(d, capsys)
    assert code == 1
    assert problems == [
        "the log runs 2 links past rolls.head: the head file is an older copy, or links were added without it"
    ]


# -- the files the log serves -------------------------------------------------------------


def test_a_replaced_or_deleted_die_crop_is_named(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (data / "photos" / "00000002" / "die-1.jpg").write_bytes(b"\xff\xd8another die")
    (data / "photos" / "00000004" / "die-0.jpg").unlink()
    code, problems, _ = _verify(data, capsys)
    assert (code, problems) == (
        1,
        ["row 2: photo die-1.jpg was changed", "row 4: photo die-0.jpg is missing"],
    )


def test_a_replaced_crop_is_not_served(data: Path) -> None:
    crop = data / "photos" / "00000002" / "die-1.jpg"
    with RollLog(data, photo_cap_bytes=None) as log:
        assert log.photo_path(2, "die-1.jpg") == crop
        crop.write_bytes(b"\xff\xd8another die")
        assert log.photo_path(2, "die-1.jpg") is None
        assert log.photo_path(2, "die-0.jpg") is not None


def test_a_photo_replaced_and_marked_pruned_is_named(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (data / "photos" / "00000003" / "throw-0.jpg").write_bytes(b"\xff\xd8a better throw")
    _sql(data, "UPDATE photos SET pruned = 1 WHERE roll_id = 3 AND name = 'throw-0.jpg'")
    code, problems, _ = _verify(data, capsys)
    assert (code, problems) == (
        1,
        ["row 3: photo throw-0.jpg is marked pruned, but no prune record removed it"],
    )


def test_deleted_photo_rows_are_named(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sql(data, "DELETE FROM photos WHERE roll_id = 4 AND name LIKE 'die-%'")
    code, problems, _ = _verify(data, capsys)
    assert code == 1
    assert problems == [
        f"row 4: photo die-{s}.jpg is in the log but not in the photos table (no longer served)"
        for s in (0, 1)
    ]


def test_a_photo_row_the_log_does_not_record_is_named(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (data / "photos" / "00000002" / "die-7.jpg").write_bytes(b"\xff\xd8planted")
    _sql(data, "INSERT INTO photos (roll_id, name, bytes, sha256) VALUES (2, 'die-7.jpg', 9, 'x')")
    code, problems, _ = _verify(data, capsys)
    assert (code, problems) == (
        1,
        ["row 2: the photos table serves die-7.jpg, which no link of the log records"],
    )


def test_a_dropped_photos_table_is_named_and_stays_dropped(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sql(data, "DROP TABLE photos")
    for _ in range(2):
        code, problems, _ = _verify(data, capsys)
        assert (code, problems) == (1, ["the photos table is missing (dropped)"])


# -- pruning --------------------------------------------------------------------------------


def test_a_pruned_log_verifies_and_other_bytes_in_a_pruned_place_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "data"
    with RollLog(d, photo_cap_bytes=3000) as log:  # room for about two rolls' files
        for i in range(5):
            _roll(log, i)
    assert not (d / "photos" / "00000001").exists()
    code, problems, out = _verify(d, capsys)
    assert (code, problems) == (0, [])
    assert "9 pruned" in out
    (d / "photos" / "00000001").mkdir()
    (d / "photos" / "00000001" / "throw-0.jpg").write_bytes(b"\xff\xd8not the pruned photo")
    code, problems, _ = _verify(d, capsys)
    assert (code, problems) == (
        1,
        ["row 1: photo throw-0.jpg was pruned (record 1), but other bytes are in its place"],
    )


def test_an_edited_prune_record_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "data"
    with RollLog(d, photo_cap_bytes=3000) as log:
        for i in range(4):
            _roll(log, i)
    _sql(d, "UPDATE notes SET body = replace(body, '\"die-0.jpg\"', '\"die-9.jpg\"') WHERE seq = 1")
    code, problems, _ = _verify(d, capsys)
    assert code == 1 and problems[0] == "record 1 (after row 3): edited: its contents do not match its hash"


# -- SQLite's own pages ----------------------------------------------------------------------


def test_a_damaged_page_is_named(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = sqlite3.connect(data / "rolls.sqlite3")
    page = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'rolls_roller'").fetchone()[0]
    db.close()
    raw = bytearray((data / "rolls.sqlite3").read_bytes())
    at = raw.index(b"Ann", (root - 1) * page, root * page)  # a roller's name in the index, not the table
    raw[at] = ord("B")
    (data / "rolls.sqlite3").write_bytes(bytes(raw))
    code, problems, out = _verify(data, capsys)
    assert code == 1
    assert problems == ["the database fails SQLite's integrity_check: row 5 missing from index rolls_roller"]
    assert "5 rows" in out  # every row still chains: only SQLite's check sees the page


# -- the start-up check's bound ----------------------------------------------------------------


def test_the_start_up_check_walks_the_tail_and_log_verify_the_whole_chain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "data"
    with RollLog(d, photo_cap_bytes=None) as log:
        for i in range(12):
            _roll(log, i)
    _sql(d, "UPDATE rolls SET total = '9' WHERE id = 2")
    tail = verify_log(d, tail_rows=5)
    assert tail.ok and (tail.from_row, tail.rows, tail.files_checked) == (8, 5, 15)
    code, problems, _ = _verify(d, capsys)
    assert (code, problems) == (1, ["row 2: edited: its contents do not match its hash"])
    _sql(d, "UPDATE rolls SET total = '9' WHERE id = 10")
    assert [str(p) for p in verify_log(d, tail_rows=5).problems] == [
        "row 10: edited: its contents do not match its hash"
    ]
    (d / "rolls.sqlite3").write_bytes(b"")
    assert [str(p) for p in verify_log(d, tail_rows=5).problems] == [
        "row 12: deleted: the log ended at row 12, now it holds no rows"
    ]
