"""``dicetower tower shake|tap|capture|calibrate|status|run|watch|config``, and the ``--tower`` options.

Which tower: ``--tower sim`` is the built-in one (mock pins, the simulated camera; a
``--config`` file's dice and limits when one is given), ``--tower replay --replay DIR``
plays a recorded folder on mock pins, and ``--tower config`` (the default of these
subcommands) is the tower the config file describes: ``--config PATH`` or
``/etc/dicetower/config.toml``. Nothing falls back to the simulator silently.

Every command that can drive the solenoid turns SIGTERM and SIGINT into a clean exit that
drives the pin low first (:func:`~dicetower.firmware.signals.install_signal_handlers`).
Heavy imports (numpy, OpenCV, gpiozero) happen inside the commands, not at start-up.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import COMMANDS
from .throws import ThrowFolder, describe_throws

if TYPE_CHECKING:
    from ..config import Config
    from ..records import ThrowRecord
    from ..tower import Tower

__all__ = [
    "TOWER_CHOICES",
    "add_tower_arguments",
    "check_on_tower",
    "opened_tower",
    "register",
    "roll_on_tower",
    "tower_config",
]

TOWER_CHOICES = ("sim", "config", "replay")

EXAMPLES = """\
examples:
  dicetower tower status --tower sim        the simulated tower's state, dice and calibration
  dicetower tower shake --tower sim         one shake pattern through the solenoid's limits
  dicetower tower calibrate                 lock the camera and photograph the empty tray (real tower)
  dicetower tower capture --out tray.jpg    one photo, tray light on
  dicetower tower run                       wait for the button; roll [roll] default each press
  dicetower tower watch --tower sim         a live status line while a roll runs
  dicetower tower config --check my.toml    validate a config file
  dicetower tower status --taught my-dice   the taught reader's dice and how sure it is lately

Run 'dicetower tower ACTION --help' for an action's options and examples.
"""

#: Each action's examples (its help page's epilog).
ACTION_EXAMPLES: dict[str, str] = {
    "shake": """\
  dicetower tower shake --tower sim         one shake on the simulated tower's mock pins
  dicetower tower shake                     the real tower of /etc/dicetower/config.toml
  dicetower tower shake --config my.toml    the tower my.toml describes
""",
    "tap": """\
  dicetower tower tap --tower sim           one short pulse on the simulated tower
  dicetower tower tap                       settle a leaning die on the real tower
""",
    "capture": """\
  dicetower tower capture --tower sim --out tray.jpg   photograph the simulated tray and read it
  dicetower tower capture --out tray.png --no-read     one photo of the real tray, not read
""",
    "calibrate": """\
  dicetower tower calibrate                 empty the tray, press Enter: locks the camera, saves the reference
  dicetower tower calibrate --yes --tray 40,30,600,30,600,450,40,450   the tray's outline; no prompt
  dicetower tower calibrate --tower sim     the simulated camera (kept in memory)
""",
    "status": """\
  dicetower tower status --tower sim        the simulated tower's state, dice and calibration
  dicetower tower status --json             the real tower's status as JSON
  dicetower tower status --taught my-dice   the taught reader's dice and how sure it is lately
""",
    "run": """\
  dicetower tower run                       wait for the button; each press rolls the [roll] default
  dicetower tower run 4d6kh3+2 2d6 --presses 2   the first two presses roll these, then it stops
  dicetower tower run --tower sim --autopress --presses 3   the simulated button presses itself 3 times
""",
    "watch": """\
  dicetower tower watch --tower sim         roll the [roll] default, showing each state on one line
  dicetower tower watch 2d6+3 --tower sim --sim-seed 4   a repeatable simulated roll
""",
    "config": """\
  dicetower tower config                    print the config in force (the default file's, or built in)
  dicetower tower config --check            validate /etc/dicetower/config.toml: every problem a line
  dicetower tower config --check my.toml    validate my.toml
  dicetower tower config --config my.toml   print my.toml's config, validated
""",
}


def add_tower_arguments(
    p: argparse.ArgumentParser, *, default: str | None = None, throws: bool = True
) -> None:
    """``--tower``, ``--replay``, ``--config``, ``--sim-seed`` and ``--taught`` on a parser, and
    ``--save`` and ``--photo-cap-mb`` where the command keeps its throws (``throws``)."""
    g = p.add_argument_group("tower")
    g.add_argument(
        "--tower",
        choices=TOWER_CHOICES,
        default=default,
        help="roll on a tower: the simulated one, the one in the config file, or a replayed folder",
    )
    g.add_argument("--replay", metavar="DIR", help="with --tower replay: a folder with manifest.jsonl")
    g.add_argument("--config", metavar="PATH", help="tower config file (default /etc/dicetower/config.toml)")
    if throws:
        g.add_argument(
            "--save",
            metavar="DIR",
            help="where each throw's photo and record go (default: ~/.local/state/dicetower/throws)",
        )
        g.add_argument(
            "--photo-cap-mb",
            type=float,
            metavar="MB",
            help="keep that folder under MB megabytes, oldest throws removed first "
            "(DICETOWER_PHOTO_CAP_MB; default 512)",
        )
    g.add_argument("--sim-seed", type=int, metavar="N", help="seed the simulated tray's throws")
    g.add_argument(
        "--taught",
        metavar="MODEL",
        help="read the dice a taught model knows with their own reader (dicetower teach fit), "
        "the others with the general reader; instead of the config's [reader] taught",
    )


def tower_config(args: argparse.Namespace) -> Config:
    """The config ``--tower`` / ``--config`` / ``--replay`` name (validated)."""
    from ..config import DEFAULT_PATH, ConfigError, load_config

    which = getattr(args, "tower", None) or "config"
    path = getattr(args, "config", None)
    replay = getattr(args, "replay", None)
    taught = getattr(args, "taught", None)
    if replay and which != "replay":
        raise ConfigError("--replay DIR goes with --tower replay")
    if which == "config":
        if path is None and not DEFAULT_PATH.is_file():
            raise ConfigError(
                f"no tower config at {DEFAULT_PATH}: give --config PATH, or --tower sim (the simulated tower)"
            )
        cfg = load_config(path or DEFAULT_PATH, taught=taught)
    else:
        cfg = load_config(path, taught=taught)
        pins = _replace(cfg.pins, factory="mock")
        if which == "sim":
            camera = _replace(cfg.camera, backend="sim")
        else:
            if not replay:
                raise ConfigError("--tower replay needs --replay DIR (a folder with manifest.jsonl)")
            camera = _replace(cfg.camera, backend="replay", replay=str(replay))
        cfg = cfg.with_changes(pins=pins, camera=camera)
    seed = getattr(args, "sim_seed", None)
    if seed is not None:
        if seed < 0:
            raise ConfigError("--sim-seed must be 0 or more")
        cfg = cfg.with_changes(sim=_replace(cfg.sim, seed=seed))
    return cfg


def _replace(obj: Any, **kw: Any) -> Any:
    from dataclasses import replace

    return replace(obj, **kw)


@contextlib.contextmanager
def opened_tower(args: argparse.Namespace, *, calibrate: bool | None = None) -> Iterator[Tower]:
    """Open the tower ``args`` name; SIGTERM/SIGINT drive the solenoid low; closed on every way out."""
    from ..signals import signals_off
    from ..tower import open_tower

    cfg = tower_config(args)
    tower = open_tower(cfg, calibrate=calibrate)
    try:
        with signals_off(tower.shaker.off):
            yield tower
    finally:
        tower.close()


def _check_no_rng_options(args: argparse.Namespace) -> None:
    from ...rules.errors import RuleParameterError

    for name in ("seed", "faces"):
        if getattr(args, name, None) is not None:
            raise RuleParameterError(f"--{name} and --tower are two sources of dice; give one")


def _report(kind: str, doc: dict[str, Any], text: str, source: Any, as_json: bool) -> None:
    if as_json:
        doc["tower"] = {
            "camera": source.tower.camera.name,
            "throws": [
                {
                    **r.to_json(r.saved.with_suffix(".jpg").name if r.saved and r.photo else None),
                    "saved": str(r.saved),
                }
                for r in source.records
            ],
        }
        print(json.dumps(doc, indent=2))
        return
    print(text)
    print(f"tower ({source.tower.camera.name} camera): {len(source.records)} throw(s)")
    print(describe_throws(source.records))


def _tower_failed(exc: Exception, source: Any) -> int:
    from ...rules.errors import printable

    print(f"dicetower: error: {printable(str(exc))}", file=sys.stderr)
    record = getattr(exc, "record", None)
    if record is not None and record.saved is not None:
        photo = record.saved.with_suffix(".jpg")
        shown = printable(str(photo)) if photo.exists() else "(none)"
        print(f"  last photo: {shown}  record: {printable(str(record.saved))}", file=sys.stderr)
    return 1


def roll_on_tower(args: argparse.Namespace, expression: Any) -> int:
    """``dicetower roll EXPR --tower ...``: the result, which die gave which face, where the photos are."""
    from ...rules.notation import Roller
    from ..source import TowerSource, TowerSourceError

    _check_no_rng_options(args)
    throws = ThrowFolder.from_args(args)
    with opened_tower(args) as tower:
        source = TowerSource(tower, on_throw=lambda r: throws.save([r]))
        try:
            result = Roller(cache_size=0).roll(expression, source)
        except TowerSourceError as exc:
            return _tower_failed(exc, source)
    _report("roll", result.to_json(), result.text, source, args.json)
    return 0


def check_on_tower(ns: argparse.Namespace, system: Any, check: str, params: dict[str, Any]) -> int:
    """``dicetower check SYSTEM CHECK ... --tower ...``."""
    from ...rules.systems import run_check
    from ...rules.systems.format import format_result
    from ..source import TowerSource, TowerSourceError

    _check_no_rng_options(ns)
    throws = ThrowFolder.from_args(ns)
    with opened_tower(ns) as tower:
        source = TowerSource(tower, on_throw=lambda r: throws.save([r]))
        try:
            result = run_check(system, check, source, params)
        except TowerSourceError as exc:
            return _tower_failed(exc, source)
    _report("check", result.to_json(), format_result(result), source, ns.json)
    return 0


# -- the subcommands


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "tower",
        help=COMMANDS["tower"],
        description="Drive the dice tower's solenoid, camera and button.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="tower_command", metavar="ACTION", required=True)

    def action(name: str, help: str, func: Any) -> argparse.ArgumentParser:
        a = _action_parser(sub, name, help)
        add_tower_arguments(a, default="config", throws=name in ("run", "watch"))
        a.set_defaults(func=func)
        return a

    action("shake", "one shake pattern (the config's count, on and off times), through the limits", _shake)
    action("tap", "one short pulse that settles a leaning die", _tap)
    a = action("capture", "shake nothing; take one photo (tray light on) and read it", _capture)
    a.add_argument("--out", metavar="FILE", help="write the photo here (JPEG or PNG by the name)")
    a.add_argument("--no-read", action="store_true", help="only take the photo")
    a = action("calibrate", "lock the camera's settings and photograph the empty tray", _calibrate)
    a.add_argument(
        "--tray", metavar="X,Y,X,Y,...", help="the tray's outline in frame pixels (3 points or more)"
    )
    a.add_argument(
        "--yes",
        action="store_true",
        help="do not wait for Enter (the tray is empty; dice sizes go unchecked)",
    )
    a = action("status", "the tower's state, dice, pins and calibration", _status)
    a.add_argument("--json", action="store_true")
    a = action(
        "run", "wait for the start button; each press rolls the next queued expression or the default", _run
    )
    a.add_argument(
        "queue", nargs="*", metavar="EXPR", help="expressions to roll on the first presses, in order"
    )
    a.add_argument("--presses", type=int, metavar="N", help="stop after N rolls")
    a.add_argument("--autopress", action="store_true", help="mock pins only: press the button by itself")
    a = action("watch", "roll once and show the tower's state on one live terminal line", _watch)
    a.add_argument("expression", nargs="?", help="what to roll (default: the config's [roll] default)")
    a = _action_parser(sub, "config", "validate a config file, or print the config in force")
    a.add_argument(
        "--check",
        nargs="?",
        const="",
        metavar="FILE",
        help="validate FILE (default: --config PATH, else /etc/dicetower/config.toml) and say "
        "everything that is wrong, if anything",
    )
    a.add_argument("--config", metavar="PATH", help="print this file's config (validated)")
    a.set_defaults(func=_config)


def _action_parser(sub: argparse._SubParsersAction, name: str, help: str) -> argparse.ArgumentParser:
    return sub.add_parser(
        name,
        help=help,
        description=help,
        epilog="examples:\n" + ACTION_EXAMPLES[name],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _shake(args: argparse.Namespace) -> int:
    with opened_tower(args, calibrate=False) as tower:
        pulses = tower.shake()
    for p in pulses:
        note = f"  ({p['note']})" if p["note"] else ""
        print(f"pulse {p['given_ms']:g} ms of {p['asked_ms']:g} asked{note}")
    return 0


def _tap(args: argparse.Namespace) -> int:
    with opened_tower(args, calibrate=False) as tower:
        p = tower.tap()
    note = f"  ({p['note']})" if p["note"] else ""
    print(f"tap {p['given_ms']:g} ms of {p['asked_ms']:g} asked{note}")
    return 0


def _capture(args: argparse.Namespace) -> int:
    import cv2

    from ...rules.errors import printable
    from ..records import write_atomic

    with opened_tower(args, calibrate=None if not args.no_read else False) as tower:
        frame = tower.capture()
        out = Path(args.out) if args.out else None
        if out is not None:
            ok, data = cv2.imencode(out.suffix or ".jpg", frame)
            if not ok:
                raise ValueError(f"--out {out}: cannot write images of type {out.suffix!r}; use .jpg or .png")
            write_atomic(out, data.tobytes())
            print(f"photo: {printable(str(out))} ({frame.shape[1]}x{frame.shape[0]})")
        if not args.no_read:
            if tower.calibration is None:
                print("not read: the camera is not calibrated (dicetower tower calibrate)", file=sys.stderr)
                return 0
            print(json.dumps(tower.read(frame).to_json(), indent=2))
    return 0


def _parse_tray(text: str | None) -> list[list[float]] | None:
    if not text:
        return None
    try:
        values = [float(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise ValueError(f"--tray {text!r}: expected numbers X,Y,X,Y,...") from None
    if len(values) < 6 or len(values) % 2:
        raise ValueError("--tray needs 3 points or more, as X,Y pairs")
    return [[values[i], values[i + 1]] for i in range(0, len(values), 2)]


def _calibrate(args: argparse.Namespace) -> int:
    from ...rules.errors import printable

    tray = _parse_tray(args.tray)
    with opened_tower(args, calibrate=False) as tower:
        if not tower.camera.can_show_empty_tray and not args.yes:
            print("Empty the tray, then press Enter (Ctrl-C to stop).", file=sys.stderr)
            sys.stdin.readline()
        save = not tower.camera.can_show_empty_tray
        cal = tower.calibrate(save=save, tray=tray)
        where = (
            f"saved in {printable(str(tower.config.calibration_dir / cal.backend))}"
            if save
            else "kept in memory (simulated camera)"
        )
        print(f"calibrated the {cal.backend} camera at {cal.size[0]}x{cal.size[1]}: {where}")
        for k, v in cal.settings.items():
            print(f"  {k} = {v}")
        from ..die_sizes import report_die_sizes

        report_die_sizes(tower, ask=not args.yes)
    return 0


def _status(args: argparse.Namespace) -> int:
    with opened_tower(args) as tower:
        status = tower.status()
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    taught = status.pop("taught")
    for k, v in status.items():
        print(f"{k:>17}: {v}")
    if taught is None:
        print(f"{'taught':>17}: none (the general reader reads every die)")
        return 0
    drift = taught["drift"]
    print(f"{'taught':>17}: {taught['model']} ({', '.join(taught['dice'])})")
    if taught["general"]:
        print(f"{'general reader':>17}: {', '.join(taught['general'])}")
    if drift["recent"]:
        print(
            f"{'read surely':>17}: {drift['sure']} of the last {drift['recent']} taught dice"
            f" (held back when taught: {_percent(drift['held_back_right_rate'])} read surely)"
        )
    if taught["drifting"]:
        print(f"{'drifting':>17}: {taught['message']}")
    return 0


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.0f} %"


def _roll_expression(tower: Tower, expr: str, throws: ThrowFolder) -> tuple[str, list[ThrowRecord]]:
    from ...rules.notation import Roller
    from ..source import TowerSource

    source = TowerSource(tower)
    throws.next_roll()
    try:
        result = Roller(cache_size=0).roll(expr, source)
    finally:
        throws.save(source.records)
    return result.text, source.records


def _run(args: argparse.Namespace) -> int:
    from collections import deque

    from ...rules.errors import DiceError, printable
    from ..notify import Notifier

    if args.presses is not None and args.presses < 0:
        raise ValueError("--presses must be 0 or more")
    queue = deque(args.queue)
    throws = ThrowFolder.from_args(args)
    with Notifier() as notifier, opened_tower(args) as tower:
        if args.autopress and tower.config.pins.factory != "mock":
            raise ValueError("--autopress works with mock pins only")
        tower.listeners.append(
            lambda state, detail: notifier.status(f"{state.value}: {detail}" if detail else state)
        )
        tower.listeners.append(lambda state, detail: notifier.watchdog())
        interval = notifier.watchdog_interval
        tick = min(interval, 1.0) if interval else 1.0
        notifier.ready()
        waiting = f"waiting for the button (GPIO{tower.config.pins.button})"
        notifier.status(f"idle: {waiting}")
        print(f"tower ready ({tower.camera.name} camera): {waiting}", file=sys.stderr, flush=True)
        rolls = 0
        try:
            while args.presses is None or rolls < args.presses:
                notifier.watchdog()
                if args.autopress:
                    _press(tower)
                if not tower.panel.wait_for_press(tick):
                    continue
                expr = queue.popleft() if queue else tower.config.roll.default
                try:
                    text, records = _roll_expression(tower, expr, throws)
                    print(text, flush=True)
                    print(describe_throws(records), flush=True)
                except DiceError as exc:  # a failed throw: show it, light "attention", keep serving
                    print(f"dicetower: error: {printable(str(exc))}", file=sys.stderr, flush=True)
                rolls += 1
                if args.autopress:
                    tower.panel.button.pin.drive_high()
        finally:
            notifier.stopping()
    return 0


def _press(tower: Tower) -> None:
    pin = tower.panel.button.pin
    pin.drive_high()
    pin.drive_low()  # pull-up button: pressed is low


def _watch(args: argparse.Namespace) -> int:
    from ...rules.errors import DiceError, printable

    interactive = sys.stdout.isatty()
    throws = ThrowFolder.from_args(args)
    with opened_tower(args) as tower:
        start = time.monotonic()

        def show(state: Any, detail: str) -> None:
            line = f"[{time.monotonic() - start:6.2f} s] {state.value:<10} {detail}"
            if interactive:
                sys.stdout.write("\r\x1b[2K" + line[:200])
                sys.stdout.flush()
            else:
                print(line, flush=True)

        tower.listeners.append(show)
        expr = args.expression or tower.config.roll.default
        try:
            text, records = _roll_expression(tower, expr, throws)
        except DiceError as exc:
            if interactive:
                print()
            print(f"dicetower: error: {printable(str(exc))}", file=sys.stderr)
            return 1
    if interactive:
        print()
    print(text)
    print(describe_throws(records))
    return 0


def _config(args: argparse.Namespace) -> int:
    from ...rules.errors import printable
    from ..config import DEFAULT_CONFIG, DEFAULT_PATH, ConfigError, load_config

    if args.check is not None:
        check = Path(args.check or args.config or DEFAULT_PATH)
        if not (args.check or args.config or check.exists()):  # a named file: load_config says what is wrong
            raise ConfigError(f"no config file at {check}: give --check FILE")
        try:
            cfg = load_config(check)
        except ConfigError as exc:  # every problem, each on its own line
            for problem in exc.problems:
                print(f"dicetower: error: {printable(problem)}", file=sys.stderr)
            return 1
        what = f"{cfg.camera.backend} camera, {cfg.pins.factory} pins, dice: {cfg.dice.describe()}"
        if cfg.reader.taught:
            what += f", taught: {cfg.reader.taught}"
        print(f"{printable(str(check))}: ok ({what})")
        return 0
    path = args.config or (DEFAULT_PATH if DEFAULT_PATH.is_file() else None)
    cfg = load_config(path) if path else DEFAULT_CONFIG
    print(f"# {cfg.source}")
    print(_to_toml(cfg))
    return 0


def _to_toml(cfg: Config) -> str:
    from dataclasses import fields

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if v is None:
            return "false"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, tuple | list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return f"{v:g}" if isinstance(v, float) else str(v)

    out = []
    for name in ("pins", "shaker", "camera", "sim", "cycle", "roll", "calibration", "reader"):
        section = getattr(cfg, name)
        out.append(f"[{name}]")
        out += [f"{f.name} = {value(getattr(section, f.name))}" for f in fields(section)]
        out.append("")
    out.append("[dice]")
    out += [f"{role} = {value(spec)}" for role, spec in cfg.dice.to_table().items()]
    return "\n".join(out)
