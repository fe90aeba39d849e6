"""Benchmark: the simulated tower under random faults, the solenoid's limits, software time and memory.

    .venv/bin/python bench/tower.py [--rolls 1000] [--commands 10000] [--fault-rate 0.3] [--seed 1]

1. ``--rolls`` rolls of the whole tray (the red wild die and four white d6, as a Runic Flux
   skill roll asks) on the simulated tower, a fault drawn at ``--fault-rate`` per throw from
   all eight the simulated camera knows. Each roll must end with every die read equal to the
   face the renderer drew, or with an explicit failure naming its reason; the counts are
   printed, with the slowest roll's wall time (none may hang). A die that left the tray is
   put back after its failure, as a person would. The faces the completed rolls reported
   are tested for uniformity per slot (Pearson's chi-squared, 5 degrees of freedom): the
   retry rule must not bias them.
2. ``--commands`` random shake and tap commands (on-times from nonsense to 0.5 s, random
   rests and idle gaps) on gpiozero's MockFactory with a virtual clock: the on-times, rests
   and sliding-window duty the mock pin recorded, against the limits.
3. The software time of one roll cycle (every wait zero on the virtual clock), by stage,
   median over the fault-free rolls, next to the baseline of the reader alone on the same
   photos (``FrameReader.read``, what any caller of the vision package pays).
4. Resident memory after 10 rolls and after all of them.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import time
from collections import Counter
from typing import Any

import cv2
from dicetower.firmware.clock import VirtualClock, VirtualClockFactory
from dicetower.firmware.config import DEFAULT_CONFIG, FAULTS
from dicetower.firmware.errors import ThrowFailedError
from dicetower.firmware.pattern import ShakePattern
from dicetower.firmware.shaker import Shaker
from dicetower.firmware.tower import open_tower
from dicetower.rules.source import DiceRequest, DieSlot, Role
from dicetower.vision.reader import FrameReader

__all__ = ["chi2_sf", "main"]


def chi2_sf(x: float, k: int) -> float:
    """P(X >= x) for chi-squared with ``k`` degrees of freedom (regularised upper incomplete gamma)."""
    a, z = k / 2.0, x / 2.0
    if z <= 0:
        return 1.0
    if z < a + 1:  # series for the lower part
        term = total = 1.0 / a
        n = a
        for _ in range(500):
            n += 1
            term *= z / n
            total += term
            if term < total * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-z + a * math.log(z) - math.lgamma(a)))
    # continued fraction for the upper part (Lentz)
    b, c, d = z + 1 - a, 1e300, 1 / (z + 1 - a)
    h = d
    for i in range(1, 500):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1 / (d if abs(d) > 1e-300 else 1e-300)
        c = b + an / c
        c = c if abs(c) > 1e-300 else 1e-300
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return math.exp(-z + a * math.log(z) - math.lgamma(a)) * h


def rss_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def nearest(truth: Any, box: tuple[float, ...]) -> Any:
    cx, cy = box[0] + box[2] / 2, box[1] + box[3] / 2
    return min(truth, key=lambda d: (d.box[0] + d.box[2] / 2 - cx) ** 2 + (d.box[1] + d.box[3] / 2 - cy) ** 2)


def bench_rolls(n: int, fault_rate: float, seed: int) -> dict[str, Any]:
    from dataclasses import replace

    cfg = DEFAULT_CONFIG.with_changes(
        sim=replace(DEFAULT_CONFIG.sim, seed=seed, fault_rate=fault_rate, faults=FAULTS)
    )
    reader = FrameReader()
    slots = (DieSlot(0, "d6", Role.WILD, label="wild die"), *(DieSlot(i, "d6") for i in range(1, 5)))
    request = DiceRequest(slots, "bench roll")
    outcome: Counter[str] = Counter()
    wrong_dice = read_dice = 0
    per_slot: list[Counter[int]] = [Counter() for _ in slots]
    retries: Counter[str] = Counter()
    stages: dict[str, list[float]] = {}
    baseline: list[float] = []
    slowest = 0.0
    rss10 = float("nan")
    with open_tower(cfg, reader=reader) as tower:
        for i in range(n):
            t0 = time.perf_counter()
            try:
                answer = tower.roll(request)
            except ThrowFailedError as exc:
                outcome[f"failed: {getattr(exc.reason, 'value', exc.reason)}"] += 1
                tower.camera.return_dice()
                record = exc.record
            else:
                (record,) = answer.records
                wrong = sum(1 for d in record.reading.dice if d.face != nearest(record.truth, d.box).face)
                wrong_dice += wrong
                read_dice += len(record.reading.dice)
                outcome[
                    "read, every die equal to the truth"
                    if not wrong
                    else "read, a die NOT equal to the truth"
                ] += 1
                for k, face in enumerate(answer.faces):
                    per_slot[k][face] += 1
                if not record.retries:
                    for stage, ms in record.timings_ms.items():
                        stages.setdefault(stage, []).append(ms)
                    if len(baseline) < 200:
                        frame = cv2.imdecode(_array(record.photo), cv2.IMREAD_COLOR)
                        t = time.perf_counter()
                        reader.read(frame, tower.calibration.reference)
                        baseline.append((time.perf_counter() - t) * 1000)
            if record is not None:
                for r in record.retries:
                    retries[f"{r.action}: {r.reason.split(':')[0]}"] += 1
            slowest = max(slowest, time.perf_counter() - t0)
            if i == 9:
                rss10 = rss_mib()
        injected = Counter(tower.camera.injected)
    return {
        "outcome": outcome,
        "wrong_dice": wrong_dice,
        "read_dice": read_dice,
        "per_slot": per_slot,
        "retries": retries,
        "injected": injected,
        "stages": stages,
        "baseline": baseline,
        "slowest_s": slowest,
        "rss10": rss10,
        "rss_end": rss_mib(),
    }


def _array(data: bytes) -> Any:
    import numpy as np

    return np.frombuffer(data, np.uint8)


def bench_commands(n: int, seed: int) -> dict[str, Any]:
    limits = ShakePattern.from_config(DEFAULT_CONFIG.shaker).limits
    clock = VirtualClock()
    factory = VirtualClockFactory(clock)
    rng = random.Random(seed)
    notes: Counter[str] = Counter()
    t0 = time.perf_counter()
    with Shaker(17, pin_factory=factory, limits=limits, clock=clock) as shaker:
        for _ in range(n):
            if rng.random() < 0.5:
                got = [shaker.tap(rng.choice([rng.uniform(-0.05, 0.5), float("nan"), 0.0, 10.0]))]
            else:
                got = shaker.shake(rng.randint(0, 12), rng.uniform(0.0, 0.5), rng.uniform(0.0, 0.3))
            for p in got:
                notes["refused" if p.refused else "shortened" if "shortened" in p.note else "as asked"] += 1
            if rng.random() < 0.3:
                clock.advance(rng.expovariate(1 / 3.0))
        states = list(shaker.pin.states)
    wall = time.perf_counter() - t0
    t, intervals = 0.0, []
    for prev, s in itertools.pairwise(states):
        t += s.timestamp
        if prev.state and not s.state:
            intervals.append((t - s.timestamp, t))
    rests = [b[0] - a[1] for a, b in itertools.pairwise(intervals)]
    worst_window = 0.0
    j = 0
    for k, (_, end) in enumerate(intervals):  # windows ending at each pulse's end, where duty peaks
        lo = end - limits.window_s
        while intervals[j][1] <= lo:
            j += 1
        used = sum(e - max(s, lo) for s, e in intervals[j : k + 1])
        worst_window = max(worst_window, used)
    return {
        "limits": limits,
        "pulses": len(intervals),
        "notes": notes,
        "max_on": max(e - s for s, e in intervals),
        "min_rest": min(rests) if rests else float("nan"),
        "worst_window": worst_window,
        "virtual_s": clock.ticks(),
        "wall_s": wall,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rolls", type=int, default=1000)
    ap.add_argument("--commands", type=int, default=10_000)
    ap.add_argument("--fault-rate", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)

    c = bench_commands(args.commands, args.seed)
    lim = c["limits"]
    print(f"## {args.commands} random shake/tap commands on MockFactory (virtual clock)")
    print(f"pulses reaching the pin: {c['pulses']}; requests {dict(c['notes'])}")
    print(f"longest on-time recorded {c['max_on'] * 1000:.1f} ms (limit {lim.max_on_s * 1000:g} ms)")
    print(f"shortest rest recorded   {c['min_rest'] * 1000:.1f} ms (limit {lim.min_off_s * 1000:g} ms)")
    print(
        f"most on-time in any {lim.window_s:g} s window {c['worst_window']:.3f} s "
        f"(limit {lim.budget_s:g} s = {lim.max_duty:g} duty)"
    )
    ok = c["max_on"] <= lim.max_on_s + 1e-9 and c["min_rest"] >= lim.min_off_s - 1e-9
    ok = ok and c["worst_window"] <= lim.budget_s + 1e-6
    verdict = "yes" if ok else "NO"
    print(f"within every limit: {verdict}; {c['virtual_s']:.0f} s of pin time in {c['wall_s']:.2f} s")
    print()

    r = bench_rolls(args.rolls, args.fault_rate, args.seed)
    print(f"## {args.rolls} simulated rolls (wild + 4 d6), fault rate {args.fault_rate:g} per throw")
    print(f"faults injected: {dict(sorted(r['injected'].items()))}")
    for what, n in sorted(r["outcome"].items()):
        print(f"  {what:<40} {n:>5}")
    print(f"dice read: {r['read_dice']}, not equal to the truth: {r['wrong_dice']}")
    print(f"retries: {dict(sorted(r['retries'].items()))}")
    print(f"slowest roll: {r['slowest_s']:.2f} s wall (none hangs: every wait and retry is bounded)")
    print("uniformity of the completed rolls' faces (chi-squared, 5 dof):")
    for k, counts in enumerate(r["per_slot"]):
        total = sum(counts.values())
        if not total:
            continue
        chi2 = sum((counts.get(f, 0) - total / 6) ** 2 / (total / 6) for f in range(1, 7))
        name = "wild (red)" if k == 0 else f"plain {k}"
        faces = " ".join(f"{counts.get(f, 0):>4}" for f in range(1, 7))
        p = chi2_sf(chi2, 5)
        print(f"  slot {k} {name:<10} n={total:<5} faces 1-6: {faces}   chi2 {chi2:6.2f}  p {p:.3f}")
    print()
    clean = len(r["stages"].get("total", []))
    print(f"## software time of one roll cycle (waits zero), median of the {clean} rolls without retries")
    for stage in ("shake", "settle", "camera", "read", "match", "total"):
        values = r["stages"].get(stage)
        if values:
            print(f"  {stage:<8} {statistics.median(values):7.2f} ms")
    if r["baseline"]:
        read_alone = statistics.median(r["baseline"])
        tot = statistics.median(r["stages"]["total"])
        cam = statistics.median(r["stages"]["camera"])
        print(f"  baseline: the reader alone on the same photos {read_alone:.2f} ms")
        own = tot - cam - statistics.median(r["stages"]["read"])
        print(f"  the cycle's own work (total - camera - read): {own:.2f} ms")
    print()
    print(
        f"## resident memory: after 10 rolls {r['rss10']:.1f} MiB, after {args.rolls} {r['rss_end']:.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
