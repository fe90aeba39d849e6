"""Files a user names: only a regular file is read, and only so much of it.

Each case runs in a child process with a time limit and an address-space limit, so a reader that
hangs on a FIFO or reads ``/dev/zero`` until memory runs out fails here instead of taking the
test run down with it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from dicetower.vision.files import read_bounded

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

#: Every reader of a file a user names, called on PATH; each prints its error, one line.
CHILD = """
import resource, sys, json
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from pathlib import Path
kind, path = sys.argv[1], Path(sys.argv[2])
try:
    if kind == "config":
        from dicetower.firmware.config import load_config
        load_config(path)
    elif kind == "teach":
        from dicetower.vision.taught.naming import load_teach
        load_teach(path.parent)
    elif kind == "calibration":
        from dicetower.firmware.calibration import Calibration
        Calibration.load(path.parent.parent, path.parent.name)
    elif kind == "taught":
        from dicetower.vision.taught.model import TaughtModel
        TaughtModel(path.parent)
    elif kind == "errata":
        from dicetower.vision.eval.errata import read_errata
        read_errata(path)
    elif kind == "image":
        from dicetower.vision.imageio import load_image
        load_image(path)
    elif kind == "cli":
        from dicetower.firmware.cli import main
        sys.exit(main(["tower", "config", "--check", str(path)]))
    print("read")
except Exception as exc:
    print(type(exc).__name__ + ": " + str(exc))
"""

#: (reader, the name the file must have in its folder)
READERS = [
    ("config", "config.toml"),
    ("teach", "teach.json"),
    ("calibration", "sim/calibration.json"),
    ("taught", "taught.json"),
    ("errata", "errata.jsonl"),
    ("image", "photo.png"),
]


def _run(kind: str, path: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(path)], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(("kind", "name"), READERS)
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path, kind: str, name: str) -> None:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "taught":
        from dicetower.vision.taught.model import CARD

        path = path.with_name(CARD)
    os.mkfifo(path)
    done = _run(kind, path)
    assert done.returncode == 0, done.stderr
    assert "not a regular file (a FIFO)" in done.stdout, done.stdout


@pytest.mark.parametrize("kind", ["config", "cli", "errata", "image"])
def test_dev_zero_is_refused_unread(kind: str) -> None:
    done = _run(kind, "/dev/zero")
    assert "not a regular file (a character device)" in done.stdout + done.stderr, (done.stdout, done.stderr)
    if kind == "cli":
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            "dicetower: error: /dev/zero: cannot read: not a regular file (a character device)"
        ]


def test_read_bounded_reads_a_regular_file_and_refuses_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"x" * 100)
    assert read_bounded(path, 100) == b"x" * 100
    with pytest.raises(OSError, match="100 bytes, more than the 99 read"):
        read_bounded(path, 99)
    with pytest.raises(OSError, match=r"not a regular file \(a directory\)"):
        read_bounded(tmp_path, 100)
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "missing", 100)
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(OSError, match=r"not a regular file \(a socket\)"):
            read_bounded(sock_path, 100)
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    with pytest.raises(OSError, match=r"a character device"):
        read_bounded(link, 100)


def test_a_teach_file_that_is_too_long_says_so(tmp_path: Path) -> None:
    from dicetower.vision.taught.naming import MAX_TEACH_BYTES, TeachError, load_teach

    with open(tmp_path / "teach.json", "wb") as fh:
        fh.truncate(MAX_TEACH_BYTES + 1)
    with pytest.raises(TeachError, match="larger than"):
        load_teach(tmp_path)
