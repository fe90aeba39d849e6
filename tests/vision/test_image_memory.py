"""What decoding each image layout costs, against what the header said it would.

The loader refuses a photo before decoding when its header promises more than
``MAX_DECODED_BYTES`` of decoding (:meth:`ImageHeader.peak_bytes`). That is only a bound if the
promise is never less than what the decoder takes, for every layout of every format read. Here
each layout is written, then decoded in a child process that measures its own peak resident
memory around each decode (``/proc/self/clear_refs`` resets the peak; a fixed mmap threshold
makes every large buffer its own mapping, so memory freed by one decode is not reused unseen by
the next).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.image_format import read_header

pytestmark = pytest.mark.skipif(
    not os.access("/proc/self/clear_refs", os.W_OK), reason="needs Linux's /proc/self/clear_refs"
)

W, H = 2000, 1500
#: What a decode may take beyond its estimate: the libraries' own small buffers.
SLACK = 4 * 2**20

#: Decodes every file in argv[1], with the decoder alone (the flags the loader uses) and through the
#: loader; prints {name: [decoder peak, loader peak, estimate, frame bytes]}.
CHILD = """
import ctypes, json, os, sys
import cv2, numpy as np
from dicetower.vision.image_format import read_header
from dicetower.vision.imageio import MAX_SIDE, decode_image
libc = ctypes.CDLL("libc.so.6")
REDUCED = {2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}
def kb(key):
    return int(next(l for l in open("/proc/self/status") if l.startswith(key)).split()[1]) * 1024
def peak(run):
    libc.malloc_trim(0)
    open("/proc/self/clear_refs", "w").write("5")
    before = kb("VmRSS")
    try:
        run()
    except ValueError:  # a decode that fails (the screen-only GIF) spends its memory all the same
        pass
    return kb("VmHWM") - before
out = {}
for name in sorted(os.listdir(sys.argv[1])):
    data = open(os.path.join(sys.argv[1], name), "rb").read()
    header = read_header(data)
    longest = max(header.width, header.height)
    reduce = next((f for f in (8, 4, 2) if header.kind == "jpeg" and longest / f >= MAX_SIDE), 1)
    flags = REDUCED[reduce] | cv2.IMREAD_IGNORE_ORIENTATION if reduce > 1 else cv2.IMREAD_UNCHANGED
    buf = np.frombuffer(data, np.uint8)
    decoder = peak(lambda: cv2.imdecode(buf, flags))
    loader = peak(lambda: decode_image(data, name))
    scale = min(1.0, MAX_SIDE / longest)
    frame = round(header.width * scale) * round(header.height * scale) * 3
    out[name] = [decoder, loader, header.peak_bytes(reduce), frame]
print(json.dumps(out))
"""


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png(rows: bytes, depth: int, colour: int, extra: bytes = b"", interlace: int = 0) -> bytes:
    ihdr = struct.pack(">IIBBBBB", W, H, depth, colour, 0, 0, interlace)
    idat = _chunk(b"IDAT", zlib.compress(rows, 1))
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + extra + idat + _chunk(b"IEND", b"")


def _rows(pixels: np.ndarray) -> bytes:
    """PNG scanlines (filter 0) of an HxW(xC) array already in the file's byte order."""
    flat = pixels.reshape(pixels.shape[0], -1)
    return b"".join(b"\x00" + row.tobytes() for row in flat)


def _adam7(pixels: np.ndarray) -> bytes:
    passes = [
        (0, 0, 8, 8),
        (4, 0, 8, 8),
        (0, 4, 4, 8),
        (2, 0, 4, 4),
        (0, 2, 2, 4),
        (1, 0, 2, 2),
        (0, 1, 1, 2),
    ]
    return b"".join(_rows(pixels[y::dy, x::dx]) for x, y, dx, dy in passes if pixels[y::dy, x::dx].size)


def _layouts() -> dict[str, bytes]:
    rng = np.random.default_rng(1)
    bgr = cv2.GaussianBlur(rng.integers(0, 256, (H, W, 3), dtype=np.uint8), (7, 7), 2)
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    bgra = np.dstack([bgr, grey])
    rgb = np.ascontiguousarray(bgr[:, :, ::-1])
    ga = np.dstack([grey, 255 - grey])
    ga16 = ga.astype(">u2") * 257
    palette = _chunk(b"PLTE", bytes(range(256)) * 3)
    bits = np.packbits(grey > 128, axis=1)
    files: dict[str, bytes] = {
        "png-grey-1bit.png": _png(_rows(bits), 1, 0),
        "png-grey-1bit-trns.png": _png(_rows(bits), 1, 0, _chunk(b"tRNS", b"\x00\x01")),
        "png-grey-8-trns.png": _png(_rows(grey), 8, 0, _chunk(b"tRNS", b"\x00\x10")),
        "png-grey-alpha-8.png": _png(_rows(ga), 8, 4),
        "png-grey-alpha-16.png": _png(_rows(ga16), 16, 4),
        "png-grey-alpha-16-interlaced.png": _png(_adam7(ga16), 16, 4, interlace=1),
        "png-rgb-8-interlaced.png": _png(_adam7(rgb), 8, 2, interlace=1),
        "png-rgb-8-trns.png": _png(_rows(rgb), 8, 2, _chunk(b"tRNS", b"\x00\x10\x00\x10\x00\x10")),
        "png-rgb-16-trns.png": _png(_rows(rgb.astype(">u2") * 257), 16, 2, _chunk(b"tRNS", bytes(6))),
        "png-palette.png": _png(_rows(grey), 8, 3, palette),
        "png-palette-trns.png": _png(_rows(grey), 8, 3, palette + _chunk(b"tRNS", bytes(range(256)))),
    }
    written = {
        "png-grey-8.png": (grey, []),
        "png-grey-16.png": (grey.astype(np.uint16) * 257, []),
        "png-rgb-8.png": (bgr, []),
        "png-rgb-16.png": (bgr.astype(np.uint16) * 257, []),
        "png-rgba-8.png": (bgra, []),
        "png-rgba-16.png": (bgra.astype(np.uint16) * 257, []),
        "jpeg-grey.jpg": (grey, []),
        "jpeg-colour.jpg": (bgr, []),
        "jpeg-progressive.jpg": (bgr, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1]),
        "jpeg-progressive-444.jpg": (
            bgr,
            [
                cv2.IMWRITE_JPEG_PROGRESSIVE,
                1,
                cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
                cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444,
            ],
        ),
        "jpeg-progressive-reduced.jpg": (cv2.resize(bgr, (4400, 1500)), [cv2.IMWRITE_JPEG_PROGRESSIVE, 1]),
        "bmp-8.bmp": (grey, []),
        "bmp-24.bmp": (bgr, []),
        "bmp-32.bmp": (bgra, []),
        "tiff-grey-8.tiff": (grey, []),
        "tiff-rgb-8.tiff": (bgr, []),
        "tiff-rgba-8.tiff": (bgra, []),
        "tiff-rgb-16.tiff": (bgr.astype(np.uint16) * 257, []),
        "tiff-rgba-16.tiff": (bgra.astype(np.uint16) * 257, []),
        "tiff-grey-float32.tiff": (grey.astype(np.float32) / 255, []),
        "tiff-rgb-float32.tiff": (bgr.astype(np.float32) / 255, []),
        "tiff-rgb-float64.tiff": (bgr.astype(np.float64) / 255, []),
        "tiff-rgb-int32.tiff": (bgr.astype(np.int32), []),
        "webp-lossy.webp": (bgr, []),
        "webp-lossless-alpha.webp": (bgra, [cv2.IMWRITE_WEBP_QUALITY, 101]),
        "gif.gif": (bgr, []),
        "pnm-grey-8.pgm": (grey, []),
        "pnm-grey-16.pgm": (grey.astype(np.uint16) * 257, []),
        "pnm-colour-8.ppm": (bgr, []),
        "pnm-colour-16.ppm": (bgr.astype(np.uint16) * 257, []),
        "pnm-bitmap.pbm": ((grey > 128).astype(np.uint8) * 255, []),
    }
    for name, (pixels, params) in written.items():
        try:
            ok, buf = cv2.imencode(Path(name).suffix, pixels, params)
        except cv2.error:
            continue  # this OpenCV cannot write that layout
        if ok:
            files[name] = buf.tobytes()
    # a GIF whose one 16x16 image sits on a logical screen of W x H: the decoder's canvases are the screen's
    screen = b"GIF89a" + struct.pack("<HHBBB", W, H, 0, 0, 0)
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, 16, 16, 0x80) + bytes(6) + b"\x02\x02\x44\x01\x00"
    files["gif-screen.gif"] = screen + image + b"\x3b"
    return files


@pytest.mark.slow
def test_every_layout_decodes_within_what_its_header_promised(tmp_path: Path) -> None:
    folder = tmp_path / "layouts"
    folder.mkdir()
    for name, data in _layouts().items():
        (folder / name).write_bytes(data)
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(128 * 1024)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder)], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout)
    assert len(measured) >= 40
    over = {
        name: f"decoder {decoder / 2**20:.1f} MiB > {estimate / 2**20:.1f} MiB"
        for name, (decoder, _, estimate, _) in measured.items()
        if decoder > estimate + SLACK
    }
    assert not over, over
    # the whole load: the decoder's peak, then at most two frames of at most MAX_SIDE squared
    over = {
        name: f"loader {loader / 2**20:.1f} MiB > {estimate / 2**20:.1f} MiB + 2 frames"
        for name, (_, loader, estimate, frame) in measured.items()
        if loader > estimate + 2 * frame + SLACK
    }
    assert not over, over


def test_headers_say_what_the_decoder_returns() -> None:
    """The layout OpenCV hands back, checked against a real decode of a small file of each kind."""
    for name, data in _layouts().items():
        if name.startswith("gif-screen"):
            continue
        header = read_header(data)
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
        if image is None:
            continue
        channels = 1 if image.ndim == 2 else image.shape[2]
        assert channels <= header.channels, name
        assert image.dtype.itemsize <= header.sample_bytes, name
        assert image.nbytes <= header.decoded_bytes, name
