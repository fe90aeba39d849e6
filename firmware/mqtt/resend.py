"""Which resend requests a tower follows: rate-limited per requester, capped, never stacked.

A hub that misses rolls asks on ``PREFIX/TOWER/resend/WHO`` for the rolls from a sequence
number, and the tower publishes its log again from there. Unchecked, that is an amplifier: one
small message makes the tower publish thousands of rolls, and a hundred of them a hundred times
over. So a tower follows a resend only when

* the requester (``WHO``, the broker user the ACL holds the topic to) has not asked within
  :data:`RESEND_EVERY_S` (a bounded table of requesters, the stalest forgotten first);
* it reaches back at most :data:`RESEND_CAP` rolls from the log's end;
* it asks for something the replay under way does not already cover.
"""

from __future__ import annotations

import time
from collections import OrderedDict

__all__ = ["MAX_REQUESTERS", "RESEND_CAP", "RESEND_EVERY_S", "ResendGate"]

#: rolls one resend publishes at most (the hub's ``--backfill`` stays within it)
RESEND_CAP = 1000
#: one resend per requester in this many seconds
RESEND_EVERY_S = 10.0
#: requesters remembered for the rate limit
MAX_REQUESTERS = 256


class ResendGate:
    """Decides where the publisher rewinds to for a resend, if anywhere. Not thread-safe: the
    publishing thread alone calls :meth:`rewind_to`; :meth:`allow` runs on paho's thread."""

    def __init__(self, *, cap: int = RESEND_CAP, every_s: float = RESEND_EVERY_S) -> None:
        self.cap = cap
        self.every_s = every_s
        self.refused = 0
        self._last_ask: OrderedDict[str, float] = OrderedDict()
        self._replay: tuple[int, int] | None = None  # (from, until): being published again

    def allow(self, identity: str, now: float | None = None) -> bool:
        """Whether ``identity`` may ask now (and, if so, its ask is counted)."""
        now = time.monotonic() if now is None else now
        last = self._last_ask.get(identity)
        if last is not None and now - last < self.every_s:
            self.refused += 1
            return False
        self._last_ask.pop(identity, None)
        self._last_ask[identity] = now
        while len(self._last_ask) > MAX_REQUESTERS:
            self._last_ask.popitem(last=False)
        return True

    def rewind_to(self, start: int, next_seq: int, last_seq: int) -> int | None:
        """Where to publish from for a resend from ``start``, the publisher being at ``next_seq``
        in a log that ends at ``last_seq``; None: nothing to do (already published past it, or
        covered by the replay under way)."""
        if self._replay is not None and next_seq > self._replay[1]:
            self._replay = None  # the last replay is done
        start = max(start, last_seq - self.cap + 1, 1)
        if start >= next_seq:
            return None
        if self._replay is not None and start >= self._replay[0]:
            return None
        until = next_seq - 1 if self._replay is None else self._replay[1]
        self._replay = (start, until)
        return start
