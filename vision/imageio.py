"""Load photos and check camera frames: every frame the reader sees is BGR ``uint8``.

Bad input is answered with one :class:`ImageError` naming the file, never a crash, a hang
or a silently half-decoded picture:

* missing, empty, non-image and truncated files are refused. OpenCV's decoders return
  the decoded part of a truncated JPEG with only a warning on stderr, so the file's
  structure is checked first (:mod:`dicetower.vision.image_format`: a JPEG's scan must end
  in an EOI marker, a PNG in ``IEND``, a BMP must be as long as its header says);
* damaged JPEGs are refused: an illegal marker inside the scan data, or libjpeg's
  "Corrupt JPEG data" warning during the decode (a JPEG cut short with an end marker
  appended, garbage written over part of the scan). The decoders' own messages never
  reach the terminal (:mod:`dicetower.vision.quiet`); the error says what they said;
* the header's width and height are read before decoding, for every format decoded (JPEG,
  PNG, BMP, TIFF, WebP, GIF, PNM); the other formats OpenCV reads (JPEG 2000, AVIF, HDR,
  ...) are refused by name. So a decompression bomb is refused (more than
  :data:`MAX_PIXELS`, or a decoder's peak over :data:`MAX_DECODED_BYTES`: twice the image it
  returns, in the layout OpenCV returns it, plus its working memory, per
  :meth:`~dicetower.vision.image_format.ImageHeader.peak_bytes`) before any pixel buffer is
  allocated;
* frames larger than :data:`MAX_SIDE` on their longest side are downscaled: JPEGs by the
  decoder itself (``IMREAD_REDUCED_COLOR_2/4/8``, cheap), then by ``INTER_AREA`` resizing
  to at most :data:`MAX_SIDE`. :func:`load_image_info` returns the factor applied, so boxes
  read from the frame can be mapped back to the photo's pixels (divide by ``scale``).
  Resizing comes before the conversion to BGR, so a grey or 16-bit photo is never held
  at full size twice; a pixel type ``cv2.resize`` does not take (8- and 32-bit integers,
  16-bit floats) is made 8-bit a band of rows at a time first;
* grey, 16-bit, float and alpha images are converted to 8-bit BGR;
* EXIF orientation is not applied: frames keep the stored pixel order, which is the
  order dataset boxes are given in.

Peak memory of one load is bounded by the file (at most :data:`MAX_FILE_BYTES`) plus the
decoder's peak (at most :data:`MAX_DECODED_BYTES`) plus a few frames of at most
:data:`MAX_SIDE` squared: under 1 GiB for the worst file accepted, and for a JPEG (decoded
reduced) about the file plus 64 MB. ``docs/limits.md`` lists these limits.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from .errors import VisionError
from .files import read_bounded
from .image_format import (
    FormatError,
    ImageHeader,
    detect_format,
    jpeg_scan_problem,
    read_header,
    truncation_problem,
)
from .quiet import captured_stderr

__all__ = [
    "MAX_DECODED_BYTES",
    "MAX_FILE_BYTES",
    "MAX_PIXELS",
    "MAX_SIDE",
    "MIN_SIDE",
    "DamagedImageError",
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
#: The decoder's peak (twice width x height x channels x bytes a sample, plus its working memory,
#: per the header) may not exceed this: 89 MP of 8-bit RGB, 67 MP of 8-bit RGBA or 44 MP of 16-bit
#: RGB fit; bigger is refused.
MAX_DECODED_BYTES = 512 * 1024 * 1024
#: Files larger than this are refused unread (a 50 MP JPEG is ~20 MB, a raw 50 MP BMP ~150 MB).
MAX_FILE_BYTES = 256 * 1024 * 1024
#: A frame smaller than this on either side cannot hold a readable die.
MIN_SIDE = 8

#: libjpeg's warnings for data it had to make up (JWRN_HIT_MARKER, JWRN_EXTRANEOUS_DATA,
#: JWRN_HUFF_BAD_CODE, JWRN_JPEG_EOF, JWRN_MUST_RESYNC...): all begin with one of these.
_JPEG_DAMAGE = ("Corrupt JPEG data", "Premature end of JPEG", "Invalid SOS", "Warning: unknown JFIF")
#: Pixel types cv2.resize takes as they are (the rest are converted to 8-bit first, in bands).
_RESIZABLE = (
    np.dtype(np.uint8),
    np.dtype(np.uint16),
    np.dtype(np.int16),
    np.dtype(np.float32),
    np.dtype(np.float64),
)
#: Rows converted at a time when a full-size image must be made 8-bit before it is downscaled.
_BAND_ROWS = 256
_REDUCED = {2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}


class ImageError(VisionError, ValueError):
    """A photo or frame that cannot be read; the message names the file (or ``frame``)."""


class DamagedImageError(ImageError):
    """An image whose data is cut short or corrupt (not one that is merely too big or unsupported).

    A camera that hands over such a frame had a failed capture: the tower retries it, and never
    reads a roll from it.
    """


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
        data = read_bounded(path, MAX_FILE_BYTES)
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise ImageError(f"{path}: file too large ({exc.strerror})") from None
        if exc.errno == errno.EINVAL:
            raise ImageError(f"{path}: {exc.strerror}") from None
        raise ImageError(f"{path}: cannot read image: {exc.strerror or exc}") from None
    if not data:
        raise ImageError(f"{path}: empty file (0 bytes)")
    return decode_image(data, name=str(path))


def decode_image(data: bytes, name: str = "image") -> LoadedImage:
    """Decode an encoded photo held in memory (same checks as :func:`load_image_info`)."""
    header = _checked_header(data, name)
    w, h = header.width, header.height
    buf = np.frombuffer(data, dtype=np.uint8)
    reduce = _decoder_reduction(header)
    flags = _REDUCED[reduce] | cv2.IMREAD_IGNORE_ORIENTATION if reduce > 1 else cv2.IMREAD_UNCHANGED
    failure = None
    with captured_stderr() as chatter:
        try:
            img = cv2.imdecode(buf, flags)
        except cv2.error as exc:
            img, failure = None, str(exc).strip().splitlines()[-1]
    said = _first_line(chatter.text)
    if header.kind == "jpeg" and any(w in chatter.text for w in _JPEG_DAMAGE):
        raise DamagedImageError(f"{name}: damaged JPEG (the decoder says: {said})")
    if failure is not None:
        raise ImageError(f"{name}: cannot decode image: {failure}")
    if img is None or img.size == 0:
        why = f": {said}" if said else ""
        raise DamagedImageError(
            f"{name}: cannot decode image (corrupt or unsupported {header.kind.upper()}){why}"
        )
    oh, ow = img.shape[:2]
    if max(ow, oh) > MAX_SIDE:
        f = MAX_SIDE / max(ow, oh)
        target = (max(1, round(ow * f)), max(1, round(oh * f)))
        if img.dtype not in _RESIZABLE:
            img = _to_uint8_in_bands(img, name)  # one 8-bit copy, never a float copy of the whole
        if img.ndim == 2 or img.shape[2] <= 4:
            img = cv2.resize(img, target, interpolation=cv2.INTER_AREA)  # before BGR: one full copy only
            frame = _to_bgr8(img, name)
        else:
            frame = cv2.resize(_to_bgr8(img, name), target, interpolation=cv2.INTER_AREA)
    else:
        frame = _to_bgr8(img, name)
    _check_dims(frame, name, (w, h))
    scale = frame.shape[1] / w
    return LoadedImage(np.ascontiguousarray(frame), 1.0 if abs(scale - 1.0) < 1e-9 else scale, (w, h))


def _checked_header(data: bytes, name: str) -> ImageHeader:
    """The header of a complete, undamaged file whose decode fits the limits; else ImageError."""
    try:
        kind = detect_format(data)
    except FormatError as exc:
        raise ImageError(f"{name}: {exc}") from None
    header: ImageHeader | None = None
    header_error = None
    try:
        header = read_header(data)
    except FormatError as exc:
        header_error = str(exc)
    problem = truncation_problem(data, kind, header)
    if problem is not None:
        raise DamagedImageError(f"{name}: {problem}")
    if header is None:
        raise ImageError(f"{name}: {header_error}")
    w, h = header.width, header.height
    if w <= 0 or h <= 0:
        raise ImageError(f"{name}: image header says {w}x{h}")
    if header.pixels > MAX_PIXELS:
        raise ImageError(f"{name}: image too large ({w}x{h} > {MAX_PIXELS} pixels)")
    peak = header.peak_bytes(_decoder_reduction(header))
    if peak > MAX_DECODED_BYTES:
        layout = f"{header.channels} channel(s) of {8 * header.sample_bytes} bits"
        raise ImageError(
            f"{name}: image too large to decode ({w}x{h}, {layout}: decoding takes {peak >> 20} MiB"
            f" > {MAX_DECODED_BYTES >> 20} MiB)"
        )
    _check_shape(w, h, name)
    if kind == "jpeg":
        problem = jpeg_scan_problem(data)
        if problem is not None:
            raise DamagedImageError(f"{name}: {problem}")
    return header


def _first_line(text: str) -> str:
    """The first line the decoder wrote (at most 200 characters), to quote in our error."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:200]
    return ""


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
    """(width, height) from the header of any format decoded, without decoding; None if unknown."""
    try:
        header = read_header(data)
    except FormatError:
        return None
    return header.width, header.height


def _decoder_reduction(header: ImageHeader) -> int:
    """The largest JPEG decoder reduction (1, 2, 4, 8) that keeps the longest side >= MAX_SIDE."""
    if header.kind != "jpeg":
        return 1
    longest = max(header.width, header.height)
    for f in (8, 4, 2):
        if longest / f >= MAX_SIDE:
            return f
    return 1


def _float_top(img: np.ndarray, name: str) -> float:
    """The full scale of a float image: 1.0 when every value is at most 1, else 255 (NaN refused)."""
    top = 0.0
    for start in range(0, img.shape[0], _BAND_ROWS):
        band = img[start : start + _BAND_ROWS]
        if not np.isfinite(band).all():
            raise ImageError(f"{name}: image has NaN or infinite values")
        top = max(top, float(band.max(initial=0.0)))
    return 1.0 if top <= 1.0 else 255.0


def _to_uint8(img: np.ndarray, name: str, top: float = 255.0) -> np.ndarray:
    """``img`` as 8-bit samples, channels as they are (``top``: a float image's full scale)."""
    if img.dtype == np.uint16:
        return (img >> 8).astype(np.uint8)
    if img.dtype in (np.float32, np.float64, np.float16):
        return np.clip(img * (255.0 / top), 0, 255).round().astype(np.uint8)
    if img.dtype == np.int8 or img.dtype == np.int16 or img.dtype == np.int32:
        return np.clip(img, 0, 255).astype(np.uint8)
    if img.dtype == np.bool_:
        return img.astype(np.uint8) * 255
    if img.dtype != np.uint8:
        raise ImageError(f"{name}: unsupported pixel type {img.dtype}")
    return img


def _to_uint8_in_bands(img: np.ndarray, name: str) -> np.ndarray:
    """:func:`_to_uint8` of a full-size image a band of rows at a time: the whole is held once
    more in 8 bits, never in a wider type (a float64 copy of a 50 MP image is 1.2 GB)."""
    top = _float_top(img, name) if img.dtype.kind == "f" else 255.0
    out = np.empty(img.shape, np.uint8)
    for start in range(0, img.shape[0], _BAND_ROWS):
        out[start : start + _BAND_ROWS] = _to_uint8(img[start : start + _BAND_ROWS], name, top)
    return out


def _to_bgr8(img: np.ndarray, name: str) -> np.ndarray:
    if img.dtype != np.uint8:
        img = _to_uint8_in_bands(img, name)
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


def _fitted(w: int, h: int) -> tuple[int, int]:
    """The size a ``w`` x ``h`` photo has once downscaled to fit :data:`MAX_SIDE`."""
    if max(w, h) <= MAX_SIDE:
        return w, h
    f = MAX_SIDE / max(w, h)
    return max(1, round(w * f)), max(1, round(h * f))


def _check_shape(w: int, h: int, name: str) -> None:
    """Refuse, from the header, photos too small to hold a die or too thin once downscaled."""
    if min(w, h) < MIN_SIDE:
        raise ImageError(f"{name}: image too small ({w}x{h}; need at least {MIN_SIDE} px a side)")
    fw, fh = _fitted(w, h)
    if min(fw, fh) < MIN_SIDE:
        raise ImageError(
            f"{name}: image too thin ({w}x{h} becomes {fw}x{fh} when downscaled to {MAX_SIDE} px;"
            f" need at least {MIN_SIDE} px a side)"
        )


def _check_dims(frame: np.ndarray, name: str, stored: tuple[int, int] | None = None) -> None:
    h, w = frame.shape[:2]
    if min(h, w) < MIN_SIDE:
        size = f"{w}x{h}"
        if stored is not None and stored != (w, h):
            size = f"{stored[0]}x{stored[1]}, read as {w}x{h}"
        raise ImageError(f"{name}: image too small ({size}; need at least {MIN_SIDE} px a side)")
