"""Load photos and check camera frames: every frame the reader sees is BGR ``uint8``.

Bad input is answered with one :class:`ImageError` naming the file, never a crash, a hang
or a silently half-decoded picture:

* missing, empty, non-image and truncated files are refused. OpenCV's decoders return
  the decoded part of a truncated JPEG with only a warning on stderr, so the file's
  structure is checked first (a JPEG's scan must end in an EOI marker, a PNG in ``IEND``,
  a BMP must be as long as its header says);
* the header's width and height are read before decoding, so a decompression bomb is
  refused (more than :data:`MAX_PIXELS`) before any pixel buffer is allocated;
* frames larger than :data:`MAX_SIDE` on their longest side are downscaled: JPEGs by the
  decoder itself (``IMREAD_REDUCED_COLOR_2/4/8``, cheap), then by ``INTER_AREA`` resizing
  to at most :data:`MAX_SIDE`. :func:`load_image_info` returns the factor applied, so boxes
  read from the frame can be mapped back to the photo's pixels (divide by ``scale``);
* grey, 16-bit, float and alpha images are converted to 8-bit BGR;
* EXIF orientation is not applied: frames keep the stored pixel order, which is the
  order dataset boxes are given in.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_PIXELS",
    "MAX_SIDE",
    "MIN_SIDE",
    "ImageError",
    "LoadedImage",
    "check_frame",
    "decode_image",
    "image_size",
    "load_image",
    "load_image_info",
]

#: Longest side of a frame handed to the reader; larger photos are downscaled to this.
MAX_SIDE = 2048
#: Photos with more pixels than this (per the header) are refused before decoding.
MAX_PIXELS = 120_000_000
#: Files larger than this are refused unread (a 50 MP JPEG is ~20 MB, a raw 50 MP BMP ~150 MB).
MAX_FILE_BYTES = 256 * 1024 * 1024
#: A frame smaller than this on either side cannot hold a readable die.
MIN_SIDE = 8

#: JPEG segment walk bound: real files have a few dozen segments before the first scan.
_MAX_JPEG_SEGMENTS = 4096
#: JPEG start-of-frame markers (baseline, progressive, lossless, arithmetic): they carry the size.
_SOF_MARKERS = frozenset((0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF))
_REDUCED = {2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}


class ImageError(ValueError):
    """A photo or frame that cannot be read; the message names the file (or ``frame``)."""


@dataclass(frozen=True)
class LoadedImage:
    """A decoded frame and how it relates to the file's pixels."""

    frame: np.ndarray  #: BGR uint8, longest side <= MAX_SIDE
    scale: float  #: frame pixels per photo pixel (1.0 unless downscaled)
    original_size: tuple[int, int]  #: (width, height) of the photo as stored


def load_image(path: str | Path) -> np.ndarray:
    """Return the photo at ``path`` as a BGR ``uint8`` array (downscaled if huge)."""
    return load_image_info(path).frame


def load_image_info(path: str | Path) -> LoadedImage:
    """Decode ``path`` like :func:`load_image` and also report the downscale factor."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ImageError(f"{path}: cannot read image: {exc.strerror or exc}") from None
    if not path.is_file():
        raise ImageError(f"{path}: not a file")
    if size == 0:
        raise ImageError(f"{path}: empty file (0 bytes)")
    if size > MAX_FILE_BYTES:
        raise ImageError(f"{path}: file too large ({size} bytes > {MAX_FILE_BYTES})")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImageError(f"{path}: cannot read image: {exc.strerror or exc}") from None
    return decode_image(data, name=str(path))


def decode_image(data: bytes, name: str = "image") -> LoadedImage:
    """Decode an encoded photo held in memory (same checks as :func:`load_image_info`)."""
    kind = _kind(data)
    if kind is None:
        raise ImageError(f"{name}: not an image (unrecognised file header)")
    _check_complete(data, kind, name)
    dims = image_size(data)
    if dims is not None:
        w, h = dims
        if w <= 0 or h <= 0:
            raise ImageError(f"{name}: image header says {w}x{h}")
        if w * h > MAX_PIXELS:
            raise ImageError(f"{name}: image too large ({w}x{h} > {MAX_PIXELS} pixels)")
    buf = np.frombuffer(data, dtype=np.uint8)
    reduce = _decoder_reduction(kind, dims)
    try:
        if reduce > 1:
            img = cv2.imdecode(buf, _REDUCED[reduce] | cv2.IMREAD_IGNORE_ORIENTATION)
        else:
            img = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)
    except cv2.error as exc:
        raise ImageError(f"{name}: cannot decode image: {str(exc).strip().splitlines()[-1]}") from None
    if img is None or img.size == 0:
        raise ImageError(f"{name}: cannot decode image (corrupt or unsupported {kind})")
    frame = _to_bgr8(img, name)
    oh, ow = frame.shape[:2]
    stored = dims if dims is not None else (ow * reduce, oh * reduce)
    if max(ow, oh) > MAX_SIDE:
        f = MAX_SIDE / max(ow, oh)
        target = (max(1, round(ow * f)), max(1, round(oh * f)))
        frame = cv2.resize(frame, target, interpolation=cv2.INTER_AREA)
    _check_dims(frame, name)
    scale = frame.shape[1] / stored[0] if stored[0] else 1.0
    return LoadedImage(np.ascontiguousarray(frame), 1.0 if abs(scale - 1.0) < 1e-9 else scale, stored)


def check_frame(frame: object, name: str = "frame") -> np.ndarray:
    """Validate a frame from a camera (or caller) and return it as contiguous BGR ``uint8``.

    Accepts 2-D grey, 3-channel BGR and 4-channel BGRA arrays of ``uint8``, ``uint16``
    or float (0..1 when the maximum is <= 1, else 0..255). Oversized frames are refused
    rather than resized: a camera configured for 50 MP is a setup error to report.
    """
    if not isinstance(frame, np.ndarray):
        raise ImageError(f"{name}: expected a numpy array, got {type(frame).__name__}")
    if frame.size == 0:
        raise ImageError(f"{name}: empty array {frame.shape}")
    if frame.ndim not in (2, 3) or (frame.ndim == 3 and frame.shape[2] not in (1, 2, 3, 4)):
        raise ImageError(f"{name}: expected HxW or HxWxC (C in 1-4) array, got shape {frame.shape}")
    h, w = frame.shape[:2]
    if h * w > MAX_PIXELS:
        raise ImageError(f"{name}: frame too large ({w}x{h} > {MAX_PIXELS} pixels)")
    out = _to_bgr8(frame, name)
    _check_dims(out, name)
    return np.ascontiguousarray(out)


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, JPEG or BMP header without decoding; None if unknown."""
    kind = _kind(data)
    try:
        if kind == "png" and data[12:16] == b"IHDR":
            w, h = struct.unpack(">II", data[16:24])
            return int(w), int(h)
        if kind == "bmp":
            header = struct.unpack("<I", data[14:18])[0]
            if header == 12:
                w, h = struct.unpack("<HH", data[18:22])
            else:
                w, h = struct.unpack("<ii", data[18:26])
            return abs(int(w)), abs(int(h))
        if kind == "jpeg":
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _kind(data: bytes) -> str | None:
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:2] == b"BM" and len(data) >= 26:
        return "bmp"
    if data[:4] in (b"II*\x00", b"MM\x00*"):
        return "tiff"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if data[:2] in (b"P1", b"P2", b"P3", b"P4", b"P5", b"P6"):
        return "pnm"
    return None


def _jpeg_segments(data: bytes) -> tuple[tuple[int, int] | None, int | None]:
    """Walk the marker segments up to the first scan: (frame size, offset of SOS)."""
    pos, size, n = 2, None, 0
    while pos + 4 <= len(data) and n < _MAX_JPEG_SEGMENTS:
        n += 1
        if data[pos] != 0xFF:
            return size, None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # stand-alone markers
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if marker == 0xDA:
            return size, pos
        if marker in _SOF_MARKERS and pos + 9 <= len(data):
            h, w = struct.unpack(">HH", data[pos + 5 : pos + 9])
            size = (int(w), int(h))
        pos += 2 + length
    return size, None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    return _jpeg_segments(data)[0]


def _check_complete(data: bytes, kind: str, name: str) -> None:
    if kind == "jpeg":
        _, sos = _jpeg_segments(data)
        # Entropy-coded data never contains FF D9 (FF is stuffed as FF 00), so an EOI
        # after the first scan marker means the scans ended; without one the file was cut.
        if sos is None or data.find(b"\xff\xd9", sos) < 0:
            raise ImageError(f"{name}: truncated JPEG (no end-of-image marker after the scan)")
    elif kind == "png":
        if data.rfind(b"IEND") < 0:  # anywhere: some writers append data after the last chunk
            raise ImageError(f"{name}: truncated PNG (no IEND chunk)")
    elif kind == "bmp":
        declared = struct.unpack("<I", data[2:6])[0]
        offset = struct.unpack("<I", data[10:14])[0]
        if len(data) < declared or len(data) <= offset:
            raise ImageError(f"{name}: truncated BMP ({len(data)} of {max(declared, offset)} bytes)")


def _decoder_reduction(kind: str, dims: tuple[int, int] | None) -> int:
    """The largest JPEG decoder reduction (1, 2, 4, 8) that keeps the longest side >= MAX_SIDE."""
    if kind != "jpeg" or dims is None:
        return 1
    longest = max(dims)
    for f in (8, 4, 2):
        if longest / f >= MAX_SIDE:
            return f
    return 1


def _to_bgr8(img: np.ndarray, name: str) -> np.ndarray:
    if img.dtype == np.uint16:
        img = (img >> 8).astype(np.uint8)
    elif img.dtype in (np.float32, np.float64, np.float16):
        if not np.isfinite(img).all():
            raise ImageError(f"{name}: image has NaN or infinite values")
        top = 1.0 if float(img.max(initial=0.0)) <= 1.0 else 255.0
        img = np.clip(img * (255.0 / top), 0, 255).round().astype(np.uint8)
    elif img.dtype == np.int8 or img.dtype == np.int16 or img.dtype == np.int32:
        img = np.clip(img, 0, 255).astype(np.uint8)
    elif img.dtype == np.bool_:
        img = img.astype(np.uint8) * 255
    elif img.dtype != np.uint8:
        raise ImageError(f"{name}: unsupported pixel type {img.dtype}")
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    if img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    channels = img.shape[2]
    if channels == 2:  # grey + alpha
        return cv2.cvtColor(np.ascontiguousarray(img[:, :, 0]), cv2.COLOR_GRAY2BGR)
    if channels == 4:
        return np.ascontiguousarray(img[:, :, :3])
    if channels == 3:
        return img
    raise ImageError(f"{name}: unsupported channel count {channels}")


def _check_dims(frame: np.ndarray, name: str) -> None:
    h, w = frame.shape[:2]
    if min(h, w) < MIN_SIDE:
        raise ImageError(f"{name}: image too small ({w}x{h}; need at least {MIN_SIDE} px a side)")
