"""How long ``log verify`` and the server's start-up check take on a big roll log.

Builds a log of ``--rolls`` rolls through ``RollLog.commit`` (the server's own path: fsyncs,
head file, pruning under ``--cap-mb``), each with a row shaped like a simulated tower's (four
dice, one throw with its readings) plus ``--pad`` bytes, a ``--photo-kb`` photo and four
``--crop-kb`` crops (0: none, for a long log built quickly); then times, each best of
``--repeat`` with the files in the page cache:

- ``verify``: ``dicetower log verify`` (``integrity_check``, every file hashed)
- ``verify --quick``: the server's start-up check (the chain's last 10,000 rows, the last 200
  rolls' files hashed)
- SQLite's ``integrity_check`` and ``quick_check`` alone, and the chain walk without files
- opening the log for writing (the cheap head check every ``RollLog`` does)

Run: ``nice .venv/bin/python bench/log_verify.py --rolls 10000``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dicetower.firmware.rolllog import PhotoFile, RollLog, VerifyReport, verify_log
from dicetower.firmware.rolllog.startup import START_HASH_RECENT, START_INTEGRITY, START_TAIL_ROWS

__all__ = ["build_log", "main"]


def _row_parts(i: int, pad: int) -> dict[str, object]:
    dice = [
        {
            "slot": s,
            "kind": "d6",
            "face": 1 + (i + s) % 6,
            "die": "white d6",
            "colour": "white",
            "throw": 0,
            "confidence": 0.98,
            "box": [10 * s, 20, 40, 40],
            "crop": f"die-{s}.jpg",
        }
        for s in range(4)
    ]
    attempts = [{"after": "shake", "dice": [{"die": "white d6", "face": d["face"]} for d in dice]}]
    throws = [
        {
            "index": 0,
            "reason": "",
            "photo": "throw-0.jpg",
            "faces": [d["face"] for d in dice],
            "timings": {"settle_s": 0.4, "read_s": 0.05},
            "retries": [],
            "attempts": attempts,
            "reading": {"pad": "x" * pad},
        }
    ]
    return {"dice": dice, "throws": throws, "result": {"total": sum(d["face"] for d in dice), "text": "4d6"}}


def build_log(data: Path, rolls: int, *, photo_kb: int, crop_kb: int, cap_mb: float, pad: int) -> float:
    """Build the log; seconds taken."""
    started = time.monotonic()
    with RollLog(data, photo_cap_bytes=int(cap_mb * 2**20)) as log:
        for i in range(rolls):
            rid = log.accept({"notation": "4d6", "roller": "bench"}, roller="bench", client="127.0.0.1")
            parts = _row_parts(i, pad)
            photos = [PhotoFile("throw-0.jpg", os.urandom(photo_kb * 1024))] if photo_kb else []
            photos += [PhotoFile(f"die-{s}.jpg", os.urandom(crop_kb * 1024)) for s in range(4) if crop_kb]
            log.commit(
                rid,
                status="done",
                source="sim",
                total=parts["result"]["total"],  # type: ignore[index]
                result=parts["result"],
                dice=parts["dice"],
                throws=parts["throws"],  # type: ignore[arg-type]
                timings={"roll_s": 1.0},
                photos=photos,
            )
    return time.monotonic() - started


def _best(repeat: int, work: Callable[[], object]) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.monotonic()
        out = work()
        best = min(best, time.monotonic() - t)
    return best, out


def _pragma(path: Path, name: str) -> Callable[[], object]:
    def run() -> object:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return db.execute(f"PRAGMA {name}").fetchall()
        finally:
            db.close()

    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rolls", type=int, default=10_000)
    p.add_argument("--photo-kb", type=int, default=100)
    p.add_argument("--crop-kb", type=int, default=2)
    p.add_argument("--cap-mb", type=float, default=512)
    p.add_argument("--pad", type=int, default=1500, help="extra bytes a row (a real row is 4-6 KB)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--data", type=Path, default=None, help="reuse or keep the log here")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data or Path(tmp) / "data"
        if not (data / "rolls.sqlite3").exists():
            built = build_log(
                data,
                args.rolls,
                photo_kb=args.photo_kb,
                crop_kb=args.crop_kb,
                cap_mb=args.cap_mb,
                pad=args.pad,
            )
            print(f"built {args.rolls} rolls in {built:.0f} s ({args.rolls / built:.0f} commits/s)")
        db_mb = (data / "rolls.sqlite3").stat().st_size / 2**20
        photos_mb = sum(f.stat().st_size for f in (data / "photos").rglob("*") if f.is_file()) / 2**20
        print(f"database {db_mb:.1f} MB, photo folder {photos_mb:.0f} MB")
        full_s, full = _best(args.repeat, lambda: verify_log(data))
        assert isinstance(full, VerifyReport) and full.ok, full
        print(
            f"log verify:           {full_s:6.2f} s  ({full.rows} rows, {full.records} records, "
            f"{full.files_checked} files hashed, {full.files_pruned} pruned)"
        )
        quick_s, _ = _best(
            args.repeat,
            lambda: verify_log(
                data, integrity=START_INTEGRITY, hash_recent=START_HASH_RECENT, tail_rows=START_TAIL_ROWS
            ),
        )
        print(f"log verify --quick:   {quick_s:6.2f} s  (the server's start-up check)")
        walk_s, _ = _best(args.repeat, lambda: verify_log(data, integrity="quick_check", hash_recent=0))
        print(f"chain, no file bytes: {walk_s:6.2f} s  (quick_check, files checked to exist)")
        for name in ("integrity_check", "quick_check"):
            s, _ = _best(args.repeat, _pragma(data / "rolls.sqlite3", name))
            print(f"PRAGMA {name + ':':16s} {s:6.2f} s")
        open_s, _ = _best(args.repeat, lambda: RollLog(data, photo_cap_bytes=None).close())
        print(f"RollLog open:         {open_s:6.3f} s  (head file against the last links)")
        print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
