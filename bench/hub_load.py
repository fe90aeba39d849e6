"""Benchmark: many towers publishing to one Mosquitto, one hub showing them all.

Usage::

    .venv/bin/python bench/hub_load.py [--towers 20] [--rate 1] [--duration 600] [--supply sim|rng]
                                       [--signing on|off|both] [--log-cap-mb MB]

Starts a Mosquitto on a free loopback port (Debian's binary, a generated config), ``dicetower
hub`` and ``--towers`` towers (``dicetower serve --tower sim --mqtt ...``, or ``--rng``) as real
processes, connects one WebSocket client to the hub's ``/ws`` as the hub overlay does, and posts
``--rate`` rolls a second to every tower for ``--duration`` seconds (staggered, on a fixed
schedule: a roll that is not accepted is counted, never re-sent). It prints:

* rolls: posted, accepted, finished on the towers (and the rate each tower kept up);
* the hub: rolls its overlay client received, lost (finished on a tower, never received) and
  received twice (both must be 0);
* latency from each roll's end on its tower (the row's ``finished_at``) to its arrival on the
  hub's WebSocket: p50 / p99 / max;
* memory (resident set) and CPU seconds of the hub and of the broker, and the towers' together;
* the hub's log on disk: ``hub.sqlite3`` (and its write-ahead log) at the end and at most during
  the run (sampled every 2 s), against ``--log-cap-mb`` (the hub's cap; default its own, 512 MB).

The named baseline is the same table on the RNG supply (``--supply rng``): real ``dicetower
serve`` processes, log and publisher, with dice that cost nothing to roll, so the difference is
the sim tower's camera and vision. ``--signing both`` (RNG towers) runs the table twice in one
go, first unsigned (towers with ``[mqtt] sign = false``, the hub with ``--accept-unsigned``: the
baseline), then signed (the hub with ``--trust-first-use``), and prints both (``--repeat N``: the
pair N times, alternated, to show the noise): the difference is what signing and checking each
event costs. Loopback only; bounded in time and counts.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
from pathlib import Path

import httpx
from dicetower.firmware.loopback.broker import Mosquitto, free_port
from dicetower.firmware.loopback.table import HubWatcher, Process, start_hub, start_tower

__all__ = ["main"]


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks of 1/100 s


def _file_mb(path: Path) -> float:
    try:
        return path.stat().st_size / 2**20
    except FileNotFoundError:
        return 0.0


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


async def _drive(towers: list[Process], rate: float, duration: float, counts: dict[str, int]) -> None:
    """Post ``rate`` rolls a second to every tower on a fixed, staggered schedule."""
    period = 1.0 / rate
    async with httpx.AsyncClient(timeout=10) as client:
        t0 = time.monotonic()

        async def one(i: int, tower: Process) -> None:
            n = 0
            while True:
                due = t0 + i * period / len(towers) + n * period
                if due - t0 >= duration:
                    return
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                n += 1
                counts["posted"] += 1
                with contextlib.suppress(httpx.HTTPError):
                    r = await client.post(
                        tower.base + "/api/rolls", json={"notation": "3d6", "roller": tower.name}
                    )
                    counts["accepted" if r.status_code == 202 else f"refused {r.status_code}"] = (
                        counts.get("accepted" if r.status_code == 202 else f"refused {r.status_code}", 0) + 1
                    )

        await asyncio.gather(*(one(i, t) for i, t in enumerate(towers)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--towers", type=int, default=20)
    p.add_argument("--rate", type=float, default=1.0, help="rolls a second per tower")
    p.add_argument("--duration", type=float, default=600.0)
    p.add_argument("--supply", choices=("sim", "rng"), default="sim")
    p.add_argument(
        "--signing",
        choices=("on", "off", "both"),
        default="on",
        help="towers sign their events (on), do not (off: the baseline), or both tables in turn",
    )
    p.add_argument(
        "--repeat", type=int, default=1, help="with --signing both: the pair this many times, alternated"
    )
    p.add_argument(
        "--log-cap-mb", type=float, default=None, help="the hub's --log-cap-mb (default: the hub's own)"
    )
    p.add_argument(
        "--folder", type=Path, default=None, help="keep the logs here (default: a temporary folder)"
    )
    args = p.parse_args(argv)
    if not (1 <= args.towers <= 50 and 0 < args.rate <= 10 and 0 < args.duration <= 3600):
        p.error("--towers 1..50, --rate up to 10, --duration up to 3600")
    if args.signing != "on" and args.supply != "rng":
        p.error("--signing off|both runs RNG towers: add --supply rng")
    if not 1 <= args.repeat <= 5:
        p.error("--repeat 1..5")
    order = {"on": (True,), "off": (False,), "both": (False, True) * args.repeat}[args.signing]
    for sign in order:  # alternated, so the machine's busy moments fall on both
        _table(args, sign)
    return 0


def _table(args: argparse.Namespace, sign: bool) -> None:
    """Run one table for ``args.duration`` seconds and print its figures."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        folder = (args.folder or Path(tmp)) / ("signed" if sign else "unsigned")
        broker = Mosquitto(folder / "broker").start()
        procs: list[Process] = []
        try:
            hub = start_hub(
                broker.url,
                free_port(),
                folder,
                trust="first-use" if sign else "unsigned",
                log_cap_mb=args.log_cap_mb,
            )
            db = folder / "hub" / "hub.sqlite3"
            wal = db.with_name(db.name + "-wal")
            disk_max = [0.0, 0.0]
            procs.append(hub)
            towers = [
                start_tower(f"t{i:02d}", broker.url, free_port(), folder, rng=args.supply == "rng", sign=sign)
                for i in range(args.towers)
            ]
            procs += towers
            for proc in procs:
                proc.wait_up(180)
            watcher = HubWatcher(hub.base, limit=1_000_000)
            counts = {"posted": 0}
            assert broker.pid is not None
            start_cpu = {"hub": _cpu_s(hub.proc.pid), "broker": _cpu_s(broker.pid)}
            start_towers_cpu = sum(_cpu_s(t.proc.pid) for t in towers)
            samples: list[tuple[float, float, float]] = []
            t0 = time.monotonic()

            def disk() -> None:
                disk_max[0] = max(disk_max[0], _file_mb(db))
                disk_max[1] = max(disk_max[1], _file_mb(wal))

            async def run() -> None:
                drive = asyncio.create_task(_drive(towers, args.rate, args.duration, counts))
                n = 0
                while not drive.done():
                    disk()
                    if n % 5 == 0:
                        samples.append((time.monotonic() - t0, _rss_mb(hub.proc.pid), _rss_mb(broker.pid)))
                    n += 1
                    await asyncio.wait([drive], timeout=2)
                await drive

            asyncio.run(run())
            posting = time.monotonic() - t0
            expected: set[tuple[str, int]] = set()
            deadline = time.monotonic() + 120  # the towers finish their queues; the hub catches up
            while time.monotonic() < deadline:
                disk()
                pending = sum(t.get("/api/tower")["queue_length"] for t in towers)
                expected = {(t.name, r["id"]) for t in towers for r in _all_rolls(t)}
                if not pending and expected <= set(watcher.keys()):
                    break
                time.sleep(1)
            wall = time.monotonic() - t0
            drained = wall - posting
            samples.append((time.monotonic() - t0, _rss_mb(hub.proc.pid), _rss_mb(broker.pid)))
            cpu = {
                "hub": _cpu_s(hub.proc.pid) - start_cpu["hub"],
                "broker": _cpu_s(broker.pid) - start_cpu["broker"],
            }
            towers_cpu = sum(_cpu_s(t.proc.pid) for t in towers) - start_towers_cpu
            towers_rss = sum(_rss_mb(t.proc.pid) for t in towers)
            disk()
            disk_end = (_file_mb(db), _file_mb(wal))
            log_size = hub.get("/api/towers").get("log", {})
            keys = watcher.keys()
            got = set(keys)
            lat = [(r - f) * 1000 for _t, _s, f, r in watcher.results if f]
            closed_early = watcher.why
            watcher.close()
        finally:
            for proc in procs:
                proc.stop()
            broker.stop()
    finished = len(expected)
    print(
        f"hub_load: {args.towers} {args.supply} towers x {args.rate:g} roll/s for {args.duration:g} s,"
        f" {'signed' if sign else 'unsigned'}"
    )
    print(
        f"  rolls: posted {counts['posted']}, "
        + ", ".join(f"{k} {v}" for k, v in counts.items() if k != "posted")
    )
    print(
        f"  finished on the towers: {finished}"
        f" ({finished / args.duration / args.towers:.2f} roll/s per tower;"
        f" every roll on the hub {drained:.0f} s after the last post)"
    )
    print(
        f"  hub overlay client: received {len(got)}, lost {len(expected - got)}, twice {len(keys) - len(got)}"
        f"{f', its connection ended: {closed_early}' if closed_early else ''}"
    )
    print(
        f"  roll end -> hub WebSocket: p50 {statistics.median(lat) if lat else float('nan'):.0f} ms,"
        f" p99 {_pct(lat, 0.99):.0f} ms, max {max(lat) if lat else float('nan'):.0f} ms ({len(lat)} rolls)"
    )
    second = [s for s in samples if s[0] >= 60] or samples
    print(
        f"  hub: RSS {second[0][1]:.0f} MB after 1 min, {samples[-1][1]:.0f} MB at the end;"
        f" CPU {cpu['hub']:.1f} s ({100 * cpu['hub'] / wall:.1f} % of one core)"
    )
    print(
        f"  broker: RSS {second[0][2]:.1f} MB after 1 min, {samples[-1][2]:.1f} MB at the end;"
        f" CPU {cpu['broker']:.1f} s ({100 * cpu['broker'] / wall:.1f} % of one core)"
    )
    cap = f"{args.log_cap_mb:g} MB" if args.log_cap_mb is not None else "the hub's default"
    print(
        f"  hub log (cap {cap}): hub.sqlite3 {disk_end[0]:.2f} MB at the end, {disk_max[0]:.2f} MB at most;"
        f" its WAL {disk_end[1]:.2f} MB at the end, {disk_max[1]:.2f} MB at most;"
        f" {log_size.get('thinned', 0)} events thinned, {log_size.get('removed', 0)} rows removed"
    )
    print(
        f"  towers together: RSS {towers_rss:.0f} MB,"
        f" CPU {towers_cpu:.0f} s ({100 * towers_cpu / wall:.0f} % of one core)"
    )


def _all_rolls(tower: Process) -> list[dict]:
    """Every finished roll of a tower, paged (``GET /api/rolls`` gives 200 at most)."""
    out: list[dict] = []
    url = "/api/rolls?limit=200"
    for _ in range(1000):
        page = tower.get(url)
        out += page["rolls"]
        if not page.get("next"):
            return out
        url = page["next"]
    return out


if __name__ == "__main__":
    raise SystemExit(main())
