"""What the hub knows of each tower: its state, its chain, its last rolls, bounded.

A tower is *online* while its retained status says so (the broker publishes its last will,
``offline``, when it drops without a goodbye); *rolling* or *idle* as its status says; and it
*needs attention* when it says so (its last roll failed), when its chain broke, or while rolls
are missing from it.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..mqtt.wire import MAX_SEQ
from .chain import TowerChain

__all__ = ["MAX_TOWERS", "RECENT_ROLLS", "Tower", "TowerBook"]

#: towers a hub follows at most without a pinned key (a hub run with ``--accept-unsigned``);
#: towers with a pinned key are always followed: only a person or the keys file pins one
MAX_TOWERS = 500
#: rolls kept in memory per tower for the towers page
RECENT_ROLLS = 20


@dataclass
class Tower:
    name: str
    chain: TowerChain
    state: str = "unknown"
    detail: str = ""
    reported_seq: int = 0
    status_at: float = 0.0
    last_roll_at: float = 0.0
    rolls: int = 0
    #: messages under its name refused (unsigned, forged, another key, parked), and the last why
    refused: int = 0
    refused_why: str = ""
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT_ROLLS))

    @property
    def online(self) -> bool:
        return self.state not in ("offline", "unknown")

    @property
    def attention(self) -> list[str]:
        """Why the tower needs attention (empty: it does not)."""
        why = []
        if self.state == "needs-attention":
            why.append(self.detail or "its last roll failed")
        if self.chain.breaks:
            why.append(f"chain broken: {self.chain.problem}")
        if self.refused:
            why.append(f"{self.refused} message(s) under its name refused; the last: {self.refused_why}")
        if self.chain.in_gap:
            why.append(f"rolls missing from {self.chain.asked_from}; asked for again")
        return why

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "online": self.online,
            "state": self.state,
            "detail": self.detail,
            "needs_attention": self.attention,
            "last_seq": self.chain.last_seq,
            "reported_seq": self.reported_seq,
            "checked_from": self.chain.first_seq,
            "chain_breaks": self.chain.breaks,
            "refused": self.refused,
            "rolls": self.rolls,
            "status_at": self.status_at,
            "last_roll_at": self.last_roll_at,
            "recent": list(self.recent)[-5:],
        }


class TowerBook:
    """The towers by name, at most :data:`MAX_TOWERS`."""

    def __init__(self, *, backfill: int = 100) -> None:
        self.backfill = backfill
        self.towers: dict[str, Tower] = {}
        self.refused = 0

    def get(self, name: str, *, known: bool = False) -> Tower | None:
        """The tower ``name``, added if new and ``known`` (its key is pinned) or there is room
        (None when the book is full)."""
        tower = self.towers.get(name)
        if tower is None:
            if not known and len(self.towers) >= MAX_TOWERS:
                self.refused += 1
                return None
            tower = self.towers[name] = Tower(name, TowerChain(backfill=self.backfill))
        return tower

    def resume(self, name: str, last_seq: int, last_hash: str) -> None:
        """Carry on a tower's chain from the hub's own log (at start)."""
        tower = self.get(name, known=True)
        if tower is not None:
            tower.chain = TowerChain(last_seq=last_seq, last_hash=last_hash, backfill=self.backfill)

    def status(self, name: str, message: dict[str, Any], *, known: bool = False) -> Tower | None:
        tower = self.get(name, known=known)
        if tower is None:
            return None
        state = message.get("state")
        tower.state = state if isinstance(state, str) else "unknown"
        detail = message.get("detail")
        tower.detail = detail[:200] if isinstance(detail, str) else ""
        seq = message.get("last_seq")
        if isinstance(seq, int) and 0 <= seq <= MAX_SEQ:
            tower.reported_seq = seq
        tower.status_at = time.time()
        return tower

    def to_json(self) -> list[dict[str, Any]]:
        return [t.to_json() for t in sorted(self.towers.values(), key=lambda t: t.name)]
