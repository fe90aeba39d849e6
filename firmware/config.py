"""The tower's configuration: one TOML file, validated into frozen objects before anything moves.

Why validate everything up front: a typo in a pin number or a limit must stop the tower
before the solenoid is driven, with a message that names the key and what it may be.
Unknown sections and keys are errors too (a misspelt ``max_on_ms`` silently ignored would
leave the default limit in force while the owner believes another), and so is what use needs
beyond single values: a value that passes alone but fails when the tower uses it (a duty budget
that cannot hold one pulse, a ``[roll] default`` the rules cannot parse) would fail only after
the solenoid had moved. Every problem is collected, so ``tower config --check`` lists them all;
the checks of single values are :mod:`~dicetower.firmware.config_values`, the tray's dice
:mod:`~dicetower.firmware.dice_set`.

The file is optional: :data:`DEFAULT_CONFIG` is the built-in tower that needs no file and
no hardware (gpiozero's mock pins, the simulated camera, a tray of four white d6 and one
red d6 that is the wild die). A real tower reads :data:`DEFAULT_PATH` or ``--config PATH``.

Example (every key, with its default; see ``docs/tower.md``)::

    [pins]
    factory = "mock"        # mock | default (gpiozero chooses: lgpio on a Pi 5) | lgpio | rpigpio | pigpio
    solenoid = 17
    button = 27
    led_idle = 22
    led_rolling = 23
    led_attention = 24
    tray_light = 25         # false: no tray light

    [shaker]
    max_on_ms = 150         # longest single pulse
    min_off_ms = 40         # shortest rest between pulses
    duty_window_ms = 10000  # the sliding window the duty limit is measured over
    max_duty = 0.25         # most of that window the solenoid may be on
    shake_count = 6
    shake_on_ms = 80
    shake_off_ms = 120
    tap_on_ms = 25

    [camera]
    backend = "sim"         # sim | replay | opencv | picamera2
    device = "0"            # opencv: a device index or path
    replay = ""             # replay: a folder with manifest.jsonl
    width = 640
    height = 480
    tray_colour = ""        # "": colours as seen; "neutral" or "#RRGGBB": white-balance to the tray

    [sim]
    seed = -1               # -1: a fresh seed each start
    fault_rate = 0.0        # chance per throw of one fault from `faults`
    faults = []             # cocked, touching, blurred, frozen, black, disconnect, leaves_tray, jam
    realtime = false        # true: shakes and frames take real time

    [dice]
    plain = "4 white d6"
    wild = "red d6"

    [cycle]
    still_frames = 3
    settle_timeout_s = 4.0
    max_taps = 2
    max_reshakes = 2
    camera_retries = 4
    camera_retry_wait_s = 0.5

    [roll]
    default = "4d6kh3"      # what the start button rolls
    max_throws = 20         # the most throws a served roll's initial dice may take (and its follow-ups)
    unreadable = "rethrow"  # rethrow | ask: put a die the tower cannot read to the /table page
    ask_timeout_s = 60      # then, with no answer (or no table page open), it is thrown again
    correct_window_s = 300  # the table may correct the last roll this long (until the next roll)

    [reader]
    taught = ""             # a taught model's folder (dicetower teach fit), relative to this file

    [calibration]
    dir = "/var/lib/dicetower"

    [mqtt]                  # publish rolls to a broker, take requests from it (docs/towers.md)
    url = ""                # "": off; mqtt://host[:port] or mqtts://host[:port] (TLS)
    tower = ""              # "": the host's name
    prefix = "dicetower"
    username = ""
    password_file = ""
    ca_file = ""
    photos = "url"          # url | inline | none
    photo_url = ""          # this tower's address as viewers reach it: http://tower.local:8080
    inline_max_bytes = 65536
    keepalive_s = 30

    [server]                # dicetower serve (docs/server.md)
    allowed_hosts = []      # names a request may give in Host besides localhost and this machine's
    cors_origins = []       # browser origins answered with CORS headers (a Foundry world: docs/foundry.md)
"""

from __future__ import annotations

import errno
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..vision.files import read_bounded
from .clock import RealClock
from .config_values import (
    FAULTS,
    GPIO,
    PIN_FACTORIES,
    boolean,
    camera_backend,
    device,
    faults,
    int_in,
    num_in,
    one_of,
    optional_gpio,
    text,
    tray_bgr,
    tray_colour,
)
from .dice_set import DiceSet, TrayDie, default_dice
from .errors import ConfigError
from .mqtt.settings import MqttConfig
from .pattern import MAX_PATTERN_PULSES, ShakePattern, milliseconds
from .roll_default import roll_problem
from .shaker import MIN_PULSE_S
from .taught_config import taught_dice
from .web.cors import check_cors_origins
from .web.host_names import check_allowed_hosts

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_PATH",
    "FAULTS",
    "MAX_FILE_BYTES",
    "MIN_MAX_ON_MS",
    "PIN_FACTORIES",
    "CalibrationConfig",
    "CameraConfig",
    "Config",
    "ConfigError",
    "CycleConfig",
    "DiceSet",
    "PinsConfig",
    "ReaderConfig",
    "RollConfig",
    "ServingConfig",
    "ShakerConfig",
    "SimConfig",
    "TrayDie",
    "load_config",
    "missing_folders",
    "parse_config",
    "tray_bgr",
]

#: Where a real tower keeps its configuration.
DEFAULT_PATH = Path("/etc/dicetower/config.toml")
#: A config file larger than this is refused before parsing (only a regular file is read at all).
MAX_FILE_BYTES = 64 * 1024
#: The least ``[shaker] max_on_ms``: on the real clock a pulse ends the clock's margin inside
#: max_on, and a pulse under the shortest one is refused, so a smaller max_on gives no pulse at all.
MIN_MAX_ON_MS = milliseconds(RealClock.margin_s + MIN_PULSE_S)


def _opt(check: Callable[[Any], Any]) -> dict[str, Any]:
    """Field metadata: the check that validates (and converts) a value read from the file."""
    return {"check": check}


# -- sections


@dataclass(frozen=True)
class PinsConfig:
    """BCM GPIO numbers of everything wired to the Pi, and the gpiozero pin factory to drive them."""

    factory: str = field(default="mock", metadata=_opt(one_of(PIN_FACTORIES)))
    solenoid: int = field(default=17, metadata=_opt(GPIO))
    button: int = field(default=27, metadata=_opt(GPIO))
    led_idle: int = field(default=22, metadata=_opt(GPIO))
    led_rolling: int = field(default=23, metadata=_opt(GPIO))
    led_attention: int = field(default=24, metadata=_opt(GPIO))
    tray_light: int | None = field(default=25, metadata=_opt(optional_gpio))

    def problems(self) -> list[str]:
        """Every pin used twice, each named by its key."""
        out, used = [], {}
        for f in fields(self):
            pin = getattr(self, f.name)
            if f.name == "factory" or pin is None:
                continue
            if pin in used:
                out.append(
                    f"{f.name} = {pin}: {f.name} and {used[pin]} are both GPIO{pin}; each needs its own pin"
                )
            else:
                used[pin] = f.name
        return out


#: The shaker's own defaults (:mod:`dicetower.firmware.pattern`), which ``[shaker]`` gives in milliseconds.
_SHAKE = ShakePattern()


@dataclass(frozen=True)
class ShakerConfig:
    """The solenoid's hard limits and the shake and tap patterns, in milliseconds; the defaults are
    :class:`~dicetower.firmware.pattern.ShakePattern`'s, which :meth:`ShakePattern.from_config`
    builds from this section."""

    max_on_ms: float = field(default=milliseconds(_SHAKE.limits.max_on_s), metadata=_opt(num_in(1, 1000)))
    min_off_ms: float = field(default=milliseconds(_SHAKE.limits.min_off_s), metadata=_opt(num_in(1, 10_000)))
    duty_window_ms: float = field(
        default=milliseconds(_SHAKE.limits.window_s), metadata=_opt(num_in(100, 600_000))
    )
    max_duty: float = field(default=_SHAKE.limits.max_duty, metadata=_opt(num_in(0.01, 0.5)))
    shake_count: int = field(default=_SHAKE.shake_count, metadata=_opt(int_in(1, MAX_PATTERN_PULSES)))
    shake_on_ms: float = field(default=milliseconds(_SHAKE.shake_on_s), metadata=_opt(num_in(1, 1000)))
    shake_off_ms: float = field(default=milliseconds(_SHAKE.shake_off_s), metadata=_opt(num_in(0, 10_000)))
    tap_on_ms: float = field(default=milliseconds(_SHAKE.tap_on_s), metadata=_opt(num_in(1, 1000)))

    def problems(self) -> list[str]:
        """What the shaker would refuse or cut every time: a max_on it cannot give on the real clock,
        or that the duty budget cannot hold; pulses over max_on; a shake the budget cannot hold."""
        out = []
        budget = self.max_duty * self.duty_window_ms
        in_budget = f"the duty budget (max_duty x duty_window_ms = {budget:g} ms)"
        if self.max_on_ms < MIN_MAX_ON_MS:
            out.append(
                f"max_on_ms = {self.max_on_ms:g}: at least {MIN_MAX_ON_MS:g} (the real clock ends a pulse"
                f" {milliseconds(RealClock.margin_s):g} ms inside it, and refuses one under"
                f" {milliseconds(MIN_PULSE_S):g} ms)"
            )
        if self.max_on_ms > budget:
            out.append(f"max_on_ms = {self.max_on_ms:g}: one pulse of it does not fit in {in_budget}")
        for name in ("shake_on_ms", "tap_on_ms"):
            if getattr(self, name) > self.max_on_ms:
                out.append(f"{name} = {getattr(self, name):g} is over max_on_ms = {self.max_on_ms:g}")
        shake = self.shake_count * min(self.shake_on_ms, self.max_on_ms)
        if shake > budget:
            out.append(
                f"shake_count = {self.shake_count}: a shake of {self.shake_count} x {self.shake_on_ms:g} ms"
                f" does not fit in {in_budget}; every shake would be cut short"
            )
        return out


@dataclass(frozen=True)
class CameraConfig:
    backend: str = field(default="sim", metadata=_opt(camera_backend))
    device: str = field(default="0", metadata=_opt(device))
    replay: str = field(default="", metadata=_opt(text()))
    width: int = field(default=640, metadata=_opt(int_in(64, 4608)))
    height: int = field(default=480, metadata=_opt(int_in(64, 3456)))
    #: the tray's colour under neutral light, to white-balance die colours against the empty-tray
    #: reference (a warm lamp turns a white die cream and a red one orange): "" leaves them as seen
    tray_colour: str = field(default="", metadata=_opt(tray_colour))

    def problems(self) -> list[str]:
        if self.backend == "replay" and not self.replay:
            return ["replay = '': backend = replay needs replay = FOLDER (a folder with manifest.jsonl)"]
        return []


@dataclass(frozen=True)
class SimConfig:
    seed: int = field(default=-1, metadata=_opt(int_in(-1, 2**63 - 1)))
    fault_rate: float = field(default=0.0, metadata=_opt(num_in(0, 1)))
    faults: tuple[str, ...] = field(default=(), metadata=_opt(faults))
    realtime: bool = field(default=False, metadata=_opt(boolean))


@dataclass(frozen=True)
class CycleConfig:
    """Bounds of the roll cycle: every loop that waits or retries stops at one of these."""

    still_frames: int = field(default=3, metadata=_opt(int_in(1, 30)))
    settle_timeout_s: float = field(default=4.0, metadata=_opt(num_in(0.1, 60)))
    max_taps: int = field(default=2, metadata=_opt(int_in(0, 5)))
    max_reshakes: int = field(default=2, metadata=_opt(int_in(0, 5)))
    camera_retries: int = field(default=4, metadata=_opt(int_in(0, 20)))
    camera_retry_wait_s: float = field(default=0.5, metadata=_opt(num_in(0, 10)))


@dataclass(frozen=True)
class RollConfig:
    """``max_throws`` bounds what one request to ``dicetower serve`` costs the tower (docs/limits.md):
    its initial dice in at most that many throws (refused before the first throw if more), and
    its follow-ups (explosions, rerolls) in at most that many more."""

    default: str = field(default="4d6kh3", metadata=_opt(text(200)))
    max_throws: int = field(default=20, metadata=_opt(int_in(1, 200)))
    #: a die the reader cannot read: thrown again (``rethrow``), or put to the table's page (``ask``)
    unreadable: str = field(default="rethrow", metadata=_opt(one_of(("rethrow", "ask"))))
    #: seconds the table has to answer before the die is thrown again
    ask_timeout_s: float = field(default=60.0, metadata=_opt(num_in(1, 600)))
    #: seconds after a roll finishes in which the table may correct it (until the next roll, at most)
    correct_window_s: float = field(default=300.0, metadata=_opt(num_in(1, 86_400)))


@dataclass(frozen=True)
class CalibrationConfig:
    dir: str = field(default="/var/lib/dicetower", metadata=_opt(text()))


@dataclass(frozen=True)
class ReaderConfig:
    """``taught``: a taught model's folder (docs/teach.md), whose dice it reads; the rest the general
    reader reads. Held as :func:`parse_config` resolved it: relative to the config file's folder."""

    taught: str = field(default="", metadata=_opt(text()))


@dataclass(frozen=True)
class ServingConfig:
    """``[server]``: ``allowed_hosts`` are the names ``dicetower serve`` answers to besides loopback and
    the machine's own names and addresses (``server/host_names.py``): a page on any other name is refused."""

    allowed_hosts: tuple[str, ...] = field(default=(), metadata=_opt(check_allowed_hosts))
    #: browser origins ``dicetower serve`` answers with CORS headers (``web/cors.py``); none: CORS off
    cors_origins: tuple[str, ...] = field(default=(), metadata=_opt(check_cors_origins))


@dataclass(frozen=True)
class Config:
    """A validated tower configuration; build with :func:`load_config` or :func:`parse_config`."""

    pins: PinsConfig = field(default_factory=PinsConfig)
    shaker: ShakerConfig = field(default_factory=ShakerConfig)
    camera: CameraConfig = field(default_factory=CameraConfig)
    sim: SimConfig = field(default_factory=SimConfig)
    dice: DiceSet = field(default_factory=default_dice)
    cycle: CycleConfig = field(default_factory=CycleConfig)
    roll: RollConfig = field(default_factory=RollConfig)
    calibration: CalibrationConfig = field(default_factory=CalibrationConfig)
    reader: ReaderConfig = field(default_factory=ReaderConfig)
    mqtt: MqttConfig = field(default_factory=MqttConfig)  #: docs/towers.md
    server: ServingConfig = field(default_factory=ServingConfig)
    source: str = "built-in default"  #: where it was read from, for messages

    @property
    def calibration_dir(self) -> Path:
        return Path(self.calibration.dir)

    def with_changes(self, **sections: Any) -> Config:
        """A copy with whole sections replaced (tests and the CLI's ``--replay``)."""
        return replace(self, **sections)


_SECTIONS: dict[str, type] = {
    "pins": PinsConfig,
    "shaker": ShakerConfig,
    "camera": CameraConfig,
    "sim": SimConfig,
    "cycle": CycleConfig,
    "roll": RollConfig,
    "calibration": CalibrationConfig,
    "reader": ReaderConfig,
    "mqtt": MqttConfig,
    "server": ServingConfig,
}


def _section(name: str, cls: type, table: Any, where: str) -> tuple[Any, list[str]]:
    """The section built from ``table``, or None and every problem in it (each naming its key)."""
    if not isinstance(table, dict):
        return None, [f"{where}: [{name}] must be a table"]
    known = {f.name: f for f in fields(cls)}
    values: dict[str, Any] = {}
    problems = []
    for key, raw in table.items():
        f = known.get(key)
        if f is None:
            problems.append(f"{where}: [{name}] {key}: unknown key; allowed: {', '.join(known)}")
            continue
        try:
            values[key] = f.metadata["check"](raw)
        except ValueError as exc:
            problems.append(f"{where}: [{name}] {key} = {raw!r}: must be {exc}")
    if problems:  # keys that relate to each other are compared only once each is right
        return None, problems
    obj = cls(**values)
    problems = [f"{where}: [{name}] {p}" for p in getattr(obj, "problems", list)()]
    return (None, problems) if problems else (obj, [])


def parse_config(
    data: Mapping[str, Any],
    where: str = "config",
    *,
    base: Path | None = None,
    taught: str | Path | None = None,
) -> Config:
    """Validate a parsed TOML document into a :class:`Config`.

    Every key is checked, and what use needs beyond single values: pins used once, a shaker
    whose duty budget holds a pulse of ``max_on_ms`` and the shake, ``[roll] default`` parsed by
    the rules and rollable on the tray. The :class:`ConfigError` raised names the first problem
    and carries every one in ``problems``. ``[reader] taught`` is resolved against ``base`` (the
    config file's folder); ``taught`` (the CLI's ``--taught``) replaces it, as given.
    """
    allowed = [*_SECTIONS, "dice"]
    kwargs: dict[str, Any] = {}
    problems: list[str] = []
    for name, table in data.items():
        if name == "dice":
            if not isinstance(table, dict):
                problems.append(f"{where}: [dice] must be a table")
        elif name in _SECTIONS:
            section, found_problems = _section(name, _SECTIONS[name], table, where)
            problems += found_problems
            if section is not None:
                kwargs[name] = section
        else:
            problems.append(f"{where}: [{name}]: unknown section; allowed: {', '.join(allowed)}")
    found = None
    try:
        if taught is not None:
            kwargs["reader"] = ReaderConfig(str(taught))
            found = taught_dice(str(taught), f"--taught {taught}")
        elif "reader" in kwargs and kwargs["reader"].taught:
            raw = kwargs["reader"].taught
            kwargs["reader"] = ReaderConfig(str(base / raw if base is not None else Path(raw)))
            found = taught_dice(kwargs["reader"].taught, f"{where}: [reader] taught = {raw!r}")
    except ConfigError as exc:
        problems.append(str(exc))
    dice_ok = True
    if isinstance(data.get("dice"), dict):
        try:
            kwargs["dice"] = DiceSet.parse(data["dice"], found)
        except ConfigError as exc:
            problems += [f"{where}: {p}" for p in exc.problems]
            dice_ok = False
    if dice_ok and "roll" in kwargs and "default" in data["roll"]:  # the button's roll, as the file set it
        default = kwargs["roll"].default
        why = roll_problem(default, kwargs.get("dice", default_dice()).dice)
        if why is not None:
            problems.append(f"{where}: [roll] default = {default!r}: {why}")
    if problems:
        raise ConfigError(problems[0], problems)
    return Config(**kwargs, source=where)


def load_config(path: str | Path | None = None, *, taught: str | Path | None = None) -> Config:
    """Read and validate ``path``; ``None`` gives the built-in :data:`DEFAULT_CONFIG` (no file read).

    ``taught`` names a taught model to read with instead of the file's ``[reader] taught``.
    """
    if path is None:
        return DEFAULT_CONFIG if taught is None else parse_config({}, DEFAULT_CONFIG.source, taught=taught)
    path = Path(path)
    try:
        # a UTF-8 byte order mark (as some Windows editors save) is read past, not taken as TOML
        text = read_bounded(path, MAX_FILE_BYTES).decode("utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise ConfigError(
                f"{path}: {exc.strerror}; a config file is at most {MAX_FILE_BYTES} bytes"
            ) from None
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return parse_config(data, str(path), base=path.parent, taught=taught)


def missing_folders(cfg: Config) -> list[str]:
    """What a config names that is not there: the replay camera's folder (``tower config --check``).

    Loading a config for use leaves this to the camera, which says so when the tower opens (a
    ``--replay`` folder may take the file's place); the check reports it with the other problems.
    """
    if cfg.camera.backend != "replay" or not cfg.camera.replay:
        return []
    folder = Path(cfg.camera.replay)
    if not folder.is_dir():
        return [f"{cfg.source}: [camera] replay = {cfg.camera.replay!r}: no such folder"]
    if not (folder / "manifest.jsonl").is_file():
        return [f"{cfg.source}: [camera] replay = {cfg.camera.replay!r}: no manifest.jsonl in it"]
    return []


def _defaults_are_valid() -> Config:
    """The built-in config, checked by the same rules as a file (a bad default fails at import)."""
    cfg = Config()
    for name, cls in _SECTIONS.items():
        section = getattr(cfg, name)
        for f in fields(cls):
            if f.default is not MISSING and f.default is not None:
                f.metadata["check"](list(f.default) if isinstance(f.default, tuple) else f.default)
        problems = getattr(section, "problems", list)()
        if problems:
            raise ConfigError(f"built-in [{name}]: {problems[0]}", problems)
    return cfg


#: The built-in tower: mock pins, the simulated camera, 4 white d6 and 1 red wild d6.
DEFAULT_CONFIG: Config = _defaults_are_valid()
