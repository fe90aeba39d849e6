"""What an image file's bytes say before any pixel is decoded: its format, size and completeness.

Why a parser of our own per format: OpenCV allocates the whole pixel buffer from the header's
width and height before it decodes a byte of it, so a 10 KB WebP that claims 16383x16383
costs 1 GB, and a 9 MB TIFF claiming 30000x30000 costs 3.6 GB. Reading the header first lets
:mod:`dicetower.vision.imageio` refuse such files for the price of reading a few bytes.

Every format OpenCV's ``imdecode`` accepts is either parsed here (JPEG, PNG, BMP, TIFF, WebP,
GIF, PNM/PAM) or recognised and refused by name (JPEG 2000, AVIF/HEIF, OpenEXR, Radiance HDR,
Sun raster, PFM): a format whose header is not checked is never decoded.

Each parser also returns what the decoder will allocate, so the memory bound is on bytes, not
pixels: the channels and bytes a sample of the image OpenCV hands back (``IMREAD_UNCHANGED``, as
:mod:`~dicetower.vision.imageio` reads; the worst case where the header does not say), and the
working memory its decoder holds besides (:attr:`ImageHeader.work_bytes`). Measured with OpenCV
5.1 (``tests/vision/test_hostile_images.py`` measures every layout again): ``imdecode`` peaks at
twice the image it returns, for every format (:data:`DECODE_COPIES`); a 16-bit grey+alpha PNG
comes back as four 16-bit channels, not two; a GIF decoder holds about 8 bytes a pixel of the
logical screen besides; WebP its YUV or ARGB planes; TIFF one strip or tile; a progressive
JPEG every DCT coefficient of the full-size image, whatever scale it is decoded at.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

import numpy as np

from .errors import VisionError

__all__ = [
    "DECODE_COPIES",
    "SUPPORTED_FORMATS",
    "FormatError",
    "ImageHeader",
    "detect_format",
    "jpeg_scan_problem",
    "read_header",
    "truncation_problem",
]

#: The formats whose headers are parsed; the others OpenCV reads are refused by name.
SUPPORTED_FORMATS = ("JPEG", "PNG", "BMP", "TIFF", "WebP", "GIF", "PNM")
#: ``cv2.imdecode`` decodes into a buffer of its own and copies the image out: its peak is this
#: many times the image it returns (measured 2.0 for every format with OpenCV 5.1).
DECODE_COPIES = 2
#: Bytes a pixel of the logical screen OpenCV's GIF decoder holds besides the image (measured 7.3).
_GIF_WORK_PER_PIXEL = 8
#: Bytes a pixel WebP decoding holds besides the image (YUV planes, 1.5; ARGB rows).
_WEBP_WORK_PER_PIXEL = 2
#: PNG chunks walked before the first IDAT (looking for tRNS, which adds an alpha channel).
_MAX_PNG_CHUNKS = 4096
#: JPEG start-of-frame markers of progressive frames: the decoder keeps every coefficient.
_PROGRESSIVE_SOF = frozenset((0xC2, 0xC6, 0xCA, 0xCE))

#: JPEG segment walk bound: real files have a few dozen segments before the first scan.
_MAX_JPEG_SEGMENTS = 4096
#: GIF blocks walked before the first image descriptor (extensions, comments).
_MAX_GIF_BLOCKS = 65536
#: TIFF directory entries read (the standard tags are a few dozen).
_MAX_TIFF_ENTRIES = 4096
#: JPEG start-of-frame markers (baseline, progressive, lossless, arithmetic): they carry the size.
_SOF_MARKERS = frozenset((0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF))
#: What may follow an 0xFF inside a JPEG's scans: stuffing (00), restarts (D0-D7), fill (FF),
#: and the markers a progressive or multi-scan file puts between scans (DHT, DAC, SOS, DQT,
#: DNL, DRI, APPn, COM) or at the end (EOI). Anything else means the entropy data is damaged.
_SCAN_FOLLOWERS = np.zeros(256, bool)
_SCAN_FOLLOWERS[[0x00, 0xFF, 0xC4, 0xCC, 0xD9, 0xDA, 0xDB, 0xDC, 0xDD, 0xFE]] = True
_SCAN_FOLLOWERS[0xD0:0xD8] = True
_SCAN_FOLLOWERS[0xE0:0xF0] = True

#: Formats OpenCV decodes whose headers are not parsed: (magic test, name).
_REFUSED = (
    (lambda d: d[:12] == b"\x00\x00\x00\x0cjP  \r\n\x87\n" or d[:4] == b"\xff\x4f\xff\x51", "JPEG 2000"),
    (lambda d: d[4:8] == b"ftyp" and d[8:12] in (b"avif", b"avis", b"heic", b"heix", b"mif1"), "AVIF/HEIF"),
    (lambda d: d[:4] == b"\x76\x2f\x31\x01", "OpenEXR"),
    (lambda d: d[:10] == b"#?RADIANCE" or d[:6] == b"#?RGBE", "Radiance HDR"),
    (lambda d: d[:4] == b"\x59\xa6\x6a\x95", "Sun raster"),
    (lambda d: d[:3] in (b"PF\n", b"Pf\n", b"PF\r", b"Pf\r", b"PF ", b"Pf "), "PFM"),
)


class FormatError(VisionError, ValueError):
    """A file whose header is not an image's, or is an image format not read (no file name)."""


@dataclass(frozen=True)
class ImageHeader:
    """The size and sample layout a header promises, and what decoding it holds in memory."""

    kind: str  #: "jpeg", "png", "bmp", "tiff", "webp", "gif" or "pnm"
    width: int
    height: int
    channels: int = 4  #: samples per pixel the decoder returns (4 when the header does not say)
    sample_bytes: int = 1  #: bytes per sample the decoder returns
    work_bytes: int = 0  #: what the decoder holds besides the image (canvases, planes, a strip)

    @property
    def pixels(self) -> int:
        return self.width * self.height

    @property
    def decoded_bytes(self) -> int:
        """Size of the full-size image the decoder returns."""
        return self.pixels * self.channels * self.sample_bytes

    def peak_bytes(self, reduce: int = 1) -> int:
        """Most memory decoding takes, the image scaled down ``reduce`` times by the decoder (JPEG):
        :data:`DECODE_COPIES` times the image returned, plus the decoder's working memory."""
        w, h = -(-self.width // reduce), -(-self.height // reduce)
        return DECODE_COPIES * w * h * self.channels * self.sample_bytes + self.work_bytes


def detect_format(data: bytes) -> str:
    """The format named by the file's first bytes; :class:`FormatError` if none is read."""
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
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if len(data) >= 3 and data[:1] == b"P" and data[1:2] in b"1234567" and data[2:3].isspace():
        return "pnm"
    for test, name in _REFUSED:
        if test(data):
            raise FormatError(f"{name} images are not read (use {', '.join(SUPPORTED_FORMATS)})")
    raise FormatError("not an image (unrecognised file header)")


def read_header(data: bytes) -> ImageHeader:
    """Parse the header of ``data``: its format, size and the decoder's sample layout."""
    kind = detect_format(data)
    try:
        header = _PARSERS[kind](data)
    except (struct.error, IndexError, ValueError) as exc:
        if isinstance(exc, FormatError):
            raise
        raise FormatError(f"damaged {kind.upper()} header") from None
    if header is None:
        raise FormatError(f"damaged {kind.upper()} header (no image size in it)")
    return header


def truncation_problem(data: bytes, kind: str, header: ImageHeader | None = None) -> str | None:
    """Why the file is visibly incomplete (cut short), or None: a check on structure, not pixels.

    ``kind`` is :func:`detect_format`'s; ``header`` (when it parsed) lets a PNM's size be checked.
    """
    if kind == "jpeg":
        _, sos = _jpeg_segments(data)
        # Entropy-coded data never contains FF D9 (FF is stuffed as FF 00), so an EOI
        # after the first scan marker means the scans ended; without one the file was cut.
        if sos is None or data.find(b"\xff\xd9", sos) < 0:
            return "truncated JPEG (no end-of-image marker after the scan)"
    elif kind == "png":
        if data.rfind(b"IEND") < 0:  # anywhere: some writers append data after the last chunk
            return "truncated PNG (no IEND chunk)"
    elif kind == "bmp":
        declared = struct.unpack("<I", data[2:6])[0]
        offset = struct.unpack("<I", data[10:14])[0]
        if len(data) < declared or len(data) <= offset:
            return f"truncated BMP ({len(data)} of {max(declared, offset)} bytes)"
    elif kind == "gif":
        if data.rfind(b"\x3b") < 0:
            return "truncated GIF (no trailer)"
    elif kind == "pnm" and header is not None:
        need = _pnm_payload_bytes(data, header)
        if need is not None and len(data) < need:
            return f"truncated PNM ({len(data)} of at least {need} bytes)"
    return None


def jpeg_scan_problem(data: bytes) -> str | None:
    """A marker inside a JPEG's scan data that no encoder writes there, or None.

    In entropy-coded data an 0xFF byte is always followed by 00 (stuffing), a restart
    marker, or a marker that may sit between scans; random bytes written over part of the
    scan break that rule almost surely (about one 0xFF in 256 bytes, 15 in 16 of its
    followers are illegal). Damage that happens to keep the rule is caught by the decoder's
    own warning (:mod:`dicetower.vision.quiet`).
    """
    _, sos = _jpeg_segments(data)
    if sos is None:
        return None
    end = data.rfind(b"\xff\xd9")
    if end <= sos:
        return None
    buf = np.frombuffer(data, np.uint8, count=end + 1)
    ff = np.flatnonzero(buf[sos:end] == 0xFF) + sos
    bad = ff[~_SCAN_FOLLOWERS[buf[ff + 1]]]
    if bad.size:
        at = int(bad[0])
        return f"damaged JPEG (marker 0xFF{data[at + 1]:02X} inside the scan data at byte {at})"
    return None


# -- per-format parsers -------------------------------------------------------------------------


def _jpeg_segments(data: bytes) -> tuple[ImageHeader | None, int | None]:
    """Walk the marker segments up to the first scan: (frame header, offset of SOS)."""
    pos, header, n = 2, None, 0
    while pos + 4 <= len(data) and n < _MAX_JPEG_SEGMENTS:
        n += 1
        if data[pos] != 0xFF:
            return header, None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # stand-alone markers
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if marker == 0xDA:
            return header, pos
        if marker in _SOF_MARKERS and pos + 10 <= len(data):
            h, w = struct.unpack(">HH", data[pos + 5 : pos + 9])
            comps = data[pos + 9]
            # the decoder hands back grey or BGR; 12-bit JPEGs come back as 16-bit samples
            bits = data[pos + 4]
            work = _jpeg_coefficients(data[pos + 10 : pos + 10 + 3 * comps], int(w), int(h))
            header = ImageHeader(
                "jpeg",
                int(w),
                int(h),
                1 if comps == 1 else 3,
                2 if bits > 8 else 1,
                work if marker in _PROGRESSIVE_SOF else 0,
            )
        pos += 2 + length
    return header, None


def _jpeg_coefficients(components: bytes, w: int, h: int) -> int:
    """Bytes of every DCT coefficient of the image (2 a coefficient, whole 8x8 blocks): what libjpeg
    keeps for a progressive JPEG, which it cannot decode a row at a time."""
    factors = [(components[i + 1] >> 4, components[i + 1] & 15) for i in range(0, len(components) - 2, 3)]
    if not factors:
        return 0
    hmax = max(max(f[0] for f in factors), 1)
    vmax = max(max(f[1] for f in factors), 1)
    total = 0
    for fh, fv in factors:
        cw, ch = -(-w * max(fh, 1) // hmax), -(-h * max(fv, 1) // vmax)
        total += -(-cw // 8) * 8 * -(-ch // 8) * 8 * 2
    return total


def _jpeg(data: bytes) -> ImageHeader | None:
    return _jpeg_segments(data)[0]


def _png(data: bytes) -> ImageHeader | None:
    if data[12:16] != b"IHDR":
        raise FormatError("damaged PNG header (IHDR is not the first chunk)")
    w, h, depth, colour = struct.unpack(">IIBB", data[16:26])
    # what OpenCV returns: grey stays one channel (tRNS or not); grey+alpha comes back as BGRA;
    # RGB and palette images as BGR, or BGRA when a tRNS chunk gives them transparency
    alpha = colour in (4, 6) or (colour in (2, 3) and _png_has_trns(data))
    channels = 1 if colour == 0 else 4 if alpha else 3
    return ImageHeader("png", int(w), int(h), channels, 2 if depth == 16 else 1)


def _png_has_trns(data: bytes) -> bool:
    """Whether a tRNS chunk comes before the image data (where the format puts it)."""
    pos = 8
    for _ in range(_MAX_PNG_CHUNKS):
        if pos + 8 > len(data):
            return False
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"tRNS":
            return True
        if kind in (b"IDAT", b"IEND"):
            return False
        pos += 12 + length
    return True  # more chunks than any writer puts there: assume the worst


def _bmp(data: bytes) -> ImageHeader:
    size = struct.unpack("<I", data[14:18])[0]
    if size == 12:
        w, h = struct.unpack("<HH", data[18:22])
        bits = struct.unpack("<H", data[24:26])[0]
    else:
        w, h = struct.unpack("<ii", data[18:26])
        bits = struct.unpack("<H", data[28:30])[0]
    return ImageHeader("bmp", abs(int(w)), abs(int(h)), 4 if bits == 32 else 3, 1)


def _tiff(data: bytes) -> ImageHeader | None:
    order = "<" if data[:2] == b"II" else ">"
    (ifd,) = struct.unpack(order + "I", data[4:8])
    (count,) = struct.unpack(order + "H", data[ifd : ifd + 2])
    tags: dict[int, int] = {}
    for i in range(min(count, _MAX_TIFF_ENTRIES)):
        at = ifd + 2 + 12 * i
        tag, typ, n = struct.unpack(order + "HHI", data[at : at + 8])
        if typ not in (3, 4) or n < 1:  # SHORT or LONG: the sizes, samples and tiles
            continue
        size = 2 if typ == 3 else 4
        # a value that fits in 4 bytes is stored in the entry, left-justified; else it is an offset
        where = at + 8 if n * size <= 4 else struct.unpack(order + "I", data[at + 8 : at + 12])[0]
        (value,) = struct.unpack(order + ("H" if typ == 3 else "I"), data[where : where + size])
        tags[tag] = int(value)
    if 256 not in tags or 257 not in tags:
        return None
    w, h = tags[256], tags[257]
    tile = tags.get(322, 0) * tags.get(323, 0)
    if tile > max(w * h, 1 << 20) * 4:  # libtiff allocates whole tiles: a huge one is a bomb too
        raise FormatError(f"TIFF tiles of {tags[322]}x{tags[323]} for a {w}x{h} image")
    samples = max(1, tags.get(277, 1))
    bits = tags.get(258, 1)
    sample_bytes = 1 if bits <= 8 else 2 if bits <= 16 else 4 if bits <= 32 else 8
    # the decoder reads one strip or tile at a time into a buffer of its own (as RGBA, 4 bytes a
    # pixel, for the layouts it reads through libtiff's RGBA interface)
    if 322 in tags and 323 in tags:
        buffer_pixels = tags[322] * tags[323]
    else:
        buffer_pixels = w * min(tags.get(278, h) or h, h)
    work = buffer_pixels * max(samples * sample_bytes, 4)
    # the decoder hands back at most 4 channels (BGRA); samples beyond that are dropped
    return ImageHeader("tiff", w, h, min(max(samples, 3) if samples > 1 else 1, 4), sample_bytes, work)


def _webp(data: bytes) -> ImageHeader | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        if data[23:26] != b"\x9d\x01\x2a":
            raise FormatError("damaged WebP header (no VP8 start code)")
        w, h = struct.unpack("<HH", data[26:30])
        w, h = w & 0x3FFF, h & 0x3FFF
        return ImageHeader("webp", w, h, 3, 1, w * h * _WEBP_WORK_PER_PIXEL)
    if chunk == b"VP8L":
        if data[20] != 0x2F:
            raise FormatError("damaged WebP header (no VP8L signature)")
        (bits,) = struct.unpack("<I", data[21:25])
        w, h = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        return ImageHeader("webp", w, h, 4, 1, w * h * _WEBP_WORK_PER_PIXEL)
    if chunk == b"VP8X":
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return ImageHeader("webp", w, h, 4, 1, w * h * _WEBP_WORK_PER_PIXEL)
    return None


def _gif(data: bytes) -> ImageHeader | None:
    sw, sh, flags = struct.unpack("<HHB", data[6:11])
    pos = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    for _ in range(_MAX_GIF_BLOCKS):
        block = data[pos]
        if block == 0x2C:  # image descriptor: the first frame, which is what imdecode returns
            left, top, w, h = struct.unpack("<HHHH", data[pos + 1 : pos + 9])
            # the decoder draws frames on canvases of the logical screen, whatever the frame's size
            cw, ch = max(sw, left + w), max(sh, top + h)
            return ImageHeader("gif", cw, ch, 4, 1, cw * ch * _GIF_WORK_PER_PIXEL)
        if block != 0x21:  # only extensions may come before the first image
            return None
        pos += 2
        while data[pos]:
            pos += data[pos] + 1
        pos += 1
    return None


_PNM_TOKEN = re.compile(rb"(?:\s|#[^\n]*\n?)*(\S+)")


def _pnm_tokens(data: bytes, count: int) -> tuple[list[bytes], int]:
    """The first ``count`` header tokens after the magic (comments skipped) and where they end."""
    pos, out = 2, []
    for _ in range(count):
        m = _PNM_TOKEN.match(data, pos, min(len(data), pos + 4096))
        if m is None:
            raise FormatError("damaged PNM header")
        out.append(m.group(1))
        pos = m.end()
    return out, pos + 1  # one whitespace byte ends the header


def _pnm(data: bytes) -> ImageHeader:
    magic = data[1:2]
    if magic == b"7":  # PAM: "WIDTH w", "HEIGHT h", "DEPTH d", "MAXVAL m" lines up to ENDHDR
        head = data[: data.find(b"ENDHDR", 0, 4096)]
        fields = dict(re.findall(rb"^(WIDTH|HEIGHT|DEPTH|MAXVAL)\s+(\d{1,9})\s*$", head, re.M))
        if b"WIDTH" not in fields or b"HEIGHT" not in fields:
            raise FormatError("damaged PAM header")
        depth = int(fields.get(b"DEPTH", b"4"))
        maxval = int(fields.get(b"MAXVAL", b"65535"))
        return ImageHeader(
            "pnm",
            int(fields[b"WIDTH"]),
            int(fields[b"HEIGHT"]),
            1 if depth <= 1 else 3 if depth == 3 else 4,
            2 if maxval > 255 else 1,
        )
    bitmap = magic in (b"1", b"4")
    tokens, _ = _pnm_tokens(data, 2 if bitmap else 3)
    if not all(t.isdigit() and t.isascii() and len(t) <= 9 for t in tokens):
        raise FormatError("damaged PNM header (size is not a number)")
    w, h = int(tokens[0]), int(tokens[1])
    maxval = 1 if bitmap else int(tokens[2])
    return ImageHeader("pnm", w, h, 3 if magic in (b"3", b"6") else 1, 2 if maxval > 255 else 1)


def _pnm_payload_bytes(data: bytes, header: ImageHeader) -> int | None:
    """The least file size the header's pixels need (PNM's pixel data is not compressed)."""
    magic = data[1:2]
    if magic == b"7":
        return None
    _, start = _pnm_tokens(data, 2 if magic in (b"1", b"4") else 3)
    w, h, n = header.width, header.height, header.pixels * (3 if magic in (b"3", b"6") else 1)
    if magic == b"4":
        return start + (w + 7) // 8 * h
    if magic in (b"5", b"6"):
        return start + n * header.sample_bytes
    return start + (n if magic == b"1" else 2 * n - 1)  # ASCII: a digit each, separated (P2, P3)


_PARSERS = {
    "jpeg": _jpeg,
    "png": _png,
    "bmp": _bmp,
    "tiff": _tiff,
    "webp": _webp,
    "gif": _gif,
    "pnm": _pnm,
}
