"""A tower's signing key: made once at first start (mode 0600), the same key after a restart, a
damaged key file refused by name; a signature that any change to the message breaks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dicetower.firmware.mqtt.signing import (
    KEY_NAME,
    SignatureError,
    check_public_key,
    load_or_create_key,
    verify,
)


def test_the_key_is_made_once_with_mode_0600_and_kept(tmp_path: Path) -> None:
    key = load_or_create_key(tmp_path)
    path = tmp_path / KEY_NAME
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_or_create_key(tmp_path).public == key.public  # the same tower after a restart
    assert check_public_key(key.public) == key.public
    os.chmod(path, 0o644)
    assert load_or_create_key(tmp_path).public == key.public
    assert path.stat().st_mode & 0o777 == 0o600  # narrowed back


def test_a_damaged_key_file_is_refused_by_name_and_never_replaced(tmp_path: Path) -> None:
    path = tmp_path / KEY_NAME
    path.write_bytes(b"not a key")
    with pytest.raises(ValueError, match=KEY_NAME):
        load_or_create_key(tmp_path)
    assert path.read_bytes() == b"not a key"


def test_a_signature_covers_every_field(tmp_path: Path) -> None:
    key = load_or_create_key(tmp_path / "a")
    other = load_or_create_key(tmp_path / "b")
    message = {"tower": "t1", "seq": 7, "row": {"total": "12", "faces": [1, 5]}, "text": "\ud800 é"}
    signed = key.sign(message)
    verify(signed, key.public)
    for changed in (
        {**signed, "seq": 8},
        {**signed, "row": {"total": "13", "faces": [1, 5]}},
        {**signed, "extra": 1},
        {k: v for k, v in signed.items() if k != "text"},
    ):
        with pytest.raises(SignatureError, match="does not verify"):
            verify(changed, key.public)
    with pytest.raises(SignatureError, match="unsigned"):
        verify(message, key.public)
    with pytest.raises(SignatureError, match="another key"):
        verify(other.sign(message), key.public)
    stolen_key_field = {**other.sign(message), "key": key.public}  # claims the pinned key
    with pytest.raises(SignatureError, match="does not verify"):
        verify(stolen_key_field, key.public)
    with pytest.raises(SignatureError, match=r"malformed|not base64|64 bytes"):
        verify({**signed, "sig": "!!"}, key.public)
