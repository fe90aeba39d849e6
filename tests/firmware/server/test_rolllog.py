"""The roll log: hash chain, tamper detection naming the row, photos, recovery, export."""

from __future__ import annotations

import csv
import io
import itertools
import json
import sqlite3
from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.rolllog import GENESIS, PhotoFile, RollLog


def _roll(log: RollLog, n: int, *, photo: bytes | None = None) -> int:
    rid = log.accept({"notation": f"{n}d6"}, roller="Ann", client="127.0.0.1")
    log.mark_rolling(rid)
    photos = [PhotoFile("throw-0.jpg", photo)] if photo else []
    log.commit(
        rid,
        status="done",
        source="rng",
        result={"total": n},
        total=n,
        dice=[{"slot": i, "kind": "d6", "face": 1 + i % 6, "die": "rng d6"} for i in range(n)],
        throws=[{"index": 0, "photo": "throw-0.jpg" if photo else None, "retries": []}],
        photos=photos,
    )
    return rid


@pytest.fixture
def log(tmp_path: Path):
    with RollLog(tmp_path, photo_cap_bytes=None) as log:
        for n in range(1, 6):
            _roll(log, n)
        yield log


def test_log_is_wal_and_chained(log: RollLog) -> None:
    assert log.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = list(log.iter_rows())
    assert [r["id"] for r in rows] == [1, 2, 3, 4, 5]
    assert rows[0]["prev_hash"] == GENESIS
    for a, b in itertools.pairwise(rows):
        assert b["prev_hash"] == a["hash"]
    report = log.verify()
    assert report.ok, report.problems
    assert (report.rows, report.head_id, report.head_hash) == (5, 5, rows[-1]["hash"])


def test_edited_row_is_named(log: RollLog, tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "rolls.sqlite3") as db:
        db.execute("UPDATE rolls SET total = '6' WHERE id = 3")
    problems = [str(p) for p in log.verify().problems]
    assert problems == ["row 3: edited: its contents do not match its hash"]


def test_edit_with_recomputed_hash_is_caught_by_the_next_row(log: RollLog, tmp_path: Path) -> None:
    from dicetower.firmware.rolllog import row_hash

    row = dict(log.db.execute("SELECT * FROM rolls WHERE id = 2").fetchone())
    row["outcome"] = "success"
    with sqlite3.connect(tmp_path / "rolls.sqlite3") as db:
        db.execute("UPDATE rolls SET outcome = ?, hash = ? WHERE id = 2", ("success", row_hash(row)))
    problems = [str(p) for p in log.verify().problems]
    assert problems == ["row 2: edited or moved: row 3 recorded a different hash for it"]


def test_deleted_rows_are_named(log: RollLog, tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "rolls.sqlite3") as db:
        db.execute("DELETE FROM rolls WHERE id IN (2, 3)")
    assert [str(p) for p in log.verify().problems] == ["row 4: row(s) 2-3 before it were deleted"]


def test_deleted_last_row_is_found_by_the_head(log: RollLog, tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "rolls.sqlite3") as db:
        db.execute("DELETE FROM rolls WHERE id = 5")
    assert [str(p) for p in log.verify().problems] == ["row 5: deleted: the log ended at row 5, now at 4"]


def test_swapped_rows_are_named(log: RollLog, tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "rolls.sqlite3") as db:
        db.execute("UPDATE rolls SET id = 100 WHERE id = 2")
        db.execute("UPDATE rolls SET id = 2 WHERE id = 3")
        db.execute("UPDATE rolls SET id = 3 WHERE id = 100")
    problems = {p.row for p in log.verify().problems}
    assert problems == {2, 3}


def test_cli_verify_names_the_edited_row(
    log: RollLog, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["log", "verify", "--data", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("ok: 5 rows")
    with sqlite3.connect(tmp_path / "rolls.sqlite3") as db:
        db.execute("UPDATE rolls SET roller = 'Mallory' WHERE id = 4")
    assert main(["log", "verify", "--data", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "row 4: edited" in err and "row 3" not in err and "row 5" not in err


def test_cli_verify_without_a_log_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["log", "verify", "--data", str(tmp_path / "none")]) == 1
    assert capsys.readouterr().err.startswith("dicetower: error: no roll log in")


def test_recover_marks_in_flight_rolls_failed_in_the_chain(tmp_path: Path) -> None:
    with RollLog(tmp_path) as log:
        _roll(log, 2)
        queued = log.accept({"notation": "1d6"}, roller="Bo", client="c")
        rolling = log.accept({"notation": "2d6"}, roller="Bo", client="c")
        log.mark_rolling(rolling)
    with RollLog(tmp_path) as log:  # a restart
        assert log.recover() == [queued, rolling]
        row = log.get(rolling)
        assert row is not None and row["status"] == "failed"
        assert "while this roll was rolling" in row["error"]
        assert log.get(queued)["error"].endswith("was queued; it was not finished")  # type: ignore[index]
        assert log.pending() == []
        assert log.verify().ok


def test_photos_are_hashed_pruned_and_checked(tmp_path: Path) -> None:
    with RollLog(tmp_path, photo_cap_bytes=2500) as log:
        ids = [_roll(log, 1, photo=bytes([i]) * 1000) for i in range(4)]
        assert log.photo_path(ids[0], "throw-0.jpg") is None  # oldest pruned to fit the cap
        assert log.photo_path(ids[1], "throw-0.jpg") is None
        path = log.photo_path(ids[3], "throw-0.jpg")
        assert path is not None and path.read_bytes() == bytes([3]) * 1000
        assert log.get(ids[0]) is not None  # rows stay
        report = log.verify()
        assert report.ok and report.files_checked == 2 and report.files_pruned == 2
        path.write_bytes(b"edited")
        assert [str(p) for p in log.verify().problems] == [f"row {ids[3]}: photo throw-0.jpg was changed"]


def test_photo_lookup_never_uses_the_name_as_a_path(tmp_path: Path) -> None:
    with RollLog(tmp_path) as log:
        rid = _roll(log, 1, photo=b"x" * 10)
        for name in ("../rolls.sqlite3", "../../etc/passwd", "/etc/passwd", "throw-0.jpg/..", "."):
            assert log.photo_path(rid, name) is None
        other = log.accept({"notation": "1d6"}, roller="Ann", client="t")
        with pytest.raises(ValueError, match="plain file name"):
            log.commit(other, status="done", source="rng", photos=[PhotoFile("../evil.jpg", b"x")])
        assert not (tmp_path / "photos" / "evil.jpg").exists()


def test_export_csv_and_json(log: RollLog, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    buf = io.StringIO()
    assert log.export(buf, "csv") == 5
    rows = list(csv.DictReader(io.StringIO(buf.getvalue())))
    assert [r["id"] for r in rows] == ["1", "2", "3", "4", "5"] and rows[0]["prev_hash"] == GENESIS
    assert main(["log", "export", "--json", "--data", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["total"] for line in lines] == [1, 2, 3, 4, 5]


def test_cli_fairness_reads_the_log(log: RollLog, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fairness", "--data", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("rng d6 (d6): 15 rolls, chi2 ")
    assert main(["fairness", "--json", "--data", str(tmp_path)]) == 0
    dice = json.loads(capsys.readouterr().out)["dice"]
    assert [f["count"] for f in dice[0]["faces"]] == [5, 4, 3, 2, 1, 0]
