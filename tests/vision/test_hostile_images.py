"""Images a hostile (or unlucky) user hands the reader: bombs, damaged photos, every format.

Each case runs ``dicetower read`` in a child process, so the exit code, the whole of stderr
(library chatter included: libjpeg and libpng write to descriptor 2, not to ``sys.stderr``)
and the child's own peak memory are what a user would see. Every file is generated here.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.image_format import DECODE_COPIES, read_header
from dicetower.vision.imageio import (
    MAX_DECODED_BYTES,
    MAX_FILE_BYTES,
    MAX_PIXELS,
    MAX_SIDE,
    DamagedImageError,
    ImageError,
    decode_image,
    load_image_info,
)

#: The process's own peak resident memory in kB. Why not ``getrusage``: on Linux a child's
#: ``ru_maxrss`` also counts the parent's memory from before ``exec`` when it was forked.
PEAK_KB = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"

#: Runs the CLI and writes the process's peak resident memory (kB) to argv[1].
CHILD = f"""
import sys
from dicetower.firmware.cli import main
code = main(sys.argv[2:])
open(sys.argv[1], "w").write(str({PEAK_KB}))
sys.exit(code)
"""

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")

#: A refused image may cost no more than this, all told (Python, numpy and OpenCV are ~55 MB).
REFUSED_PEAK_MB = 150


def _cli(tmp_path: Path, *argv: str) -> tuple[int, str, str, float]:
    """(exit code, stdout, stderr, peak MB) of ``dicetower ARGV`` in a fresh process."""
    peak = tmp_path / "peak.txt"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(peak), *argv], capture_output=True, text=True, timeout=120
    )
    return done.returncode, done.stdout, done.stderr, int(peak.read_text()) / 1024 if peak.exists() else 0.0


def _photo(h: int = 240, w: int = 320) -> np.ndarray:
    """A textured frame, so a JPEG of it has a long scan to damage."""
    rng = np.random.default_rng(7)
    img = cv2.GaussianBlur(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), (5, 5), 1.5)
    cv2.rectangle(img, (40, 40), (120, 120), (240, 240, 240), -1)
    return img


def _encode(ext: str, img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(ext, img)
    assert ok
    return buf.tobytes()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png_bomb(w: int, h: int, depth: int = 8, colour: int = 6) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, 0)
    body = _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + _chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def _jpeg_bomb(w: int, h: int) -> bytes:
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, h, w, 3) + b"\x01\x11\x00\x02\x11\x00\x03\x11\x00"
    sos = b"\xff\xda" + struct.pack(">HB", 12, 3) + b"\x01\x00\x02\x00\x03\x00\x00\x3f\x00"
    return b"\xff\xd8" + sof + sos + b"\x00" * 1000 + b"\xff\xd9"


def _bmp_bomb(w: int, h: int) -> bytes:
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, 0, 2835, 2835, 0, 0)
    body = info + b"\0" * 1000
    return b"BM" + struct.pack("<IHHI", 14 + len(body), 0, 0, 54) + body


def _tiff_bomb(w: int, h: int) -> bytes:
    """A grey TIFF header that claims ``w`` x ``h``: 1 KB on disk, ``w * h`` bytes to decode."""
    entries = [(256, 4, 1, w), (257, 4, 1, h), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1)]
    entries += [(273, 4, 1, 200), (277, 3, 1, 1), (278, 4, 1, h), (279, 4, 1, 1000)]
    ifd = struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHII", *e) for e in entries)
    head = b"II*\x00" + struct.pack("<I", 8) + ifd + b"\0\0\0\0"
    return head.ljust(200, b"\0") + b"\0" * 1000


def _webp_lossless_bomb(w: int, h: int) -> bytes:
    bits = (w - 1) | (h - 1) << 14
    vp8l = b"\x2f" + struct.pack("<I", bits) + b"\0" * 10000
    chunk = b"VP8L" + struct.pack("<I", len(vp8l)) + vp8l
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def _webp_lossy_bomb(w: int, h: int) -> bytes:
    vp8 = b"\x10\x02\x00\x9d\x01\x2a" + struct.pack("<HH", w, h) + b"\0" * 10000
    chunk = b"VP8 " + struct.pack("<I", len(vp8)) + vp8
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def _webp_extended_bomb(w: int, h: int) -> bytes:
    vp8x = b"\x10\0\0\0" + (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little")
    chunk = b"VP8X" + struct.pack("<I", len(vp8x)) + vp8x
    return b"RIFF" + struct.pack("<I", 4 + len(chunk) + 1000) + b"WEBP" + chunk + b"\0" * 1000


def _gif_bomb(w: int, h: int) -> bytes:
    screen = b"GIF89a" + struct.pack("<HHBBB", w, h, 0, 0, 0)
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0) + b"\x02\x02\x44\x01\x00"
    return screen + image + b"\x3b"


def _gif_screen_bomb(w: int, h: int) -> bytes:
    """A GIF whose logical screen is ``w`` x ``h`` and whose one image is 16x16: the decoder's
    canvases are the screen's size (a 10000x10000 screen cost 715 MB before it was refused)."""
    screen = b"GIF89a" + struct.pack("<HHBBB", w, h, 0, 0, 0)
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, 16, 16, 0) + b"\x02\x02\x44\x01\x00"
    return screen + image + b"\x3b"


BOMBS = {
    "tiff-30000": (_tiff_bomb(30_000, 30_000), "image too large (30000x30000"),
    "webp-lossless-16383": (_webp_lossless_bomb(16_383, 16_383), "image too large (16383x16383"),
    "webp-lossy-16383": (_webp_lossy_bomb(16_383, 16_383), "image too large (16383x16383"),
    "webp-extended-16383": (_webp_extended_bomb(16_383, 16_383), "image too large (16383x16383"),
    "png-50000": (_png_bomb(50_000, 50_000), "image too large (50000x50000"),
    "png-16bit-10000": (_png_bomb(10_000, 10_000, depth=16), "image too large to decode (10000x10000"),
    # grey+alpha comes back from the decoder as four 16-bit channels (a 467 KB file peaked at 1.9 GB)
    "png-16bit-grey-alpha-8000": (
        _png_bomb(8000, 8000, depth=16, colour=4),
        "image too large to decode (8000x8000, 4 channel(s) of 16 bits",
    ),
    "gif-screen-10000": (_gif_screen_bomb(10_000, 10_000), "image too large to decode (10000x10000"),
    "jpeg-30000": (_jpeg_bomb(30_000, 30_000), "image too large (30000x30000"),
    "jpeg-10000-no-tables": (_jpeg_bomb(10_000, 10_000), "cannot decode image (corrupt or unsupported JPEG)"),
    "bmp-30000": (_bmp_bomb(30_000, 30_000), "image too large (30000x30000"),
    "gif-65535": (_gif_bomb(65_535, 65_535), "image too large (65535x65535"),
    "pnm-30000": (b"P6\n30000 30000\n255\n" + b"\0" * 1000, "truncated PNM (1019 of at least 2700000019"),
    "pnm-ascii-30000": (b"P3\n# big\n30000 30000\n255\n" + b"0 " * 1000, "truncated PNM"),
    "pnm-cut": (b"P5\n3000 3000\n255\n" + b"\0" * 1000, "truncated PNM"),
}


@pytest.mark.parametrize("case", sorted(BOMBS))
def test_bombs_are_refused_from_the_header_with_bounded_memory(tmp_path: Path, case: str) -> None:
    data, why = BOMBS[case]
    path = tmp_path / f"{case}.img"
    path.write_bytes(data)
    code, out, err, peak_mb = _cli(tmp_path, "read", str(path))
    assert code == 1, (out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"dicetower: error: {path}: {why}"), lines[0]
    assert 0 < peak_mb < REFUSED_PEAK_MB, f"{case} peaked at {peak_mb:.0f} MB"


def test_headers_give_the_size_of_every_decoded_format() -> None:
    tiff = read_header(_tiff_bomb(30_000, 20_000))
    assert (tiff.kind, tiff.width, tiff.height, tiff.channels) == ("tiff", 30_000, 20_000, 1)
    assert read_header(_webp_lossless_bomb(1000, 500)).pixels == 1000 * 500
    assert read_header(_webp_lossy_bomb(9, 8)).pixels == 9 * 8
    assert read_header(_webp_extended_bomb(300, 200)).pixels == 300 * 200
    assert read_header(_gif_bomb(640, 480)).pixels == 640 * 480
    assert read_header(b"P2 # c\n # more\n 17 9 65535\n").sample_bytes == 2
    assert read_header(_png_bomb(10, 10, depth=16)).decoded_bytes == 10 * 10 * 4 * 2
    assert read_header(_png_bomb(10, 10, depth=16, colour=4)).decoded_bytes == 10 * 10 * 4 * 2
    assert read_header(_gif_screen_bomb(100, 100)).peak_bytes() >= 100 * 100 * 8


def test_accepted_image_memory_stays_within_the_stated_bound(tmp_path: Path) -> None:
    """A large grey PNG: the decoder's buffer, then a frame of MAX_SIDE; never a full-size BGR copy."""
    w, h = 8000, 6000
    path = tmp_path / "big.png"
    cv2.imwrite(str(path), np.full((h, w), 128, np.uint8), [cv2.IMWRITE_PNG_COMPRESSION, 1])
    script = (
        "import sys, json\n"
        "from dicetower.vision.imageio import load_image_info\n"
        f"before = {PEAK_KB}\n"
        "info = load_image_info(sys.argv[1])\n"
        f"after = {PEAK_KB}\n"
        "print(json.dumps([before, after, list(info.frame.shape), info.original_size]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    before, after, shape, size = json.loads(done.stdout)
    assert shape == [MAX_SIDE * h // w, MAX_SIDE, 3] and size == [w, h]
    grown_mb = (after - before) / 1024
    decoded_mb = w * h / 2**20  # one grey byte a pixel
    frame_mb = MAX_SIDE * MAX_SIDE * 3 / 2**20
    file_mb = path.stat().st_size / 2**20
    # the bound imageio states: file + decoder buffer + a few frames; a full-size BGR copy is 3x more
    assert grown_mb < file_mb + decoded_mb + 3 * frame_mb + 16, f"grew {grown_mb:.0f} MB"


def test_limits_are_consistent() -> None:
    # 120 MP of 8-bit grey fits the decoder's peak (twice the image): the pixel limit binds grey photos
    assert MAX_PIXELS * DECODE_COPIES <= MAX_DECODED_BYTES
    # the largest file, the decoder's peak and a few frames stay under the documented 1 GiB
    assert MAX_FILE_BYTES + MAX_DECODED_BYTES + 4 * MAX_SIDE**2 * 3 < 2**30 - 100 * 2**20


# -- damaged photos -----------------------------------------------------------------------------


def _scan_start(data: bytes) -> int:
    sos = data.find(b"\xff\xda")
    return sos + 2 + struct.unpack(">H", data[sos + 2 : sos + 4])[0]


def _damaged_jpegs() -> dict[str, bytes]:
    whole = _encode(".jpg", _photo())
    start = _scan_start(whole)
    mid = (start + len(whole)) // 2
    rng = np.random.default_rng(3)
    return {
        "cut-in-half-with-eoi": whole[:mid] + b"\xff\xd9",
        "random-garbage-mid-scan": whole[:mid]
        + rng.integers(0, 256, 400, np.uint8).tobytes()
        + whole[mid + 400 :],
        "zeros-mid-scan": whole[:mid] + bytes(400) + whole[mid + 400 :],
        "bytes-inserted-mid-scan": whole[:mid] + b"\x55" * 300 + whole[mid:],
    }


@pytest.mark.parametrize("case", sorted(_damaged_jpegs()))
def test_damaged_jpeg_is_refused_in_one_line_of_ours(tmp_path: Path, case: str) -> None:
    path = tmp_path / f"{case}.jpg"
    path.write_bytes(_damaged_jpegs()[case])
    code, out, err, _ = _cli(tmp_path, "read", str(path))
    assert (code, out) == (1, "")
    assert len(err.splitlines()) == 1, err  # libjpeg's own "Corrupt JPEG data" line stays off the terminal
    assert err.startswith(f"dicetower: error: {path}: damaged JPEG"), err


def test_damage_has_its_own_error_class_for_a_retry() -> None:
    for case, data in _damaged_jpegs().items():
        with pytest.raises(DamagedImageError):
            decode_image(data, case)
    with pytest.raises(ImageError) as info:
        decode_image(_png_bomb(50_000, 50_000), "bomb")
    assert not isinstance(info.value, DamagedImageError)  # too big is not a failed capture


def test_undamaged_jpeg_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "ok.jpg"
    path.write_bytes(_encode(".jpg", _photo()))
    assert load_image_info(path).frame.shape == (240, 320, 3)
    progressive = tmp_path / "progressive.jpg"
    ok, buf = cv2.imencode(
        ".jpg", _photo(), [cv2.IMWRITE_JPEG_PROGRESSIVE, 1, cv2.IMWRITE_JPEG_RST_INTERVAL, 4]
    )
    assert ok
    progressive.write_bytes(buf.tobytes())
    assert load_image_info(progressive).frame.shape == (240, 320, 3)


def test_png_with_a_bad_crc_gives_one_line_without_libpng_chatter(tmp_path: Path) -> None:
    data = bytearray(_encode(".png", _photo()))
    idat = data.find(b"IDAT")
    data[idat + 40 : idat + 80] = bytes(40)  # the chunk's CRC no longer matches
    path = tmp_path / "crc.png"
    path.write_bytes(bytes(data))
    code, out, err, _ = _cli(tmp_path, "read", str(path))
    assert (code, out) == (1, "")
    assert len(err.splitlines()) == 1 and "libpng" not in err.split(": ", 3)[1], err
    assert err.startswith(f"dicetower: error: {path}: cannot decode image"), err


def test_png_with_ihdr_out_of_place_names_it(tmp_path: Path) -> None:
    path = tmp_path / "noihdr.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100) + b"IEND")
    code, _, err, _ = _cli(tmp_path, "read", str(path))
    assert code == 1 and len(err.splitlines()) == 1 and "[ERROR" not in err, err
    assert "IHDR" in err


# -- formats ------------------------------------------------------------------------------------


@pytest.mark.parametrize("ext", [".gif", ".tiff", ".webp", ".ppm", ".pgm", ".pam", ".bmp", ".png", ".jpg"])
def test_every_checked_format_reads(tmp_path: Path, ext: str) -> None:
    img = _photo(64, 80)
    if ext == ".pgm":
        img = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    try:
        data = _encode(ext, img)
    except cv2.error:
        pytest.skip(f"this OpenCV cannot write {ext}")
    path = tmp_path / f"x{ext}"
    path.write_bytes(data)
    info = load_image_info(path)
    assert info.frame.shape == (64, 80, 3) and info.original_size == (80, 64)
    assert read_header(data).pixels == 80 * 64


@pytest.mark.parametrize(
    ("ext", "name"),
    [(".jp2", "JPEG 2000"), (".avif", "AVIF/HEIF"), (".hdr", "Radiance HDR"), (".ras", "Sun raster")],
)
def test_formats_without_a_header_check_are_refused_by_name(tmp_path: Path, ext: str, name: str) -> None:
    img = _photo(64, 80)
    try:
        data = _encode(ext, img.astype(np.float32) if ext == ".hdr" else img)
    except (cv2.error, AssertionError):
        pytest.skip(f"this OpenCV cannot write {ext}")
    path = tmp_path / f"x{ext}"
    path.write_bytes(data)
    with pytest.raises(ImageError, match=rf"x\{ext}: {name} images are not read \(use JPEG, PNG"):
        load_image_info(path)


def test_a_thin_strip_reports_its_real_size(tmp_path: Path) -> None:
    path = tmp_path / "strip.png"
    cv2.imwrite(str(path), np.full((8, 5000, 3), 90, np.uint8))
    code, _, err, _ = _cli(tmp_path, "read", str(path))
    assert code == 1 and len(err.splitlines()) == 1
    assert f"{path}: image too thin (5000x8 becomes 2048x3" in err, err
