"""Each tower signs what it publishes with its own Ed25519 key; a hub checks it against a pinned key.

Why signatures: a roll event's hash chain needs no key, so anyone allowed to publish on a
tower's topic could send a correctly hashed roll that never happened. With a signature only the
holder of the tower's private key can: the hub pins each tower's public key (from its config, or
the first key seen once an operator trusts it) and refuses anything else.

The key is made at a tower's first start and kept in its state folder (:data:`KEY_NAME`, mode
0600, never rewritten: a new key is a new tower to every hub that pinned the old one). A message
is signed over its canonical JSON (sorted keys, ASCII, no spaces) without ``sig``; the public key
travels in it as ``key`` (``ed25519:`` and the 32 raw bytes in base64), so a hub that has not
pinned the tower yet can show what it would trust.

Needs ``cryptography`` (the ``mqtt`` extra), imported only here.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

__all__ = [
    "KEY_NAME",
    "KEY_PREFIX",
    "SignatureError",
    "TowerKey",
    "canonical",
    "check_public_key",
    "fingerprint",
    "load_or_create_key",
    "verify",
]

#: the tower's private key, beside its roll log
KEY_NAME = "tower-key.pem"
KEY_PREFIX = "ed25519:"
_MAX_KEY_FILE = 4096
_SIG_BYTES = 64

log = logging.getLogger(__name__)


class SignatureError(ValueError):
    """A message that is unsigned, carries a malformed key or signature, or does not verify."""


def canonical(message: dict[str, Any]) -> bytes:
    """The bytes a signature covers: ``message`` without ``sig``, as canonical JSON.

    ASCII only, so a lone surrogate a hostile sender put in a string encodes rather than raises;
    a structure nested too deep to encode is a :class:`SignatureError`.
    """
    body = {k: v for k, v in message.items() if k != "sig"}
    try:
        return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    except (RecursionError, ValueError, TypeError) as exc:
        raise SignatureError(f"the message cannot be put in canonical form: {type(exc).__name__}") from None


def check_public_key(text: Any) -> str:
    """``text`` if it is an Ed25519 public key as a message and a keys file carry it, else ValueError."""
    if not isinstance(text, str) or not text.startswith(KEY_PREFIX) or len(text) > 80:
        raise ValueError(f"a public key is {KEY_PREFIX} and 32 bytes in base64")
    try:
        raw = base64.b64decode(text[len(KEY_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"a public key is {KEY_PREFIX} and 32 bytes in base64") from None
    if len(raw) != 32:
        raise ValueError(f"a public key is {KEY_PREFIX} and 32 bytes in base64, not {len(raw)}")
    return text


def fingerprint(key_text: str) -> str:
    """A short, readable name for a public key (SHA-256, 16 hex digits in groups of four), as
    the towers page and the log show it for an operator to compare with the tower's own."""
    digest = hashlib.sha256(key_text.encode("ascii", "replace")).hexdigest()[:16]
    return ":".join(digest[i : i + 4] for i in range(0, 16, 4))


class TowerKey:
    """A tower's private key: signs messages; ``public`` is the text a hub pins."""

    def __init__(self, private: Any) -> None:
        from cryptography.hazmat.primitives import serialization

        self._private = private
        raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.public = KEY_PREFIX + base64.b64encode(raw).decode("ascii")

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public)

    def sign(self, message: dict[str, Any]) -> dict[str, Any]:
        """``message`` with ``key`` and ``sig`` added (a new dict; the input is unchanged)."""
        signed = {**message, "key": self.public}
        signed.pop("sig", None)
        signed["sig"] = base64.b64encode(self._private.sign(canonical(signed))).decode("ascii")
        return signed


def _ed25519() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise ImportError(
            "signing needs cryptography: pip install 'dicetower[mqtt]' (or pip install cryptography)"
        ) from None
    return ed25519


def load_or_create_key(state_dir: str | Path) -> TowerKey:
    """The tower's key from ``state_dir/KEY_NAME``, made there (mode 0600) at the first start.

    A key file that cannot be read as an Ed25519 private key is an error naming the file, never
    replaced: a new key would make every hub that pinned the old one refuse this tower. A file
    others may read is narrowed to 0600, with a warning.
    """
    from cryptography.hazmat.primitives import serialization

    ed25519 = _ed25519()
    path = Path(state_dir) / KEY_NAME
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return _create(path, ed25519, serialization)
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"{path}: the tower's key is not a regular file")
        raw = fh.read(_MAX_KEY_FILE + 1)
        if mode & 0o077:
            log.warning("%s could be read by others (mode %o): narrowed to 0600", path, mode & 0o777)
            os.fchmod(fh.fileno(), 0o600)
    try:
        if len(raw) > _MAX_KEY_FILE:
            raise ValueError("too large")
        private = serialization.load_pem_private_key(raw, password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not the tower's Ed25519 key ({str(exc)[:80]}); move it away") from None
    if not isinstance(private, ed25519.Ed25519PrivateKey):
        raise ValueError(f"{path}: not an Ed25519 key; move it away to make a new one")
    return TowerKey(private)


def _create(path: Path, ed25519: Any, serialization: Any) -> TowerKey:
    path.parent.mkdir(parents=True, exist_ok=True)
    private = ed25519.Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never over another key
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
        fh.flush()
        os.fsync(fh.fileno())
    key = TowerKey(private)
    log.warning("made this tower's signing key %s (fingerprint %s)", path, key.fingerprint)
    return key


@functools.lru_cache(maxsize=1024)
def _public_key(text: str) -> Any:
    """The key object for a pinned key's text, made once (a hub checks every event with it)."""
    raw = base64.b64decode(check_public_key(text)[len(KEY_PREFIX) :])
    return _ed25519().Ed25519PublicKey.from_public_bytes(raw)


def verify(message: dict[str, Any], public_key: str) -> None:
    """Check ``message``'s signature with ``public_key``; :class:`SignatureError` says why not."""
    from cryptography.exceptions import InvalidSignature

    sig = message.get("sig")
    if sig is None:
        raise SignatureError("unsigned")
    if message.get("key") != public_key:
        raise SignatureError("signed with another key than the one pinned")
    if not isinstance(sig, str) or len(sig) > 128:
        raise SignatureError("its signature is not base64")
    try:
        raw_sig = base64.b64decode(sig, validate=True)
        pub = _public_key(public_key)
    except (binascii.Error, ValueError) as exc:
        raise SignatureError(f"its key or signature is malformed: {str(exc)[:80]}") from None
    if len(raw_sig) != _SIG_BYTES:
        raise SignatureError("its signature is not 64 bytes")
    try:
        pub.verify(raw_sig, canonical(message))
    except InvalidSignature:
        raise SignatureError("its signature does not verify (forged or changed)") from None
