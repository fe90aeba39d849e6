"""load_image / check_frame: every bad input becomes one ImageError naming the file."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.imageio import (
    MAX_PIXELS,
    MAX_SIDE,
    ImageError,
    check_frame,
    image_size,
    load_image,
    load_image_info,
)


def _photo(h: int = 120, w: int = 160) -> np.ndarray:
    rng = np.random.default_rng(1)
    img = np.full((h, w, 3), 90, np.uint8)
    cv2.rectangle(img, (20, 20), (70, 70), (240, 240, 240), -1)
    cv2.circle(img, (45, 45), 6, (10, 10, 10), -1)
    return cv2.add(img, rng.integers(0, 8, img.shape, dtype=np.uint8))


def _write(path: Path, img: np.ndarray) -> Path:
    assert cv2.imwrite(str(path), img)
    return path


def test_jpeg_loads_as_bgr_uint8(tmp_path: Path) -> None:
    img = _photo()
    out = load_image(_write(tmp_path / "a.jpg", img))
    assert out.dtype == np.uint8 and out.shape == img.shape
    assert np.abs(out.astype(int) - img.astype(int)).mean() < 4  # JPEG loss only


def test_png_round_trip_is_exact(tmp_path: Path) -> None:
    img = _photo()
    info = load_image_info(_write(tmp_path / "a.png", img))
    assert np.array_equal(info.frame, img)
    assert info.scale == 1.0 and info.original_size == (160, 120)


def test_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match=r"nope\.jpg"):
        load_image(tmp_path / "nope.jpg")


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match=r"not a regular file \(a directory\)"):
        load_image(tmp_path)


def test_zero_byte_file(tmp_path: Path) -> None:
    p = tmp_path / "zero.jpg"
    p.write_bytes(b"")
    with pytest.raises(ImageError, match=r"zero\.jpg: empty file"):
        load_image(p)


def test_text_file_is_not_an_image(tmp_path: Path) -> None:
    p = tmp_path / "notes.png"
    p.write_text("this is not a picture\n")
    with pytest.raises(ImageError, match=r"notes\.png: not an image"):
        load_image(p)


@pytest.mark.parametrize("keep", [0.3, 0.6, 0.95])
def test_truncated_jpeg_is_detected(tmp_path: Path, keep: float) -> None:
    whole = _write(tmp_path / "whole.jpg", _photo(400, 400)).read_bytes()
    p = tmp_path / "cut.jpg"
    p.write_bytes(whole[: int(len(whole) * keep)])
    with pytest.raises(ImageError, match=r"cut\.jpg: truncated JPEG"):
        load_image(p)


def test_jpeg_header_only(tmp_path: Path) -> None:
    whole = _write(tmp_path / "whole.jpg", _photo()).read_bytes()
    p = tmp_path / "hdr.jpg"
    p.write_bytes(whole[:40])
    with pytest.raises(ImageError, match=r"hdr\.jpg"):
        load_image(p)


def test_truncated_png_is_detected(tmp_path: Path) -> None:
    whole = _write(tmp_path / "whole.png", _photo()).read_bytes()
    p = tmp_path / "cut.png"
    p.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ImageError, match=r"cut\.png: truncated PNG"):
        load_image(p)


def test_truncated_bmp_is_detected(tmp_path: Path) -> None:
    whole = _write(tmp_path / "whole.bmp", _photo()).read_bytes()
    p = tmp_path / "cut.bmp"
    p.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ImageError, match=r"cut\.bmp: truncated BMP"):
        load_image(p)


def test_corrupt_jpeg_body(tmp_path: Path) -> None:
    whole = bytearray(_write(tmp_path / "whole.jpg", _photo()).read_bytes())
    # keep SOI..headers and EOI, destroy the marker structure right after SOI
    whole[2:40] = b"\x00" * 38
    p = tmp_path / "bad.jpg"
    p.write_bytes(bytes(whole))
    with pytest.raises(ImageError, match=r"bad\.jpg"):
        load_image(p)


def test_grey_png_becomes_bgr(tmp_path: Path) -> None:
    grey = cv2.cvtColor(_photo(), cv2.COLOR_BGR2GRAY)
    out = load_image(_write(tmp_path / "g.png", grey))
    assert out.shape == (*grey.shape, 3)
    assert np.array_equal(out[:, :, 0], grey) and np.array_equal(out[:, :, 2], grey)


def test_16bit_png_becomes_8bit(tmp_path: Path) -> None:
    img16 = _photo().astype(np.uint16) * 257
    out = load_image(_write(tmp_path / "d.png", img16))
    assert out.dtype == np.uint8
    assert np.array_equal(out, _photo())


def test_16bit_grey_png(tmp_path: Path) -> None:
    g = np.linspace(0, 65535, 64 * 64).reshape(64, 64).astype(np.uint16)
    out = load_image(_write(tmp_path / "g16.png", g))
    assert out.shape == (64, 64, 3) and out.dtype == np.uint8
    assert out[0, 0, 0] == 0 and out[-1, -1, 0] == 255


def test_alpha_is_dropped(tmp_path: Path) -> None:
    img = _photo()
    bgra = cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)
    bgra[:, :, 3] = 7
    out = load_image(_write(tmp_path / "a.png", bgra))
    assert np.array_equal(out, img)


def test_tiny_image_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="too small"):
        load_image(_write(tmp_path / "t.png", np.zeros((3, 3, 3), np.uint8)))


def test_huge_jpeg_is_downscaled_with_scale(tmp_path: Path) -> None:
    # 50 megapixels: 8660 x 5774 (a smooth picture compresses small)
    w, h = 8660, 5774
    big = np.zeros((h, w, 3), np.uint8)
    big[:, :, 1] = 128
    cv2.circle(big, (w // 2, h // 2), 1000, (255, 255, 255), -1)
    p = _write(tmp_path / "big.jpg", big)
    del big
    info = load_image_info(p)
    assert max(info.frame.shape[:2]) == MAX_SIDE
    assert info.original_size == (w, h)
    assert info.scale == pytest.approx(MAX_SIDE / w, rel=1e-3)
    # the white disc is still in the middle
    cy, cx = (np.array(info.frame.shape[:2]) // 2).tolist()
    assert info.frame[cy, cx].min() > 200


def test_huge_png_is_downscaled(tmp_path: Path) -> None:
    big = np.zeros((300, 4100), np.uint8)
    info = load_image_info(_write(tmp_path / "wide.png", big))
    assert info.frame.shape[1] == MAX_SIDE and info.original_size == (4100, 300)
    assert info.scale == pytest.approx(MAX_SIDE / 4100, rel=1e-3)


def _png_header_only(w: int, h: int) -> bytes:
    """A PNG whose header claims w x h but whose data is one tiny IDAT (a 'bomb' header)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    body = chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0")) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def test_decompression_bomb_refused_from_header(tmp_path: Path) -> None:
    p = tmp_path / "bomb.png"
    p.write_bytes(_png_header_only(50_000, 50_000))
    assert image_size(p.read_bytes()) == (50_000, 50_000)
    with pytest.raises(ImageError, match=r"bomb\.png: image too large"):
        load_image(p)


def test_zero_dimension_header(tmp_path: Path) -> None:
    p = tmp_path / "zero.png"
    p.write_bytes(_png_header_only(0, 10))
    with pytest.raises(ImageError, match=r"zero\.png"):
        load_image(p)


def test_image_size_reads_jpeg_and_bmp_headers(tmp_path: Path) -> None:
    img = _photo(77, 131)
    for ext in ("jpg", "bmp", "png"):
        assert image_size(_write(tmp_path / f"x.{ext}", img).read_bytes()) == (131, 77)


# --- check_frame ---------------------------------------------------------------------------


def test_check_frame_passes_bgr_through() -> None:
    img = _photo()
    assert np.array_equal(check_frame(img), img)


def test_check_frame_converts_grey_16bit_float_alpha() -> None:
    img = _photo()
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    assert check_frame(grey).shape == img.shape
    assert np.array_equal(check_frame(img.astype(np.uint16) * 257), img)
    assert np.array_equal(check_frame(img.astype(np.float32) / 255.0), img)
    assert np.array_equal(check_frame(cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)), img)


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [[1, 2], [3, 4]],
        np.zeros((0, 10, 3), np.uint8),
        np.zeros((10, 10, 5), np.uint8),
        np.zeros((4, 4, 3), np.uint8),
        np.zeros((2, 10, 10, 3), np.uint8),
        np.full((20, 20, 3), np.nan, np.float32),
        np.zeros((20, 20, 3), np.complex64),
    ],
)
def test_check_frame_refuses(bad: object) -> None:
    with pytest.raises(ImageError, match="frame"):
        check_frame(bad)


def test_check_frame_refuses_oversized_without_allocating() -> None:
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=(MAX_PIXELS, 2), strides=(0, 0))
    with pytest.raises(ImageError, match="too large"):
        check_frame(huge)
