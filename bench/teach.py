"""The simulated tower taught its dice end to end: collect, group, name in Chromium, fit, read new rolls.

It runs the commands a newcomer runs (hardware/BUILD.md §6, docs/teach.md), as they are written:

1. ``dicetower teach collect --tower sim --rolls N --out DIR`` rolls the tray on the simulated
   tower (mock pins, virtual clock), with its early stop: it stops once ``teach fit`` could
   accept the folder. ``--tray default`` is the built-in tower's (4 white d6 and a red d6, no
   config file); ``--tray mixed`` a blue d20, a d% pair (red tens die, white units die) and two
   white d6 (``--tower config``);
2. ``teach collect`` groups each die's crops (``teach group``);
3. a person is played by this script in headless Chromium on ``dicetower serve --teach``: it
   looks at each group's crops through the camera's truth (``truth.jsonl``, which the product
   never reads), names each group by the face most of its crops show, clicks each misfit out of
   its group and names it alone, and saves; the page counts the names and clicks, and says
   what to run next;
4. the fit command the page said to run (``dicetower teach fit DIR --out MODEL``), once: the
   script stops if it refuses;
5. ``--read`` new rolls are read two ways: every die of ``dicetower record``'s photos scored by
   ``dicetower eval --taught`` (right, wrong, unreadable per die), and rolled through the tower
   with the taught reader (``Tower.throw``: an unreadable die is tapped or thrown again, as in
   play), each roll compared with the camera's truth.

Baseline: the same new rolls read by the general reader (``dicetower eval``).

    .venv/bin/python bench/teach.py --rolls 300 --read 200 --work runs/bench-teach
    .venv/bin/python bench/teach.py --tray mixed --rolls 300 --read 200 --work runs/bench-teach-mixed
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DICETOWER = [sys.executable, "-m", "dicetower.firmware.cli"]
CONFIG = """\
[camera]
backend = "sim"

[dice]
plain = ["blue d20", "2 white d6"]
tens = "red d10t"
units = "white d10"
"""


def run(args: list[str], **kw) -> subprocess.CompletedProcess:
    t0 = time.perf_counter()
    proc = subprocess.run([*DICETOWER, *args], capture_output=True, text=True, check=False, **kw)
    print(f"$ dicetower {' '.join(args)}  ({time.perf_counter() - t0:.0f} s)", flush=True)
    if proc.returncode != 0:
        print(proc.stdout, proc.stderr, file=sys.stderr)
        raise SystemExit(f"dicetower {args[0]} failed")
    return proc


def plan(teach: Path) -> dict:
    """Per die: each group's name (its crops' most common true face) and its misfits."""
    state = json.loads((teach / "teach.json").read_text())
    truth_lines = [json.loads(line) for line in (teach / "truth.jsonl").read_text().splitlines() if line]
    manifest = [json.loads(line) for line in (teach / "manifest.jsonl").read_text().splitlines() if line]
    out = {}
    for die in state["dice"]:
        faces = []
        for c in die["crops"]:
            line = manifest[c["line"] - 1]
            truth = truth_lines[c["line"] - 1]
            faces.append(_true_face(line, truth, c["index"]))
        groups = []
        for g, members in enumerate(die["groups"]):
            counts = Counter(faces[i] for i in members if faces[i] is not None)
            name = counts.most_common(1)[0][0] if counts else None
            misfits = [i for i in members if faces[i] != name and faces[i] is not None]
            keep = next((i for i in members if faces[i] == name), None)
            groups.append({"group": g, "name": name, "keep": keep, "misfits": {i: faces[i] for i in misfits}})
        out[die["slug"]] = {"kind": die["kind"], "groups": groups, "crops": len(die["crops"])}
    return out


def _true_face(line: dict, truth: dict, index: int) -> int | None:
    faces = truth.get("faces") if isinstance(truth, dict) else truth
    if isinstance(faces, list) and index < len(faces):
        return faces[index]
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def name_in_chromium(teach: Path, names: dict) -> dict:
    """Play the owner on the /teach page; returns the page's own counts per die."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    data = teach.parent / "serve-data"
    server = subprocess.Popen(
        [*DICETOWER, "serve", "--rng", "--teach", str(teach), "--port", str(port), "--data", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium") or "chromium",
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
            )
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/teach")
            page.wait_for_selector("body[data-ready]")
            steps = 0

            def settle() -> None:
                page.wait_for_function(
                    "n => window.dicetowerTeach.steps === n && window.dicetowerTeach.pending === 0", arg=steps
                )

            def type_face(face: int, kind: str) -> None:
                for key in str(face):
                    page.keyboard.press(key)
                if kind not in ("d4", "d6", "d8", "d10"):
                    page.keyboard.press("Enter")

            for slug, die in names.items():
                section = f"section.die[data-slug='{slug}']"
                for g in die["groups"]:
                    for crop, face in g["misfits"].items():  # a click moves a misfit out
                        page.click(f"{section} .group .crop[data-crop='{crop}']")
                        steps += 1
                        settle()
                        page.click(f"{section} .loose .crop[data-crop='{crop}']")
                        type_face(face, die["kind"])
                        steps += 1
                        settle()
                # a group is found by a crop it keeps: naming a face twice merges two groups
                for g in die["groups"]:
                    if g["name"] is None or g["keep"] is None:
                        continue
                    page.focus(f"{section} .group:has(.crop[data-crop='{g['keep']}'])")
                    type_face(g["name"], die["kind"])
                    steps += 1
                    settle()
            page.click("#save")
            page.wait_for_function("() => window.dicetowerTeach.saves === 1")
            status = page.inner_text("#status")
            next_label, next_text = page.inner_text("#next-label"), page.inner_text("#next-text")
            browser.close()
    finally:
        server.terminate()
        server.wait(10)
    state = json.loads((teach / "teach.json").read_text())
    return {
        "status": status,
        "next": (next_label, next_text),
        "work": {d["id"]: (d.get("work"), len(d.get("touched", [])), len(d["crops"])) for d in state["dice"]},
    }


def tower_rolls(config: Path | None, model: Path, rolls: int, seed: int) -> dict:
    """``rolls`` throws of the tower reading with the taught model, each compared with the truth."""
    from dataclasses import replace

    from dicetower.firmware.config import load_config
    from dicetower.firmware.errors import ThrowFailedError
    from dicetower.firmware.tower import open_tower

    cfg = load_config(config)
    cfg = replace(
        cfg, sim=replace(cfg.sim, seed=seed), reader=replace(cfg.reader, taught=str(model.resolve()))
    )
    right = wrong_rolls = failed = dice_wrong = 0
    with open_tower(cfg) as tower:
        for _ in range(rolls):
            try:
                record = tower.throw(reason="bench")
            except ThrowFailedError:
                failed += 1
                continue
            truth = [(d.box, d.face) for d in record.truth or () if d.box is not None]
            bad = 0
            for d in record.reading.dice if record.reading else ():
                cx, cy = d.centre
                _box, want = min(
                    truth, key=lambda t: abs(t[0][0] + t[0][2] / 2 - cx) + abs(t[0][1] + t[0][3] / 2 - cy)
                )
                bad += d.face != want
            dice_wrong += bad
            right += bad == 0
            wrong_rolls += bad > 0
    return {
        "rolls": rolls,
        "right": right,
        "with_a_wrong_die": wrong_rolls,
        "failed": failed,
        "dice_wrong": dice_wrong,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rolls", type=int, default=300)
    ap.add_argument("--read", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--tray", choices=("default", "mixed"), default="default", help="the built-in tower's dice, or mixed"
    )
    ap.add_argument("--work", type=Path, default=REPO / "runs" / "bench-teach")
    a = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    shutil.rmtree(a.work, ignore_errors=True)
    a.work.mkdir(parents=True)
    config: Path | None = None
    tower = ["--tower", "sim"]
    if a.tray == "mixed":
        config = a.work / "tower.toml"
        config.write_text(CONFIG)
        tower = ["--tower", "config", "--config", str(config)]
    teach, read = a.work / "teach", a.work / "read"
    t0 = time.perf_counter()
    collect = run(
        ["teach", "collect", *tower, "--rolls", str(a.rolls), "--out", str(teach), "--sim-seed", str(a.seed)]
    )
    collect_s = time.perf_counter() - t0
    print(collect.stdout)
    names = plan(teach)
    purity = {
        s: 1 - sum(len(g["misfits"]) for g in d["groups"]) / max(d["crops"], 1) for s, d in names.items()
    }
    print("grouping: share of crops in a group of their face:", {k: round(v, 4) for k, v in purity.items()})
    work = name_in_chromium(teach, names)
    print("naming:", work["status"])
    print("the page's next step:", *work["next"])
    words = shlex.split(work["next"][1])
    if work["next"][0] != "Next, in a shell:" or words[:3] != ["dicetower", "teach", "fit"]:
        raise SystemExit("the page does not say to fit: the folder is not ready")
    model = Path(words[words.index("--out") + 1])
    for die, (counts, touched, crops) in work["work"].items():
        print(f"  {die}: {counts}; touched {touched} of {crops} crops ({touched / max(crops, 1):.1%})")
    t1 = time.perf_counter()
    fit = run(words[1:])  # the page's command, as the owner pastes it: one try
    fit_s = time.perf_counter() - t1
    print("fit succeeded on the first try")
    print(fit.stdout)
    run(["record", str(read), "--rolls", str(a.read), *tower, "--sim-seed", str(a.seed + 1000)])
    for label, extra in (("taught", ["--taught", str(model)]), ("general (baseline)", [])):
        proc = run(["eval", str(read), "--json", *extra])
        d = json.loads(proc.stdout.splitlines()[-1])
        counts = f"right {d['correct']}, wrong {d['wrong']}, unreadable {d['rejected']}, missed {d['missed']}"
        print(
            f"eval {label}: {d['dice']} dice: {counts};"
            f" right {d['accuracy_interval']}, {d['median_ms']} ms/photo"
        )
        for kind, k in d["per_kind"].items():
            counts = f"right {k['correct']}, wrong {k['wrong']}, unreadable {k['rejected']}"
            print(f"    {kind}: {counts}, reject ratio {k['reject_ratio']}")
    rolls = tower_rolls(config, model, a.read, a.seed + 2000)
    print("tower rolls with the taught reader:", rolls)
    kept = len((teach / "manifest.jsonl").read_text().splitlines())
    print(f"collect {collect_s:.0f} s for {kept} rolls (of {a.rolls} asked); fit {fit_s:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
