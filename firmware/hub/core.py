"""The hub's work on each message: check and store rolls, follow statuses, ask for what is missing.

Everything here runs on the event loop's thread, one message at a time, in the order the
broker delivered them (:class:`~.subscriber.HubLink` hands them over). What a viewer should see
is published on the hub's event bus: ``result`` (a roll, labelled with its tower and roller,
with the chain check's verdict), ``amended`` (the table corrected a die of a roll: the roll as
corrected), ``tower`` (a tower's state changed), ``chain`` (a break) and ``reply`` (a tower
answered a roll request sent from the hub).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..events import EventBus
from ..mqtt.settings import Topics
from ..mqtt.wire import MAX_EVENT_BYTES, MAX_REQUEST_BYTES, MAX_SEQ, WireError, decode_json, event_view
from ..rolllog.chain import correction_entry, note_hash
from .chain import Take
from .keys import Admission, KeyRing
from .store import HubStore
from .towers import Tower, TowerBook

__all__ = ["HUB_EVENTS", "MAX_REQUESTS", "Hub"]

#: the hub's event types on ``/ws``
HUB_EVENTS = ("result", "amended", "tower", "chain", "reply", "new-tower")
#: roll requests sent from the hub and remembered with their answers
MAX_REQUESTS = 1000
#: how often, at most, the log says how many messages from unknown towers were refused
UNKNOWN_LOG_EVERY_S = 60.0

log = logging.getLogger(__name__)


class Hub:
    """The towers, the combined log and the requests of one hub.

    ``publish(topic, message)`` sends on the broker (a resend or a roll request);
    ``replies`` is the hub's own reply topic; ``identity`` is the hub's broker user (or client
    id), the last level of the request and resend topics it publishes on; ``keys`` decides which
    towers it knows (a :class:`~.keys.KeyRing` over ``store``: signed towers, nothing pinned).
    """

    def __init__(
        self,
        store: HubStore,
        bus: EventBus,
        topics: Topics,
        replies: str,
        publish: Callable[[str, dict[str, Any]], None],
        *,
        backfill: int = 100,
        identity: str = "hub",
        keys: KeyRing | None = None,
    ) -> None:
        self.store = store
        self.bus = bus
        self.topics = topics
        self.replies = replies
        self.publish = publish
        self.identity = identity
        self.keys = keys if keys is not None else KeyRing(store)
        self.book = TowerBook(backfill=backfill)
        self.requests: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.counts = {"taken": 0, "repeats": 0, "gaps": 0, "breaks": 0, "refused": 0, "parked": 0}
        self._unknown_logged = (0.0, 0)  # when the last summary was logged, and the count then
        self._new_sent_at, self._new_dirty = 0.0, False
        for name in self.keys.pins:  # known towers are listed from the start, also after a restart
            self.book.get(name, known=True)
        for name, (seq, digest) in store.tips().items():
            if self.keys.known(name):
                self.book.resume(name, seq, digest)

    # -- messages -------------------------------------------------------------------------

    def take(self, topic: str, payload: bytes) -> None:
        if topic == self.replies:
            self._reply(payload)
            return
        where = self.topics.split(topic)
        if where is None:
            return
        name, leaf = where
        if leaf not in ("rolls", "status", "amended"):
            return
        try:
            limit = MAX_EVENT_BYTES if leaf in ("rolls", "amended") else MAX_REQUEST_BYTES
            message = decode_json(payload, limit)
        except WireError as exc:
            self._refused(name, leaf, f"a message on {leaf} was refused: {exc}")
            return
        admitted = self.keys.admit(name, message)
        if admitted.admission is Admission.REFUSED:
            self._refused(name, leaf, f"a message on {leaf} was {admitted.problem}")
            return
        if admitted.admission is Admission.NEW:
            self._new_towers_changed()
            return
        if admitted.pinned_now:
            self._tower_changed(self.book.get(name, known=True))
        if leaf == "rolls":
            self._roll(name, message)
        elif leaf == "amended":
            self._amend(name, message.get("note"), message.get("seq"))
        else:
            self._status(name, message)

    def _refused(self, name: str, leaf: str, problem: str) -> None:
        """A known tower's refused message is a problem, recorded; an unknown name's is counted
        (and summed up in the log now and then), so a flood of invented names keeps nothing."""
        self.counts["refused"] += 1
        if self.keys.known(name):
            self._problem(name, None, problem)
            self._flag(name, problem)
            return
        now = time.monotonic()
        at, logged = self._unknown_logged
        if now - at >= UNKNOWN_LOG_EVERY_S:
            count = self.keys.unknown_refused
            log.warning(
                "refused %d messages from towers the hub does not know (the last from %r: %s)",
                max(1, count - logged),
                name[:64],
                problem[:200],
            )
            self._unknown_logged = (now, count)

    def _flag(self, name: str, problem: str) -> None:
        """Show on the towers page that something under ``name``'s topics was refused."""
        tower = self.book.get(name, known=not self.keys.accept_unsigned)
        if tower is not None:
            tower.refused += 1
            tower.refused_why = problem[:200]
            self._tower_changed(tower)

    def trust(self, name: str, fingerprint: str) -> Tower:
        """Pin the new tower ``name`` (its key's ``fingerprint`` as listed) and follow it."""
        entry = self.keys.trust(name, fingerprint)
        tower = self.book.get(name, known=True)
        assert tower is not None
        if entry.status is not None:
            self._status(name, entry.status)
            ask = tower.chain.behind(tower.reported_seq)  # whatever its state: what it rolled meanwhile
            if ask is not None:
                self._ask(tower, ask)
        self._tower_changed(tower)
        self._new_towers_changed(at_once=True)
        return tower

    def _new_towers_changed(self, *, at_once: bool = False) -> None:
        """Send the new towers' list to the pages, at most once a second (the sweep sends the
        last change), so a flood of new names cannot flood the viewers."""
        now = time.monotonic()
        if at_once or now - self._new_sent_at >= 1.0:
            self._new_sent_at, self._new_dirty = now, False
            self.bus.publish("new-tower", {"new_towers": self.keys.new_json()})
        else:
            self._new_dirty = True

    def _roll(self, name: str, event: dict[str, Any]) -> None:
        if event.get("tower") != name:
            self.counts["refused"] += 1
            self._problem(
                name, None, f"a roll event on {name}'s topic names tower {str(event.get('tower'))[:64]!r}"
            )
            return
        tower = self.book.get(name, known=self.keys.known(name) and not self.keys.accept_unsigned)
        if tower is None:
            return
        seq = event.get("seq")
        chain = tower.chain
        held = None
        if isinstance(seq, int) and chain.last_seq is not None and 0 < seq <= min(chain.last_seq, MAX_SEQ):
            held = self.store.held_hash(name, seq)
        verdict = chain.judge(event, held)
        if verdict.take is Take.REPEAT:
            self.counts["repeats"] += 1
            return
        if verdict.take is Take.PARKED:
            self.counts["parked"] += 1
            self._problem(name, None, verdict.problem)
            self._flag(name, verdict.problem)
            return
        if verdict.take is Take.GAP:
            self.counts["gaps"] += 1
            if verdict.ask_from is not None:
                self._ask(tower, verdict.ask_from)
            return
        if verdict.take in (Take.BROKEN, Take.REFUSED):
            self.counts["breaks"] += 1
            self._problem(
                name, seq if isinstance(seq, int) and 0 <= seq <= MAX_SEQ else None, verdict.problem
            )
            if verdict.take is Take.REFUSED or held is not None:
                self._tower_changed(tower)
                return  # nothing to show: a forged event, or a second version of a roll held
        try:
            view = event_view(event)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            self._problem(name, seq, f"roll {seq} cannot be shown: {exc}")
            return
        self.store.add(event, verdict.take.value, verdict.problem)
        self.counts["taken"] += 1
        view["check"] = verdict.take.value
        view["check_problem"] = verdict.problem
        tower.rolls += 1
        tower.last_roll_at = time.time()
        tower.recent.append(
            {k: view.get(k) for k in ("seq", "roller", "label", "text", "total", "status", "check")}
        )
        self.bus.publish("result", {"tower": name, "roll": view})
        if verdict.take is not Take.NEW:
            self._tower_changed(tower)
        for note in event.get("notes") or []:  # corrections the table made to the roll before
            if isinstance(note, dict) and note.get("kind") == "correct":
                self._amend(name, note, note.get("after_id"))

    def _amend(self, name: str, note: Any, seq: Any) -> None:
        """A tower's ``correct`` note for its roll ``seq``: checked by its hash, kept, and the roll
        shown as corrected (an ``amended`` event). A note whose hash or roll does not hold is a
        problem; one held already changes nothing."""
        if not isinstance(note, dict) or not isinstance(seq, int) or isinstance(seq, bool):
            self._problem(name, None, "an amendment without a note or roll")
            return
        entry = correction_entry(note)
        if entry is None or note_hash(note) != note.get("hash"):
            self.counts["breaks"] += 1
            self._problem(name, seq, f"the correction of roll {seq} does not match its hash (tampered)")
            return
        if int(entry["roll"]) != seq or note.get("after_id") != seq:
            self._problem(name, seq, f"a correction names roll {entry['roll']}, not roll {seq}")
            return
        event = self.store.event(name, seq)
        if event is None:
            return  # a roll the hub does not hold: the note comes again with the next roll's event
        if not self.store.add_correction(name, seq, note):
            return
        try:
            view = event_view(event, self.store.corrections(name, [seq])[seq])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            self._problem(name, seq, f"roll {seq} cannot be shown corrected: {exc}")
            return
        view["check"], view["check_problem"] = "new", ""
        self.bus.publish("amended", {"tower": name, "roll": view})

    def _status(self, name: str, message: dict[str, Any]) -> None:
        tower = self.book.status(name, message, known=self.keys.known(name) and not self.keys.accept_unsigned)
        if tower is None:
            return
        if tower.state == "online":  # it (re)connected: it says how far its log goes
            ask = tower.chain.behind(tower.reported_seq)
            if ask is not None:
                self._ask(tower, ask)
        self._tower_changed(tower)

    def sweep(self) -> None:
        """Every few seconds: ask idle towers for rolls they report and the hub lacks."""
        if self._new_dirty:
            self._new_towers_changed(at_once=True)
        now = time.time()
        for tower in list(self.book.towers.values()):
            if tower.online and tower.state != "rolling" and now - tower.last_roll_at > 2.0:
                ask = tower.chain.behind(tower.reported_seq)
                if ask is not None:
                    self._ask(tower, ask)

    def _ask(self, tower: Tower, start: int) -> None:
        log.info("asking tower %s for its rolls from %d", tower.name, start)
        self.publish(self.topics.resend(tower.name, self.identity), {"from": start})

    def _problem(self, name: str, seq: int | None, problem: str) -> None:
        log.warning("tower %s: %s", name, problem)
        self.store.problem(name, seq, problem)
        self.bus.publish("chain", {"tower": name, "seq": seq, "problem": problem, "at": time.time()})

    def _tower_changed(self, tower: Tower | None) -> None:
        if tower is not None:
            self.bus.publish("tower", {"tower": self.tower_json(tower)})

    def tower_json(self, tower: Tower) -> dict[str, Any]:
        """A tower as the towers page shows it, with its pinned key (None when unsigned)."""
        return {**tower.to_json(), "key": self.keys.pin_of(tower.name)}

    def towers_json(self) -> list[dict[str, Any]]:
        return [self.tower_json(t) for t in sorted(self.book.towers.values(), key=lambda t: t.name)]

    # -- roll requests --------------------------------------------------------------------

    def request(self, name: str, roll: Any, *, token: str | None = None) -> str:
        """Send a roll request to tower ``name``; its request id (the answers come as ``reply``)."""
        request_id = secrets.token_hex(8)
        message: dict[str, Any] = {
            "request_id": request_id,
            "reply_to": self.replies,
            "roll": roll,
        }
        if token:
            message["token"] = token
        self.publish(self.topics.requests(name, self.identity), message)
        self.requests[request_id] = {
            "request_id": request_id,
            "tower": name,
            "status": "sent",
            "at": time.time(),
        }
        while len(self.requests) > MAX_REQUESTS:
            self.requests.popitem(last=False)
        return request_id

    def _reply(self, payload: bytes) -> None:
        try:
            message = decode_json(payload, MAX_EVENT_BYTES)
        except WireError as exc:
            log.warning("a reply was refused: %s", exc)
            return
        known = self.requests.get(str(message.get("request_id")))
        if known is None:
            return
        known.update({k: message[k] for k in ("status", "id", "error", "roll") if k in message})
        self.bus.publish("reply", {"reply": known})
