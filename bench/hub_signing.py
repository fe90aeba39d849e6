"""Benchmark: what signing costs per roll event, on the tower and on the hub, in one process.

Usage::

    .venv/bin/python bench/hub_signing.py [--events 2000]

Makes ``--events`` rolls in a real roll log, reads them as a tower's outbox does and builds each
roll event (:func:`~dicetower.firmware.mqtt.wire.roll_event`), then:

* the tower's side: building and encoding the events, unsigned (the named baseline) and signed
  with the tower's Ed25519 key;
* the hub's side: :meth:`Hub.take` of every event (decode, admission, chain check, SQLite insert,
  the overlay's view), once from an unsigned hub (``--accept-unsigned``, the baseline) and once
  from a hub that pinned the tower's key and verifies every event.

It prints CPU microseconds per event (this process's CPU time, so other work on the machine
does not count) for each, and the difference. ``bench/hub_load.py --signing
both`` measures the same on a loaded table of real processes end to end.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from dicetower.firmware.events import EventBus
from dicetower.firmware.hub.core import HUB_EVENTS, Hub
from dicetower.firmware.hub.keys import KeyRing
from dicetower.firmware.hub.store import HubStore
from dicetower.firmware.mqtt.outbox import Outbox
from dicetower.firmware.mqtt.settings import Topics
from dicetower.firmware.mqtt.signing import load_or_create_key
from dicetower.firmware.mqtt.wire import encode, roll_event
from dicetower.firmware.rolllog import RollLog

__all__ = ["main"]


def _hub(folder: Path, **keys: object) -> tuple[Hub, HubStore]:
    store = HubStore(folder)
    ring = KeyRing(store, **keys)  # type: ignore[arg-type]
    bus = EventBus(history=10, client_queue=10, types=HUB_EVENTS)
    return Hub(store, bus, Topics(), "dicetower/_hub/b/replies", lambda t, m: None, keys=ring), store


def _take_all(hub: Hub, payloads: list[bytes]) -> float:
    t0 = time.process_time()
    for p in payloads:
        hub.take("dicetower/t1/rolls", p)
    return (time.process_time() - t0) / len(payloads) * 1e6


def _keep(best: dict[str, float], name: str, value: float) -> None:
    best[name] = min(value, best.get(name, value))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--events", type=int, default=2000)
    p.add_argument("--repeat", type=int, default=3, help="runs of each, alternated; the best is kept")
    args = p.parse_args(argv)
    if not (10 <= args.events <= 100_000 and 1 <= args.repeat <= 20):
        p.error("--events 10..100000, --repeat 1..20")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        with RollLog(folder / "tower", photo_cap_bytes=None) as log:
            for i in range(args.events):
                rid = log.accept({"notation": "3d6", "roller": "Ann"}, roller="Ann", client="bench")
                log.commit(rid, status="done", source="rng", total=i % 16 + 3)
        box = Outbox(folder / "tower", "bench")
        items = [o for start in range(0, args.events, 500) for o in box.after(start, 500)]
        box.close()
        key = load_or_create_key(folder / "tower")

        best: dict[str, float] = {}
        taken: dict[str, int] = {}
        plain: list[bytes] = []
        signed: list[bytes] = []
        for run in range(args.repeat):  # alternated, so a busy moment of the machine hits both
            t0 = time.process_time()
            plain = [encode(roll_event("t1", o.row, o.prev_seq, o.notes)) for o in items]
            _keep(best, "tower unsigned", (time.process_time() - t0) / len(items) * 1e6)
            t0 = time.process_time()
            signed = [encode(key.sign(roll_event("t1", o.row, o.prev_seq, o.notes))) for o in items]
            _keep(best, "tower signed", (time.process_time() - t0) / len(items) * 1e6)
            for name, payloads, keys in (
                ("hub unsigned", plain, {"accept_unsigned": True}),
                ("hub signed", signed, {"configured": {"t1": key.public}}),
            ):
                hub, store = _hub(folder / f"{name.replace(' ', '-')}-{run}", **keys)
                _keep(best, name, _take_all(hub, payloads))
                taken[name] = store.count()
                store.close()
    tower_plain, tower_signed = best["tower unsigned"], best["tower signed"]
    hub_plain, hub_signed = best["hub unsigned"], best["hub signed"]
    taken_plain, taken_signed = taken["hub unsigned"], taken["hub signed"]
    print(
        f"hub_signing: {len(items)} roll events of one tower, {len(signed[-1])} bytes each when signed;"
        f" CPU time, best of {args.repeat}"
    )
    print(
        f"  tower, build and encode: unsigned {tower_plain:.0f} µs, signed {tower_signed:.0f} µs"
        f" (+{tower_signed - tower_plain:.0f} µs per event)"
    )
    print(
        f"  hub, take (check, store, view): unsigned {hub_plain:.0f} µs,"
        f" signed and verified {hub_signed:.0f} µs"
        f" (+{hub_signed - hub_plain:.0f} µs per event); taken {taken_plain} and {taken_signed}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
