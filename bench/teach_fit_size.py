"""Peak memory and time of ``dicetower teach fit`` on N rolls of the simulated tower's dice, beside a commit.

The folder is N rolls of the tray ``bench/teach.py`` teaches (a blue d20, a white d10, a red
d10t, two white d6), rendered at the tower camera's 640 x 480 and labelled with the truth
(boxes, faces, colours), as a teach folder is once named. Each side runs the fit in its own
process under ``/usr/bin/time -v``: its peak resident memory, its wall time and its CPU time (which
depends less on what else the machine runs), one after the other on the same folder (the machine's
load is printed beside them).

``--stages`` also prints, for each stage of the fit (the functions :data:`STAGES` names in
``dicetower.vision.taught.fit``), its calls, seconds and peak resident memory (the kernel's
high-water mark, reset as each stage starts), and the resident memory it leaves behind.

    nice .venv/bin/python bench/teach_fit_size.py --rolls 700 --work runs/fit-size --previous 177a52c --stages
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from previous_version import Checkout

#: The tray bench/teach.py teaches: (kind, colour) per die.
TRAY = [("d20", "blue"), ("d10", "white"), ("d10t", "red"), ("d6", "white"), ("d6", "white")]


def make_folder(folder: Path, rolls: int, seed: int = 7) -> None:
    """``rolls`` labelled photos of :data:`TRAY` (skipped when the folder already holds them)."""
    import cv2
    import numpy as np
    from dicetower.vision.kinds import KINDS
    from dicetower.vision.manifest import LabelledDie, write_manifest_line
    from dicetower.vision.synth.numerals import NumeralStyle, TrayDie, random_look, render_tray
    from dicetower.vision.synth.solids import face_values

    manifest = folder / "manifest.jsonl"
    if manifest.is_file() and len(manifest.read_text().splitlines()) == rolls:
        return
    style = NumeralStyle(
        tray=(118, 118, 118), blur=0.0, noise=0.0, perspective=0.0, light=0.0, grain=0.0, tilt=10.0
    )
    rng = np.random.default_rng(seed)
    looks = []
    for n, (kind, colour) in enumerate(TRAY):
        look = random_look(np.random.default_rng(zlib.crc32(f"{kind} {colour}".encode())), colour, "solid")
        looks.append((look, tuple(int(v) for v in face_values(kind, np.random.default_rng(n)))))
    (folder / "images").mkdir(parents=True, exist_ok=True)
    with open(manifest, "w", encoding="utf-8") as fh:
        for r in range(rolls):
            dice = []
            for (kind, colour), (look, values) in zip(TRAY, looks, strict=True):
                faces = KINDS[kind].faces
                face = faces[int(rng.integers(len(faces)))]
                dice.append(TrayDie(kind, face, colour, "solid", False, look, values, 70.0))
            frame, _ref, labels = render_tray(seed * 100_000 + r, dice, (640, 480), style=style)
            name = f"images/roll-{r + 1:05d}.png"
            cv2.imwrite(str(folder / name), frame)
            named = [
                LabelledDie(d.die, d.face, d.box, colour=c) for d, (_k, c) in zip(labels, TRAY, strict=True)
            ]
            write_manifest_line(fh, name, named)


#: The fit's stages timed and measured by ``--stages``: names looked up in ``dicetower.vision.taught.fit``
#: (a name a version lacks is skipped).
STAGES = (
    "_load_photos",
    "locate_examples",
    "_fit_die",
    "fit_telling",
    "_general_answer",
    "_write_networks",
    "derive_tray",
    "write_held_back",
    "read_held_back",
    "calibrate",
)

#: Runs in the fit's process: wraps each stage to record its seconds and peak RSS, printed at exit.
_STAGE_PROBE = """
import atexit, functools, time
import dicetower.vision.taught.fit as fit_module

def _status(key):
    with open('/proc/self/status') as fh:
        return next(int(line.split()[1]) // 1024 for line in fh if line.startswith(key))

def _reset():
    with open('/proc/self/clear_refs', 'w') as fh:
        fh.write('5')

_open, _rows = [], {}

def _wrap(name, fn):
    @functools.wraps(fn)
    def staged(*args, **kwargs):
        peak = _status('VmHWM:')
        for frame in _open:
            frame[1] = max(frame[1], peak)
        _reset()
        frame = [name, 0]
        _open.append(frame)
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            seconds = time.perf_counter() - t0
            _open.pop()
            peak = max(frame[1], _status('VmHWM:'))
            for outer in _open:
                outer[1] = max(outer[1], peak)
            row = _rows.setdefault(name, [0, 0.0, 0, 0])
            row[0] += 1
            row[1] += seconds
            row[2] = max(row[2], peak)
            row[3] = _status('VmRSS:')
    return staged

for _name in STAGES:
    if hasattr(fit_module, _name):
        setattr(fit_module, _name, _wrap(_name, getattr(fit_module, _name)))

@atexit.register
def _print():
    for name, (calls, seconds, peak, after) in _rows.items():
        line = f'stage {name}: {calls} calls, {seconds:.1f} s, peak {peak} MB, {after} MB after'
        print(line, file=sys.stderr)
"""


def fit(env: dict[str, str], folder: Path, out: Path, *, stages: bool = False) -> dict[str, float | int]:
    """Run the fit in a process of its own; its peak RSS (MB), wall seconds and exit status."""
    probe = f"STAGES = {STAGES!r}\n{_STAGE_PROBE}" if stages else ""
    code = (
        "import sys\n" + probe + "from dicetower.firmware.cli import main\n"
        "argv = ['teach', 'fit', sys.argv[1], '--out', sys.argv[2], '--force', '--max-wrong', '1']\n"
        "raise SystemExit(main(argv))"
    )
    done = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, "-c", code, str(folder), str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", done.stderr)
    cpu = sum(float(m) for m in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", done.stderr))
    seconds = 0.0
    if wall:
        for part in wall.group(1).split(":"):
            seconds = seconds * 60 + float(part)
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
    peak_mb = round(int(rss.group(1)) / 1024) if rss else -1
    for line in done.stderr.splitlines():
        if line.startswith("stage "):
            print(f"  {line}")
            # the probe resets the high-water mark at each stage, which time -v reads at exit
            peak_mb = max(peak_mb, int(re.search(r"peak (\d+) MB", line).group(1)))  # type: ignore[union-attr]
    return {
        "rss_mb": peak_mb,
        "seconds": round(seconds),
        "cpu_seconds": round(cpu),
        "rc": done.returncode,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rolls", type=int, default=700)
    ap.add_argument("--work", type=Path, default=Path("runs/fit-size"))
    ap.add_argument("--previous", metavar="REV", help="an earlier commit to run beside this tree")
    ap.add_argument("--stages", action="store_true", help="time and measure each stage of the fit")
    a = ap.parse_args(argv)
    folder = a.work / f"teach-{a.rolls}"
    make_folder(folder, a.rolls)
    sides = [("this tree", None)] + ([(f"previous {a.previous}", a.previous)] if a.previous else [])
    for name, rev in sides:
        with Checkout(rev) as checkout:
            load = os.getloadavg()[0]
            got = fit(checkout.env(), folder, a.work / f"model-{rev or 'this'}", stages=a.stages)
        print(
            f"{name}: {a.rolls} rolls, peak RSS {got['rss_mb']} MB, {got['seconds']} s"
            f" ({got['cpu_seconds']} s of CPU, user and system),"
            f" load {load:.1f} at start, rc {got['rc']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
