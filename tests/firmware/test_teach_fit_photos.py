"""``teach fit`` checks its photos before it decodes them: the given tray, each photo's size, each box."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from dicetower.vision.taught.features import TaughtModelError
from dicetower.vision.taught.fit import FitOptions, fit_model
from taught_helpers import write_teach_folder


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def write_grey_png(path: Path, width: int, height: int) -> None:
    """A valid black greyscale PNG of ``width`` x ``height``, compressed a row at a time (small on disk)."""
    packer = zlib.compressobj(9)
    row = b"\x00" * (width + 1)  # filter byte, then the row
    idat = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def teach(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fitphotos") / "teach"
    write_teach_folder(folder, 30)
    return folder


def test_a_tray_that_cannot_be_read_is_an_error_before_the_fit(
    teach: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bomb = tmp_path / "bomb.png"
    write_grey_png(bomb, 30_000, 30_000)  # 900 MP in a few hundred kilobytes
    for tray, says in (("/dev/zero", "not a regular file (a character device)"), (str(bomb), "30000x30000")):
        argv = ["teach", "fit", str(teach), "--out", str(tmp_path / "model"), "--tray", tray]
        assert main([*argv, "--min-per-face", "1", "--max-wrong", "1"]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"dicetower: error: --tray: {tray}: ") and says in err, err
        assert len(err.splitlines()) == 1
        assert not (tmp_path / "model" / "taught.json").exists()


def test_a_box_outside_its_photo_is_refused_with_its_reason(teach: Path, tmp_path: Path) -> None:
    folder = tmp_path / "teach"
    shutil.copytree(teach, folder)
    lines = (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    line = json.loads(lines[2])
    line["dice"][0]["box"] = [5000.0, 5000.0, 60.0, 60.0]
    lines[2] = json.dumps(line)
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(
        TaughtModelError, match=r"manifest line 3: the box \[5000\.0, 5000\.0, 60\.0, 60\.0\] lies"
    ):
        fit_model(folder, tmp_path / "model", FitOptions(min_per_face=1, max_wrong=1.0))
    line["dice"][0]["box"] = [620.0, 400.0, 60.0, 100.0]  # a quarter of it inside the 640x480 photo
    lines[2] = json.dumps(line)
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(TaughtModelError, match=r"lies mostly outside its 640x480 photo \(roll-00003\.jpg\)"):
        fit_model(folder, tmp_path / "model", FitOptions(min_per_face=1, max_wrong=1.0))
    assert not (tmp_path / "model").exists()


# The fit's own peak: VmHWM, this process's high-water mark (ru_maxrss would carry the forking test
# runner's peak across exec, hundreds of MB in a full run).
HUGE_FIT = """
import re, sys
from dicetower.vision.taught.fit import FitOptions, fit_model
try:
    fit_model(sys.argv[1], sys.argv[2], FitOptions(min_per_face=1, max_wrong=1.0))
except Exception as exc:
    print(exc)
status = open("/proc/self/status", encoding="ascii").read()
print(int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) // 1024)
"""


def test_huge_photos_are_refused_from_their_headers_before_any_is_decoded(tmp_path: Path) -> None:
    folder = tmp_path / "teach"
    (folder / "images").mkdir(parents=True)
    write_grey_png(folder / "images" / "roll-00001.png", 12_000, 10_000)  # 120 MP
    with open(folder / "manifest.jsonl", "w", encoding="utf-8") as fh:
        for n in range(1, 61):
            if n > 1:
                shutil.copyfile(folder / "images" / "roll-00001.png", folder / "images" / f"roll-{n:05d}.png")
            die = {"die": "d6", "box": [100.0, 100.0, 400.0, 400.0], "face": 1 + n % 6, "colour": "white"}
            fh.write(json.dumps({"image": f"images/roll-{n:05d}.png", "dice": [die]}) + "\n")
    argv = [sys.executable, "-c", HUGE_FIT, str(folder), str(tmp_path / "model")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=True)
    said, peak_mb = done.stdout.splitlines()
    assert said.startswith(
        str(folder / "images" / "roll-00001.png") + ": 12000x10000 is 120 MP, more than the"
    )
    assert int(peak_mb) < 600, f"peak {peak_mb} MB"
