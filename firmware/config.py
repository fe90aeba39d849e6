"""The tower's configuration: one TOML file, validated into frozen objects before anything moves.

Why validate everything up front: a typo in a pin number or a limit must stop the tower
before the solenoid is driven, with a message that names the key and what it may be.
Unknown sections and keys are errors too (a misspelt ``max_on_ms`` silently ignored would
leave the default limit in force while the owner believes another).

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

    [reader]
    taught = ""             # a taught model's folder (dicetower teach fit), relative to this file

    [calibration]
    dir = "/var/lib/dicetower"
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .cameras import BACKENDS
from .errors import ConfigError
from .pattern import MAX_PATTERN_PULSES, ShakePattern, milliseconds
from .taught_config import check_taught_kind, taught_dice

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_PATH",
    "FAULTS",
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
    "ShakerConfig",
    "SimConfig",
    "TrayDie",
    "load_config",
    "parse_config",
    "tray_bgr",
]

#: Where a real tower keeps its configuration.
DEFAULT_PATH = Path("/etc/dicetower/config.toml")
#: ``[pins] factory`` values: gpiozero pin factories by their names.
PIN_FACTORIES = ("mock", "default", "lgpio", "rpigpio", "pigpio", "native")
#: Faults the simulated camera can inject (``[sim] faults``).
FAULTS = ("cocked", "touching", "blurred", "frozen", "black", "disconnect", "leaves_tray", "jam")
#: Roles a die in the tray can have (the rules' :class:`~dicetower.rules.source.Role` values).
ROLES = ("plain", "wild", "tens", "units")
#: A config file larger than this is refused before parsing.
MAX_FILE_BYTES = 64 * 1024
#: Most dice a tray may be loaded with (bounds every per-die loop of a throw).
MAX_TRAY_DICE = 40


# -- value checks: each returns the value to store or raises ValueError with what is allowed


def _int_in(lo: int, hi: int) -> Callable[[Any], int]:
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ValueError(f"a whole number {lo}..{hi}")
        return v

    return check


def _num_in(lo: float, hi: float) -> Callable[[Any], float]:
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or not lo <= v <= hi:
            raise ValueError(f"a number {lo:g}..{hi:g}")
        return float(v)

    return check


def _one_of(choices: tuple[str, ...]) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if v not in choices:
            raise ValueError(f"one of {', '.join(choices)}")
        return v

    return check


def _text(max_len: int = 4096) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or len(v) > max_len:
            raise ValueError(f"a string of at most {max_len} characters")
        return v

    return check


def _camera_backend(v: Any) -> str:
    """A name in the camera backends' own registry, :data:`dicetower.firmware.cameras.BACKENDS`.

    Read when the value is checked, so a backend registered there is known here with no second
    list to keep in step; only the names are read, so no backend (picamera2, OpenCV) is imported.
    """
    if not isinstance(v, str) or v not in BACKENDS:
        raise ValueError(f"one of {', '.join(BACKENDS)}")
    return v


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("true or false")
    return v


#: BCM GPIO numbers on the 40-pin header (0 and 1 are the HAT EEPROM's I2C).
_GPIO = _int_in(2, 27)


def _optional_gpio(v: Any) -> int | None:
    if v is False:
        return None
    try:
        return _GPIO(v)
    except ValueError:
        raise ValueError("a BCM GPIO number 2..27, or false for none") from None


def _faults(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x in FAULTS for x in v):
        raise ValueError(f"a list drawn from {', '.join(FAULTS)}")
    return tuple(dict.fromkeys(v))


def _device(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 63:
        return str(v)
    if isinstance(v, str) and 0 < len(v) <= 4096:
        return v
    raise ValueError("a device index 0..63 or a device path such as /dev/video0")


def _tray_colour(v: Any) -> str:
    """``""`` (no white balance), ``"neutral"`` (a grey, black or white tray) or ``"#RRGGBB"``."""
    if v in ("", "neutral"):
        return v
    if isinstance(v, str) and len(v) == 7 and v[0] == "#":
        try:
            int(v[1:], 16)
        except ValueError:
            pass
        else:
            return v.lower()
    raise ValueError('"" (colours as seen), "neutral" (a grey, black or white tray) or "#RRGGBB"')


def tray_bgr(value: str) -> tuple[int, int, int] | None:
    """A ``#RRGGBB`` tray colour as BGR; ``None`` for ``"neutral"`` (:func:`_tray_colour`'s values)."""
    if not value.startswith("#"):
        return None
    r, g, b = (int(value[i : i + 2], 16) for i in (1, 3, 5))
    return b, g, r


def _opt(check: Callable[[Any], Any]) -> dict[str, Any]:
    """Field metadata: the check that validates (and converts) a value read from the file."""
    return {"check": check}


# -- sections


@dataclass(frozen=True)
class PinsConfig:
    """BCM GPIO numbers of everything wired to the Pi, and the gpiozero pin factory to drive them."""

    factory: str = field(default="mock", metadata=_opt(_one_of(PIN_FACTORIES)))
    solenoid: int = field(default=17, metadata=_opt(_GPIO))
    button: int = field(default=27, metadata=_opt(_GPIO))
    led_idle: int = field(default=22, metadata=_opt(_GPIO))
    led_rolling: int = field(default=23, metadata=_opt(_GPIO))
    led_attention: int = field(default=24, metadata=_opt(_GPIO))
    tray_light: int | None = field(default=25, metadata=_opt(_optional_gpio))

    def check(self) -> None:
        used: dict[int, str] = {}
        for f in fields(self):
            pin = getattr(self, f.name)
            if f.name == "factory" or pin is None:
                continue
            if pin in used:
                raise ValueError(f"{f.name} and {used[pin]} are both GPIO{pin}; each needs its own pin")
            used[pin] = f.name


#: The shaker's own defaults (:mod:`dicetower.firmware.pattern`), which ``[shaker]`` gives in milliseconds.
_SHAKE = ShakePattern()


@dataclass(frozen=True)
class ShakerConfig:
    """The solenoid's hard limits and the shake and tap patterns, in milliseconds; the defaults are
    :class:`~dicetower.firmware.pattern.ShakePattern`'s, which :meth:`ShakePattern.from_config`
    builds from this section."""

    max_on_ms: float = field(default=milliseconds(_SHAKE.limits.max_on_s), metadata=_opt(_num_in(1, 1000)))
    min_off_ms: float = field(
        default=milliseconds(_SHAKE.limits.min_off_s), metadata=_opt(_num_in(1, 10_000))
    )
    duty_window_ms: float = field(
        default=milliseconds(_SHAKE.limits.window_s), metadata=_opt(_num_in(100, 600_000))
    )
    max_duty: float = field(default=_SHAKE.limits.max_duty, metadata=_opt(_num_in(0.01, 0.5)))
    shake_count: int = field(default=_SHAKE.shake_count, metadata=_opt(_int_in(1, MAX_PATTERN_PULSES)))
    shake_on_ms: float = field(default=milliseconds(_SHAKE.shake_on_s), metadata=_opt(_num_in(1, 1000)))
    shake_off_ms: float = field(default=milliseconds(_SHAKE.shake_off_s), metadata=_opt(_num_in(0, 10_000)))
    tap_on_ms: float = field(default=milliseconds(_SHAKE.tap_on_s), metadata=_opt(_num_in(1, 1000)))

    def check(self) -> None:
        for name in ("shake_on_ms", "tap_on_ms"):
            if getattr(self, name) > self.max_on_ms:
                raise ValueError(f"{name} = {getattr(self, name):g} is over max_on_ms = {self.max_on_ms:g}")


@dataclass(frozen=True)
class CameraConfig:
    backend: str = field(default="sim", metadata=_opt(_camera_backend))
    device: str = field(default="0", metadata=_opt(_device))
    replay: str = field(default="", metadata=_opt(_text()))
    width: int = field(default=640, metadata=_opt(_int_in(64, 4608)))
    height: int = field(default=480, metadata=_opt(_int_in(64, 3456)))
    #: the tray's colour under neutral light, to white-balance die colours against the empty-tray
    #: reference (a warm lamp turns a white die cream and a red one orange): "" leaves them as seen
    tray_colour: str = field(default="", metadata=_opt(_tray_colour))

    def check(self) -> None:
        if self.backend == "replay" and not self.replay:
            raise ValueError("backend = replay needs replay = FOLDER (a folder with manifest.jsonl)")


@dataclass(frozen=True)
class SimConfig:
    seed: int = field(default=-1, metadata=_opt(_int_in(-1, 2**63 - 1)))
    fault_rate: float = field(default=0.0, metadata=_opt(_num_in(0, 1)))
    faults: tuple[str, ...] = field(default=(), metadata=_opt(_faults))
    realtime: bool = field(default=False, metadata=_opt(_bool))


@dataclass(frozen=True)
class CycleConfig:
    """Bounds of the roll cycle: every loop that waits or retries stops at one of these."""

    still_frames: int = field(default=3, metadata=_opt(_int_in(1, 30)))
    settle_timeout_s: float = field(default=4.0, metadata=_opt(_num_in(0.1, 60)))
    max_taps: int = field(default=2, metadata=_opt(_int_in(0, 5)))
    max_reshakes: int = field(default=2, metadata=_opt(_int_in(0, 5)))
    camera_retries: int = field(default=4, metadata=_opt(_int_in(0, 20)))
    camera_retry_wait_s: float = field(default=0.5, metadata=_opt(_num_in(0, 10)))


@dataclass(frozen=True)
class RollConfig:
    """``max_throws`` bounds what one request to ``dicetower serve`` costs the tower (docs/limits.md):
    its initial dice in at most that many throws (refused before the first throw if more), and
    its follow-ups (explosions, rerolls) in at most that many more."""

    default: str = field(default="4d6kh3", metadata=_opt(_text(200)))
    max_throws: int = field(default=20, metadata=_opt(_int_in(1, 200)))


@dataclass(frozen=True)
class CalibrationConfig:
    dir: str = field(default="/var/lib/dicetower", metadata=_opt(_text()))


@dataclass(frozen=True)
class ReaderConfig:
    """``taught``: a taught model's folder (docs/teach.md), whose dice it reads; the rest the general
    reader reads. Held as :func:`parse_config` resolved it: relative to the config file's folder."""

    taught: str = field(default="", metadata=_opt(_text()))


@dataclass(frozen=True)
class TrayDie:
    """One die loaded in the tray: its kind (``d6``, ``d10t`` ...), body colour and role."""

    kind: str
    colour: str
    role: str = "plain"

    def __str__(self) -> str:
        return f"{self.colour} {self.kind}" + ("" if self.role == "plain" else f" ({self.role})")


_DIE_SPEC = re.compile(r"\s*(?:(\d+)\s*(?:x\s*)?)?([a-z]+)\s+(d\d+t?)\s*")


@dataclass(frozen=True)
class DiceSet:
    """The dice in the tray, keyed by role in the file: ``plain = "4 white d6"``, ``wild = "red d6"``.

    A role other than plain (wild, tens, units) names one die, told apart from the rest by
    its colour, so its colour must differ from every other die of its kind.
    """

    dice: tuple[TrayDie, ...]

    @classmethod
    def parse(cls, table: Mapping[str, Any], taught: Collection[tuple[str, str]] | None = None) -> DiceSet:
        """``taught``: the (kind, colour) pairs a taught model reads (colour "" for any colour), which
        lets the tray hold a kind only a taught reader reads (d8, d12) in those colours."""
        from ..vision.colour_names import COLOUR_NAMES
        from ..vision.kinds import NEVER_READ, readable_labels, taught_only_labels

        # the kinds the reader reads (a numeral d6 is a d6): a die it cannot read would fail every
        # throw as unreadable, so it is refused here, where the cause is plain
        readable = readable_labels()

        dice: list[TrayDie] = []
        for role, value in table.items():
            if role not in ROLES:
                raise ConfigError(f"[dice] {role}: unknown role; allowed: {', '.join(ROLES)}")
            specs = value if isinstance(value, list) else [value]
            for spec in specs:
                m = _DIE_SPEC.fullmatch(spec) if isinstance(spec, str) else None
                if m is None:
                    raise ConfigError(
                        f"[dice] {role} = {spec!r}: expected '[COUNT] COLOUR KIND', e.g. '4 white d6'"
                    )
                count = int(m.group(1) or 1)
                colour, kind = m.group(2), m.group(3)
                if colour not in COLOUR_NAMES:
                    raise ConfigError(
                        f"[dice] {role} = {spec!r}: colour {colour!r}; allowed: {', '.join(COLOUR_NAMES)}"
                    )
                where = f"[dice] {role} = {spec!r}: kind {kind!r}"
                if kind in NEVER_READ:
                    raise ConfigError(f"{where}: {NEVER_READ[kind]}; the tower cannot read it, taught or not")
                if kind in taught_only_labels():
                    check_taught_kind(where, kind, colour, taught)
                elif kind not in readable:
                    raise ConfigError(
                        f"{where}; the tower reads {', '.join(readable)}, "
                        f"and {', '.join(taught_only_labels())} once taught"
                    )
                if role != "plain" and count != 1:
                    raise ConfigError(f"[dice] {role} = {spec!r}: a {role} die is one die")
                if not 1 <= count <= MAX_TRAY_DICE:
                    raise ConfigError(f"[dice] {role} = {spec!r}: count must be 1..{MAX_TRAY_DICE}")
                dice.extend(TrayDie(kind, colour, role) for _ in range(count))
        if not dice:
            raise ConfigError("[dice]: the tray needs at least one die, e.g. plain = '5 white d6'")
        if len(dice) > MAX_TRAY_DICE:
            raise ConfigError(f"[dice]: {len(dice)} dice; a tray holds at most {MAX_TRAY_DICE}")
        for d in dice:
            if d.role == "plain":
                continue
            if sum(x.role == d.role for x in dice) > 1:
                raise ConfigError(f"[dice] {d.role}: given twice; one die has that role")
            clash = [x for x in dice if x is not d and x.kind == d.kind and x.colour == d.colour]
            if clash:
                raise ConfigError(
                    f"[dice] {d.role} = '{d.colour} {d.kind}': another {d.colour} {d.kind} is in the tray; "
                    "the tower tells a role die apart by colour, so give it a colour of its own"
                )
        return cls(tuple(dice))

    def kinds(self) -> dict[str, int]:
        """How many dice of each kind are loaded."""
        out: dict[str, int] = {}
        for d in self.dice:
            out[d.kind] = out.get(d.kind, 0) + 1
        return out

    def role_die(self, role: str) -> TrayDie | None:
        return next((d for d in self.dice if d.role == role), None)

    def describe(self) -> str:
        """``4 white d6, 1 red d6 (wild)``."""
        counts: dict[TrayDie, int] = {}
        for d in self.dice:
            counts[d] = counts.get(d, 0) + 1
        return ", ".join(f"{n} {d}" for d, n in counts.items())

    def to_table(self) -> dict[str, Any]:
        """The ``[dice]`` table that parses back to this set (``plain = "4 white d6"``)."""
        table: dict[str, dict[str, int]] = {}
        for d in self.dice:
            counts = table.setdefault(d.role, {})
            counts[f"{d.colour} {d.kind}"] = counts.get(f"{d.colour} {d.kind}", 0) + 1
        out: dict[str, Any] = {}
        for role, counts in table.items():
            specs = [spec if n == 1 else f"{n} {spec}" for spec, n in counts.items()]
            out[role] = specs if len(specs) > 1 else specs[0]
        return out


def _default_dice() -> DiceSet:
    return DiceSet((*(TrayDie("d6", "white") for _ in range(4)), TrayDie("d6", "red", "wild")))


@dataclass(frozen=True)
class Config:
    """A validated tower configuration; build with :func:`load_config` or :func:`parse_config`."""

    pins: PinsConfig = field(default_factory=PinsConfig)
    shaker: ShakerConfig = field(default_factory=ShakerConfig)
    camera: CameraConfig = field(default_factory=CameraConfig)
    sim: SimConfig = field(default_factory=SimConfig)
    dice: DiceSet = field(default_factory=_default_dice)
    cycle: CycleConfig = field(default_factory=CycleConfig)
    roll: RollConfig = field(default_factory=RollConfig)
    calibration: CalibrationConfig = field(default_factory=CalibrationConfig)
    reader: ReaderConfig = field(default_factory=ReaderConfig)
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
}


def _section(name: str, cls: type, table: Any, where: str) -> Any:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [{name}] must be a table")
    known = {f.name: f for f in fields(cls)}
    values: dict[str, Any] = {}
    for key, raw in table.items():
        f = known.get(key)
        if f is None:
            raise ConfigError(f"{where}: [{name}] {key}: unknown key; allowed: {', '.join(known)}")
        try:
            values[key] = f.metadata["check"](raw)
        except ValueError as exc:
            raise ConfigError(f"{where}: [{name}] {key} = {raw!r}: must be {exc}") from None
    obj = cls(**values)
    check = getattr(obj, "check", None)
    if check is not None:
        try:
            check()
        except ValueError as exc:
            raise ConfigError(f"{where}: [{name}]: {exc}") from None
    return obj


def parse_config(
    data: Mapping[str, Any],
    where: str = "config",
    *,
    base: Path | None = None,
    taught: str | Path | None = None,
) -> Config:
    """Validate a parsed TOML document; raises :class:`ConfigError` naming the first bad key.

    ``[reader] taught`` is resolved against ``base`` (the config file's folder); ``taught`` (the
    CLI's ``--taught``) replaces it, as given.
    """
    allowed = [*_SECTIONS, "dice"]
    kwargs: dict[str, Any] = {}
    for name, table in data.items():
        if name == "dice":
            if not isinstance(table, dict):
                raise ConfigError(f"{where}: [dice] must be a table")
        elif name in _SECTIONS:
            kwargs[name] = _section(name, _SECTIONS[name], table, where)
        else:
            raise ConfigError(f"{where}: [{name}]: unknown section; allowed: {', '.join(allowed)}")
    found = None
    if taught is not None:
        kwargs["reader"] = ReaderConfig(str(taught))
        found = taught_dice(str(taught), f"--taught {taught}")
    elif "reader" in kwargs and kwargs["reader"].taught:
        raw = kwargs["reader"].taught
        kwargs["reader"] = ReaderConfig(str(base / raw if base is not None else Path(raw)))
        found = taught_dice(kwargs["reader"].taught, f"{where}: [reader] taught = {raw!r}")
    if "dice" in data:
        try:
            kwargs["dice"] = DiceSet.parse(data["dice"], found)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return Config(**kwargs, source=where)


def load_config(path: str | Path | None = None, *, taught: str | Path | None = None) -> Config:
    """Read and validate ``path``; ``None`` gives the built-in :data:`DEFAULT_CONFIG` (no file read).

    ``taught`` names a taught model to read with instead of the file's ``[reader] taught``.
    """
    if path is None:
        return DEFAULT_CONFIG if taught is None else parse_config({}, DEFAULT_CONFIG.source, taught=taught)
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError(f"{path}: {size} bytes; a config file is at most {MAX_FILE_BYTES}")
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return parse_config(data, str(path), base=path.parent, taught=taught)


def _defaults_are_valid() -> Config:
    """The built-in config, checked by the same rules as a file (a bad default fails at import)."""
    cfg = Config()
    for name, cls in _SECTIONS.items():
        section = getattr(cfg, name)
        for f in fields(cls):
            if f.default is not MISSING and f.default is not None:
                f.metadata["check"](list(f.default) if isinstance(f.default, tuple) else f.default)
        getattr(section, "check", lambda: None)()
    return cfg


#: The built-in tower: mock pins, the simulated camera, 4 white d6 and 1 red wild d6.
DEFAULT_CONFIG: Config = _defaults_are_valid()
