"""What the server rolls and where the dice come from: requests, the ``DiceSupply`` seam, outcomes.

A :class:`RollRequest` is validated completely before it is queued (the notation parsed,
the system, check and parameters checked), so a bad request is refused with the field it
got wrong and never reaches the log. A :class:`DiceSupply` hands out one
:class:`~dicetower.rules.source.DiceSource` per roll and reports every throw through
:class:`ThrowHooks`: the RNG (:class:`RandomSupply`) and the tower
(:class:`~dicetower.firmware.rolls.tower_supply.TowerSupply`) answer the same calls, so the
queue, the log and the overlay do not know which one rolled. :func:`perform_roll` runs one
request with dice from a supply in a worker thread and returns a :class:`RollOutcome` ready
for the log. (A request's ``roller`` is the person who asked; the rules core's
:class:`~dicetower.rules.notation.Roller` evaluates notation.)
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ...rules.errors import DiceError, RollSyntaxError
from ...rules.notation import Node
from ...rules.notation import Roller as NotationRoller
from ...rules.result import CheckResult, slot_json
from ...rules.source import DiceRequest, DiceSource, DieSlot, RandomSource
from ...rules.systems import get_system, run_check, validate_params
from ...rules.systems.base import System
from ...rules.systems.format import format_result

__all__ = [
    "MAX_ROLLER_NAME",
    "WAYS_IN",
    "DiceSupply",
    "RandomSupply",
    "RequestFieldError",
    "RollOutcome",
    "RollRequest",
    "ThrowHooks",
    "ThrowInfo",
    "parse_roll_request",
    "perform_roll",
]

#: longest roller name (shown on the overlay)
MAX_ROLLER_NAME = 40
#: longest notation accepted over HTTP (the notation's own limit is larger)
MAX_NOTATION = 200
_MAX_PARAMS = 32
#: how a roll can be asked for: the API, a broker, the tower's own button (a roll's ``via``)
WAYS_IN = ("http", "mqtt", "button")

_NOTATION = NotationRoller()


class RequestFieldError(ValueError):
    """A request body that cannot be rolled; names the field (``notation``, ``params.level``)."""

    def __init__(
        self, field_name: str, message: str, *, position: int | None = None, status: int = 422, **extra: Any
    ) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message
        self.position = position
        self.status = status
        self.extra = extra  #: more fields for the error document (``throws``, ``max_throws``)

    def where(self) -> dict[str, int]:
        """The error object's place fields: ``position``, the 0-based offset code indexes with, and
        ``column``, the 1-based count the message says; none for an error with no place."""
        return {} if self.position is None else {"position": self.position, "column": self.position + 1}


@dataclass(frozen=True)
class RollRequest:
    """A validated roll: notation, or a system check with clean parameters; who asked, and which way.

    The request carries what parsing found, so it is parsed once when it is accepted: the
    notation's syntax tree (``tree``) or the system's rules (``rules``), which the plan and the
    roll read instead of parsing and looking up again.
    """

    roller: str
    notation: str | None = None
    system: str | None = None
    check: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    #: the way in it came by, one of :data:`WAYS_IN`
    via: str = "http"
    tree: Node | None = field(default=None, compare=False, repr=False)
    rules: System | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The request as the log keeps it (chained with the roll)."""
        if self.notation is not None:
            return {"notation": self.notation, "roller": self.roller, "via": self.via}
        return {
            "system": self.system,
            "check": self.check,
            "params": self.params,
            "roller": self.roller,
            "via": self.via,
        }

    @property
    def label(self) -> str:
        """Short text for the overlay and the queue: ``4d6kh3+2``, ``runic-flux skill``."""
        return self.notation if self.notation is not None else f"{self.system} {self.check}"


_FIELDS = {"notation", "system", "check", "params", "roller"}


def parse_roll_request(body: Any, *, via: str = "http") -> RollRequest:
    """Validate a decoded JSON body that came by ``via``; :class:`RequestFieldError` names a bad field."""
    if via not in WAYS_IN:
        raise ValueError(f"via must be one of {', '.join(WAYS_IN)}, got {via!r}")
    if not isinstance(body, dict):
        raise RequestFieldError("body", "must be a JSON object")
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise RequestFieldError(unknown[0], f"unknown field; known: {', '.join(sorted(_FIELDS))}")
    roller = body.get("roller", "anonymous")
    if not isinstance(roller, str) or not roller.strip():
        raise RequestFieldError("roller", "must be a non-empty string")
    roller = roller.strip()
    if len(roller) > MAX_ROLLER_NAME or not roller.isprintable():
        raise RequestFieldError("roller", f"must be at most {MAX_ROLLER_NAME} printable characters")
    notation = body.get("notation")
    if notation is not None:
        if "system" in body or "check" in body or "params" in body:
            raise RequestFieldError("notation", "give notation, or system + check + params, not both")
        if not isinstance(notation, str) or not notation.strip():
            raise RequestFieldError("notation", "must be a non-empty string")
        if len(notation) > MAX_NOTATION:
            raise RequestFieldError("notation", f"longer than {MAX_NOTATION} characters")
        try:
            tree = _NOTATION.parse(notation)
        except RollSyntaxError as exc:
            raise RequestFieldError("notation", str(exc), position=exc.position) from None
        except DiceError as exc:
            raise RequestFieldError("notation", str(exc)) from None
        return RollRequest(roller=roller, notation=notation, via=via, tree=tree)
    system_name = body.get("system")
    if system_name is None:
        raise RequestFieldError("notation", "give notation, or system + check + params")
    if not isinstance(system_name, str):
        raise RequestFieldError("system", "must be a string")
    try:
        system = get_system(system_name)
    except DiceError as exc:
        raise RequestFieldError("system", str(exc)) from None
    check_name = body.get("check")
    if not isinstance(check_name, str):
        raise RequestFieldError("check", f"must be a string; {system.name} has {', '.join(system.checks)}")
    try:
        check = system.check(check_name)
    except DiceError as exc:
        raise RequestFieldError("check", str(exc)) from None
    params = body.get("params", {})
    if not isinstance(params, dict):
        raise RequestFieldError("params", "must be a JSON object")
    if len(params) > _MAX_PARAMS:
        raise RequestFieldError("params", f"more than {_MAX_PARAMS} entries")
    for k, v in params.items():
        if not isinstance(v, (int, float, str, bool)) and v is not None:
            raise RequestFieldError(f"params.{k}", "must be a number, string or boolean")
    known = {p.name for p in check.params}
    for k in params:
        if k not in known:
            raise RequestFieldError(f"params.{k}", f"unknown parameter; known: {', '.join(sorted(known))}")
    try:
        clean = validate_params(check, params)
    except DiceError as exc:
        bad = next((p.name for p in check.params if f" {p.name} " in f" {exc} "), None)
        raise RequestFieldError(f"params.{bad}" if bad else "params", str(exc)) from None
    return RollRequest(
        roller=roller, system=system.name, check=check.name, params=clean, via=via, rules=system
    )


@dataclass
class ThrowInfo:
    """One physical throw as the log keeps it.

    ``slots`` are :func:`~dicetower.rules.result.slot_json` documents, whoever rolled.
    ``dice`` maps a slot number to what the tower knows of the die that answered it
    (``die`` identity such as ``"red d6"``, ``colour``, ``confidence``, ``box`` as
    ``[x, y, w, h]`` in photo pixels), and ``crops`` to that die's JPEG crop, cut from the raw
    frame when the throw was read and stored as given. ``retries`` are
    ``{"reason", "action", "dice"}``. ``attempts`` are what each reading of the throw saw of
    each die, ``{"after", "dice": [{"die", "face", "truth"?, "cocked"?}]}`` (a tower's throws
    only): what the per-face reject rates of ``rejects.py`` are counted from.
    """

    index: int
    reason: str
    slots: list[dict[str, Any]]
    faces: list[int]
    dice: dict[int, dict[str, Any]] = field(default_factory=dict)
    photo_jpeg: bytes | None = None
    crops: dict[int, bytes] = field(default_factory=dict)
    reading: dict[str, Any] | None = None
    timings: dict[str, float] = field(default_factory=dict)
    retries: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)


class ThrowHooks:
    """Called by a dice supply's source around each throw (from the worker thread)."""

    def __init__(
        self,
        rolling: Callable[[int, DiceRequest], None] | None = None,
        settled: Callable[[ThrowInfo], None] | None = None,
    ) -> None:
        self._rolling = rolling
        self._settled = settled
        self.throws: list[ThrowInfo] = []

    def rolling(self, request: DiceRequest) -> int:
        index = len(self.throws)
        if self._rolling:
            self._rolling(index, request)
        return index

    def settled(self, info: ThrowInfo) -> None:
        """Record a finished throw; its ``index`` is set here (a request may take several throws)."""
        info.index = len(self.throws)
        self.throws.append(info)
        if self._settled:
            self._settled(info)


class DiceSupply(ABC):
    """Where the server's dice come from: the RNG or a tower.

    Subclasses *must* set :attr:`name` and override :meth:`source`, which returns a fresh
    :class:`DiceSource` for one roll that calls ``hooks.rolling`` before and
    ``hooks.settled`` after every throw. They *may* override :meth:`status` (shown by
    ``GET /api/tower``) and :meth:`close`, and :meth:`throws_for` with :attr:`max_throws`
    when a throw costs something (a tower's does: seconds, a photo, wear). :meth:`source` is
    called from a worker thread, one roll at a time.
    """

    name: str = ""
    #: the most throws one roll's initial dice may take; None: no bound (the RNG)
    max_throws: int | None = None

    @abstractmethod
    def source(self, hooks: ThrowHooks) -> DiceSource:
        """A dice source for one roll."""

    def throws_for(self, requests: Sequence[Sequence[DieSlot]]) -> int:
        """How many throws these requests (a roll's initial dice) take; called before the roll is queued.

        Raises ``ValueError`` saying why when they cannot be thrown at all (a kind not loaded).
        Each request is one throw unless a subclass knows better.
        """
        return sum(1 for r in requests if r)

    def status(self) -> dict[str, Any]:
        return {"source": self.name}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the hardware (idempotent)."""


class _RandomThrows(DiceSource):
    faces_are_valid = True

    def __init__(self, hooks: ThrowHooks, rng: RandomSource, throw_time: float) -> None:
        self.hooks = hooks
        self.rng = rng
        self.throw_time = throw_time

    def faces(self, request: DiceRequest) -> list[int]:
        index = self.hooks.rolling(request)
        t0 = time.perf_counter()
        if self.throw_time > 0:
            time.sleep(self.throw_time)
        faces = self.rng.faces(request)
        dice = {
            s.slot: {"die": f"rng {s.die}" + ("" if s.role.value == "plain" else f" {s.role.value}")}
            for s in request.slots
        }
        self.hooks.settled(
            ThrowInfo(
                index=index,
                reason=request.reason,
                slots=[slot_json(s) for s in request.slots],
                faces=list(faces),
                dice=dice,
                timings={"rng_s": time.perf_counter() - t0},
            )
        )
        return faces


class RandomSupply(DiceSupply):
    """Dice from the OS's secure RNG (or a seeded one for tests); no photos.

    For fairness the RNG's dice are named by kind and role (``"rng d6"``, ``"rng d6 wild"``).
    ``throw_time`` makes each throw take that long, as a tower's does, so an overlay can be
    rehearsed (and a crash mid-roll tested) without a tower.
    """

    name = "rng"

    def __init__(self, seed: int | str | None = None, *, throw_time: float = 0.0) -> None:
        self._rng = RandomSource(seed)
        self.throw_time = max(0.0, min(float(throw_time), 60.0))

    def source(self, hooks: ThrowHooks) -> DiceSource:
        return _RandomThrows(hooks, self._rng, self.throw_time)


@dataclass
class RollOutcome:
    """A finished roll, ready for :meth:`RollLog.commit`."""

    result: dict[str, Any]
    text: str
    total: Any
    outcome: str | None
    odds: dict[str, Any] | None
    dice: list[dict[str, Any]]
    throws: list[ThrowInfo]
    timings: dict[str, float]


def _exact(p: Fraction | float) -> str | None:
    return str(p) if isinstance(p, Fraction) and len(str(p)) <= 60 else None


def _odds_json(result: CheckResult) -> dict[str, Any] | None:
    if result.odds is None:
        return None
    probs = result.odds.probabilities
    out: dict[str, Any] = {
        "probabilities": {k: float(v) for k, v in probs.items()},
        "exact": {k: _exact(v) for k, v in probs.items()},
        "truncation_error": result.odds.truncation_error,
    }
    if result.outcome in probs:
        out["outcome"] = result.outcome
        out["outcome_probability"] = float(probs[result.outcome])
        out["outcome_exact"] = _exact(probs[result.outcome])
    return out


def perform_roll(request: RollRequest, supply: DiceSupply, hooks: ThrowHooks) -> RollOutcome:
    """Roll ``request`` with dice from ``supply``; blocking (call it from a worker thread)."""
    t0 = time.perf_counter()
    source = supply.source(hooks)
    if request.notation is not None:
        rolled = _NOTATION.roll(request.tree or request.notation, source, text=request.notation)
        result = rolled.to_json()
        text, total, outcome, odds = rolled.text, rolled.total, None, None
        dice_objs = rolled.dice
    else:
        system = request.rules or get_system(request.system or "")
        checked = run_check(system, request.check or "", source, request.params)
        result = checked.to_json()
        text = format_result(checked)
        total, outcome, odds = result["total"], checked.outcome, _odds_json(checked)
        dice_objs = checked.dice
    by_slot: dict[int, tuple[int, dict[str, Any]]] = {}
    for t in hooks.throws:
        for slot, info in t.dice.items():
            by_slot[slot] = (t.index, info)
    dice = []
    for d in dice_objs:
        j = d.to_json()
        throw, info = by_slot.get(d.slot.slot, (None, {}))
        j["kind"] = j.pop("die")
        j["throw"] = throw
        j["die"] = info.get("die") or f"rng {j['kind']}"
        for key in ("colour", "confidence", "box", "position", "by_table"):
            if key in info:
                j[key] = info[key]
        dice.append(j)
    timings: dict[str, float] = {"roll_s": time.perf_counter() - t0}
    for t in hooks.throws:
        for k, v in t.timings.items():
            timings[k] = timings.get(k, 0.0) + float(v)
    return RollOutcome(result, text, total, outcome, odds, dice, list(hooks.throws), timings)
