"""Which towers the hub knows: each one's pinned public key, and the new ones waiting to be trusted.

A tower is *known* when its key is pinned: from the hub's keys file (``--tower-keys``), or by
an operator trusting a new tower on the towers page (``POST /api/towers/NAME/trust``), or, with
``--trust-first-use``, by the first correctly signed message under its name. Pins are kept in
the hub's log and reloaded at start, so a known tower is accepted after a restart whatever
else is on the broker. Every message of a known tower must verify with its pinned key; one
that does not (unsigned, forged, signed with another key) is refused, and the caller records
why.

A name the hub does not know takes none of its capacity: a correctly self-signed message puts
it on a short list of *new* towers (:data:`MAX_NEW`, the stalest dropped first, never
persisted) for an operator to trust; anything else from it is only counted. So a flood of
invented names changes nothing the hub keeps.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from ..mqtt.settings import check_tower_name
from ..mqtt.signing import SignatureError, check_public_key, fingerprint, verify
from .store import HubStore

__all__ = ["MAX_FIRST_USE", "MAX_NEW", "Admission", "KeyRing", "NewTower", "Verdict", "read_keys_file"]

#: new (unknown, correctly self-signed) towers listed for an operator at most
MAX_NEW = 32
#: lines a keys file may hold
MAX_KEY_LINES = 10_000
#: towers ``--trust-first-use`` pins on its own at most; past it, new towers wait for a person
MAX_FIRST_USE = 100

log = logging.getLogger(__name__)


class Admission(Enum):
    KNOWN = "known"  #: the pinned key signed it: take it
    NEW = "new"  #: a name the hub does not know, correctly self-signed: listed as new, not taken
    REFUSED = "refused"  #: unsigned, forged or another key: refused (``problem`` says why)


@dataclass(frozen=True)
class Verdict:
    admission: Admission
    problem: str = ""
    #: the tower was pinned by this very message (trust on first use)
    pinned_now: bool = False


@dataclass
class NewTower:
    """A name heard with a correctly self-signed message, not (yet) trusted."""

    name: str
    key: str
    first_seen: float
    last_seen: float
    #: its last status message, replayed when it is trusted
    status: dict[str, Any] | None = None
    messages: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "key": self.key,
            "fingerprint": fingerprint(self.key),
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "messages": self.messages,
        }


class KeyRing:
    """The pinned keys (``configured`` from the keys file, the rest from ``store``) and the new towers.

    ``accept_unsigned``: every name is known and nothing is verified (for a broker whose ACL
    alone is trusted, and the load benchmark's baseline).
    """

    def __init__(
        self,
        store: HubStore,
        configured: dict[str, str] | None = None,
        *,
        trust_first_use: bool = False,
        accept_unsigned: bool = False,
    ) -> None:
        self.store = store
        self.trust_first_use = trust_first_use
        self.accept_unsigned = accept_unsigned
        self.pins: dict[str, tuple[str, str]] = {n: (k, s) for n, k, s in store.pins()}
        for name, key in (configured or {}).items():
            self.pins[name] = (check_public_key(key), "config")
        self.new: OrderedDict[str, NewTower] = OrderedDict()
        self.unknown_refused = 0
        self._said = (0.0, 0)  # when the minute of new-tower log lines began, and how many since

    def known(self, name: str) -> bool:
        return self.accept_unsigned or name in self.pins

    def pin_of(self, name: str) -> dict[str, Any] | None:
        """The pinned key of ``name`` for the towers page (None: unsigned mode or not pinned)."""
        found = self.pins.get(name)
        if found is None:
            return None
        return {"key": found[0], "fingerprint": fingerprint(found[0]), "source": found[1]}

    def admit(self, name: str, message: dict[str, Any]) -> Verdict:
        """Whether ``message`` under tower ``name`` is taken (known), listed as new, or refused."""
        if self.accept_unsigned:
            return Verdict(Admission.KNOWN)
        pinned = self.pins.get(name)
        if pinned is not None:
            try:
                verify(message, pinned[0])
            except SignatureError as exc:
                return Verdict(Admission.REFUSED, self._why(exc, message, pinned[0]))
            return Verdict(Admission.KNOWN)
        try:
            key = check_public_key(message.get("key"))
            verify(message, key)
        except (SignatureError, ValueError) as exc:
            self.unknown_refused += 1
            return Verdict(Admission.REFUSED, f"a message from a tower the hub does not know: {exc}")
        if self.trust_first_use and self._first_use_count() < MAX_FIRST_USE:
            self._pin(name, key, "first use")
            log.warning("new tower %s: its key %s is trusted on first use and pinned", name, fingerprint(key))
            return Verdict(Admission.KNOWN, pinned_now=True)
        self._list_new(name, key, message)
        return Verdict(Admission.NEW)

    def _why(self, exc: SignatureError, message: dict[str, Any], pinned: str) -> str:
        given = message.get("key")
        if isinstance(given, str) and given != pinned and "sig" in message:
            return (
                f"refused: signed with key {fingerprint(given)}, not its pinned key {fingerprint(pinned)}"
                " (a changed key is never taken; pin the new one to accept it)"
            )
        return f"refused: {exc}"

    def _first_use_count(self) -> int:
        return sum(1 for _k, source in self.pins.values() if source == "first use")

    def _list_new(self, name: str, key: str, message: dict[str, Any]) -> None:
        now = time.time()
        entry = self.new.pop(name, None)
        if entry is None or entry.key != key:
            entry = NewTower(name, key, now, now)
            self._say_new(name, key, now)
        entry.last_seen = now
        entry.messages += 1
        if "state" in message:
            entry.status = message
        self.new[name] = entry
        while len(self.new) > MAX_NEW:
            self.new.popitem(last=False)

    def _say_new(self, name: str, key: str, now: float) -> None:
        """Log a new tower, at most :data:`MAX_NEW` a minute (then a count), so a flood of
        invented names cannot flood the log either."""
        if now - self._said[0] >= 60.0:
            if self._said[1] > MAX_NEW:
                log.warning("%d more new towers in the last minute", self._said[1] - MAX_NEW)
            self._said = (now, 0)
        self._said = (self._said[0], self._said[1] + 1)
        if self._said[1] <= MAX_NEW:
            log.warning(
                "new tower %s with key %s: trust it on the towers page, or pin it in --tower-keys",
                name,
                fingerprint(key),
            )

    def trust(self, name: str, fingerprint_given: str) -> NewTower:
        """Pin the new tower ``name``'s key, if ``fingerprint_given`` is the one listed (so the
        operator trusts the key they compared); KeyError or ValueError otherwise."""
        entry = self.new.get(name)
        if entry is None:
            raise KeyError(name)
        if fingerprint(entry.key) != fingerprint_given:
            raise ValueError(
                f"the new tower {name}'s key is {fingerprint(entry.key)}, not {fingerprint_given}"
            )
        self._pin(name, entry.key, "trusted")
        del self.new[name]
        log.warning("tower %s trusted: key %s pinned", name, fingerprint(entry.key))
        return entry

    def _pin(self, name: str, key: str, source: str) -> None:
        self.store.pin(name, key, source)
        self.pins[name] = (key, source)

    def new_json(self) -> list[dict[str, Any]]:
        return [t.to_json() for t in reversed(self.new.values())]


def read_keys_file(path: str | Path) -> dict[str, str]:
    """The hub's keys file: one ``TOWER ed25519:...`` a line (``#`` starts a comment), as
    ``GET /api/tower``'s ``mqtt.key`` shows each tower's. A bad line is a ValueError naming it."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_KEY_LINES * 160 + 1)
    except OSError as exc:
        raise ValueError(f"the keys file {path} cannot be read: {exc.strerror or exc}") from None
    if len(raw) > MAX_KEY_LINES * 160:
        raise ValueError(f"{path}: more than {MAX_KEY_LINES} keys")
    keys: dict[str, str] = {}
    for number, line in enumerate(raw.decode("utf-8-sig", errors="replace").splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2:
            raise ValueError(f"{path} line {number}: write TOWER ed25519:KEY")
        try:
            name, key = check_tower_name(words[0]), check_public_key(words[1])
        except ValueError as exc:
            raise ValueError(f"{path} line {number}: {exc}") from None
        if name in keys and keys[name] != key:
            raise ValueError(f"{path} line {number}: tower {name} is given two keys")
        keys[name] = key
    return keys
