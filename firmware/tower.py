"""The roll cycle: idle -> shake -> settle -> capture -> read -> match to the request -> done.

A :class:`Tower` owns the shaker, the panel, the camera and the reader, and answers a
:class:`~dicetower.rules.source.DiceRequest` with one face per slot
(:meth:`Tower.roll`). Each physical throw of the tray:

1. **shake** (the solenoid pattern, paced by its duty budget);
2. **settle**: frames are taken, tray light on, until :attr:`CycleConfig.still_frames`
   frames in a row differ from the one before by less than :data:`MOTION_SHARE` of their
   pixels (:func:`moved`), or ``settle_timeout_s`` passes on the camera's clock. The last
   still frame is the photo. A frozen frame (the same image bit for bit), a black frame,
   garbage and a disconnect are retried, each a bounded number of times;
3. **read** with the empty-tray reference and tray outline from calibration;
4. **check**: no dice is a failure; a photo that has not changed since before the shake is
   a jam; more or fewer dice than loaded, or a role die not seen by its colour, is thrown
   again; unreadable dice are tapped and read again, then thrown again;
5. **match**: slots take dice by kind and role (a wild slot the die configured as wild,
   told by its colour), plain slots the rest of that kind left to right.

Which reading counts never depends on faces: after any tap or re-shake, the whole new
reading replaces the old one (``docs/tower.md`` says why). Every bound ends in a clear
:class:`~dicetower.firmware.errors.ThrowFailedError` carrying the last photo; the solenoid
is off whenever the tower is not in the middle of a pulse.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..rules.result import slot_json
from ..rules.source import DiceRequest, DieSlot
from ..vision.reading import Reading
from .calibration import REFERENCE_FRAMES, Calibration
from .cameras import CameraBackend, open_camera
from .clock import Clock, RealClock, VirtualClock
from .config import Config, TrayDie
from .errors import (
    CalibrationError,
    CameraDisconnectedError,
    CameraError,
    CameraFrameError,
    ThrowFailedError,
    TrayKindError,
)
from .matching import NoDieForSlot, match_slots, needs_role_die, plan_rounds, reading_problem
from .motion import MOTION_LEVEL, MOTION_SHARE, moved, thumbnail
from .panel import Panel, TowerState
from .pattern import ShakePattern
from .photos import die_crops, encode_jpeg
from .pins import pin_factory
from .records import FailureReason, Retry, ThrowRecord, TowerAnswer
from .shaker import Shaker
from .taught_watch import TaughtWatch
from .teaching import teach_dice, teaching_check
from .tray_reader import TrayReader, reader_for_tray

if TYPE_CHECKING:
    from ..vision.reading import DiceReader

__all__ = [
    "BLACK_MEAN",
    "MAX_SETTLE_FRAMES",
    "MOTION_LEVEL",
    "MOTION_SHARE",
    "Tower",
    "TowerAnswer",
    "moved",
    "open_tower",
    "plan_rounds",
    "reader_for_tray",
]

log = logging.getLogger(__name__)


#: A frame whose mean grey level is under this is black (lens cap, dead sensor, lights off).
BLACK_MEAN = 8.0
#: Hard bound on frames one settle may take, whatever the clock does.
MAX_SETTLE_FRAMES = 600

Listener = Callable[[TowerState, str], None]


class _Failed(Exception):
    """Internal: a bounded retry ran out; carries the reason and message."""

    def __init__(self, reason: FailureReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class Tower:
    """The dice tower: ``with open_tower(config) as tower: tower.roll(request)``.

    One roll at a time (a lock). ``listeners`` are called with ``(state, detail)`` on each
    state change (the LEDs, ``tower watch``, systemd's STATUS, the server's websocket).
    """

    def __init__(
        self,
        config: Config,
        *,
        shaker: Shaker,
        panel: Panel,
        camera: CameraBackend,
        reader: DiceReader | None = None,
        calibration: Calibration | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.config = config
        self.shaker = shaker
        self.panel = panel
        self.camera = camera
        self.clock = clock or camera.clock
        self._tray_reader = TrayReader(config, camera, reader)
        self.calibration = calibration
        self.listeners: list[Listener] = []
        self.state = TowerState.IDLE
        self.detail = ""
        self.last_record: ThrowRecord | None = None
        #: ``[roll] unreadable = "ask"``: fills a reading's unreadable dice from the table, or None
        self.ask_table: Callable[[ThrowRecord, Reading, np.ndarray], Reading | None] | None = None
        self.throws = 0
        self._lock = threading.RLock()
        self._last_frame: np.ndarray | None = None
        self._closed = False

    # -- parts

    @property
    def reader(self) -> DiceReader:
        return self._tray_reader.reader

    @property
    def taught(self) -> TaughtWatch | None:
        """The taught reader's running figure, when the tower reads with one (docs/teach.md)."""
        return self._tray_reader.taught

    @property
    def dice(self) -> tuple[TrayDie, ...]:
        return self.config.dice.dice

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Solenoid off and released, LEDs off, camera closed. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self.shaker.close()
        finally:
            try:
                self.panel.close()
            finally:
                self.camera.close()
                self._set_state(TowerState.CLOSED)

    def __enter__(self) -> Tower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _set_state(self, state: TowerState, detail: str = "") -> None:
        self.state, self.detail = state, detail
        if state is not TowerState.CLOSED:
            self.panel.show(state)
        for fn in list(self.listeners):
            try:
                fn(state, detail)
            except Exception:  # a listener must not stop a roll
                log.exception("tower state listener failed")

    def status(self) -> dict[str, Any]:
        """What ``tower status`` prints and the server's health check returns."""
        cal = self.calibration
        taught = self.taught
        return {
            "state": self.state.value,
            "detail": self.detail,
            "camera": self.camera.name,
            "pins": self.config.pins.factory,
            "solenoid": {"gpio": self.config.pins.solenoid, "on": self.shaker.is_active},
            "dice": self.config.dice.describe(),
            "tray": self.config.dice.tray_json(),
            "calibrated": cal is not None,
            "calibration_size": list(cal.size) if cal is not None else None,
            "throws": self.throws,
            "config": self.config.source,
            "taught": taught.status() if taught is not None else None,
        }

    # -- calibration

    def calibrate(self, *, save: bool = False, tray: list[list[float]] | None = None) -> Calibration:
        """Lock the camera's settings and take the empty-tray reference (the tray must be empty).

        ``save`` writes it to ``[calibration] dir`` for the next start.
        """
        with self._lock, self._safe():
            cam = self.camera
            with cam.empty_tray(), self.panel.lit():
                settings = cam.lock_settings()
                record = ThrowRecord(reason="calibration")
                frames = [self._frame(record).astype(np.float32) for _ in range(REFERENCE_FRAMES)]
            reference = np.clip(np.mean(frames, axis=0).round(), 0, 255).astype(np.uint8)
            cal = Calibration(reference, cam.name, settings, tray)
            if save:
                cal.save(self.config.calibration_dir)
            self.calibration = cal
            self._last_frame = None
            return cal

    # -- what callers ask for

    def shake(self) -> list[dict[str, Any]]:
        """The shaker's shake pattern (from the config), paced by the duty budget; returns the pulses."""
        with self._lock, self._safe():
            self._set_state(TowerState.SHAKING)
            try:
                pulses = self.shaker.paced_shake()
            finally:
                self._set_state(TowerState.IDLE)
            return [p.to_json() for p in pulses]

    def tap(self) -> dict[str, Any]:
        """The shaker's tap (settles a leaning die), paced by the duty budget."""
        with self._lock, self._safe():
            self._set_state(TowerState.TAPPING)
            try:
                return self.shaker.paced_tap().to_json()
            finally:
                self._set_state(TowerState.IDLE)

    def capture(self) -> np.ndarray:
        """One checked frame, tray light on (no shake)."""
        with self._lock, self._safe(), self.panel.lit():
            return self._frame(ThrowRecord(reason="capture"))

    def read(self, frame: np.ndarray) -> Reading:
        """Read one frame against the calibration (no shake, no retries)."""
        with self._lock:
            if self.calibration is None:
                raise CalibrationError(
                    f"the {self.camera.name} camera is not calibrated: run 'dicetower tower calibrate'"
                )
            return self._read(ThrowRecord(reason="read"), frame)

    def throw(self, reason: str = "tower throw") -> ThrowRecord:
        """Shake, settle and read the whole tray, answering no slots (``tower capture``, ``record``)."""
        with self._lock, self._safe():
            record = ThrowRecord(reason=reason)
            self._throw_into(record, [])
            return record

    def throw_for_teaching(self, reason: str = "teach") -> ThrowRecord:
        """One throw for ``teach collect``: the cycle's checks and bounds, but no face need be read.

        The general reader reads untaught dice poorly, and their faces are what teaching is for; a
        leaning or touching die is still tapped or thrown again (:func:`~.teaching.teaching_check`).
        ``record.teach`` holds each die's loaded kind and colour and its crop.
        """
        with self._lock, self._safe():
            record = ThrowRecord(reason=reason)
            loaded: list[int] = []

            def check(reading: Reading) -> tuple[FailureReason, str] | None:
                problem, loaded[:] = teaching_check(reading, self.dice)
                return problem

            def keep(frame: np.ndarray) -> None:
                record.teach = teach_dice(frame, record.reading, [self.dice[i] for i in loaded])

            self._cycle(record, check, keep)
            return record

    def roll(self, request: DiceRequest) -> TowerAnswer:
        """Answer ``request``: one face per slot, in slot order, from as many throws as it takes.

        Raises :class:`TrayKindError` before anything moves when the tray cannot answer it,
        and :class:`ThrowFailedError` (with the last photo) when a throw fails.
        """
        slots = list(request.slots)
        if not slots:
            return TowerAnswer([])
        rounds = plan_rounds(slots, self.dice)
        faces: dict[int, int] = {}
        answer = TowerAnswer([])
        with self._lock, self._safe():
            for i, part in enumerate(rounds, 1):
                record = ThrowRecord(
                    reason=request.reason or ("follow-up" if request.is_follow_up else "throw"),
                    slots=[slot_json(s) for s in part],
                    round=i,
                    rounds=len(rounds),
                )
                self._throw_into(record, part, all_slots=slots)
                answer.records.append(record)
                answer.answers.extend(record.answers)
                for a in record.answers:
                    faces[a.slot] = a.face
        answer.faces = [faces[s.slot] for s in slots]
        return answer

    # -- the cycle

    @contextlib.contextmanager
    def _safe(self) -> Iterator[None]:
        """Whatever happens inside, the solenoid is off afterwards and the panel says so."""
        if self._closed:
            raise CameraError("the tower is closed")
        try:
            yield
        except BaseException:
            self.shaker.off()
            raise
        finally:
            self.shaker.off()

    def _throw_into(
        self, record: ThrowRecord, slots: Sequence[DieSlot], all_slots: Sequence[DieSlot] | None = None
    ) -> None:
        """One physical throw into ``record`` (:meth:`_cycle`), then ``slots`` matched to its dice."""
        needed_roles = {
            s.role.value for s in (all_slots if all_slots is not None else slots) if needs_role_die(s)
        }
        roles_now = {s.role.value for s in slots if needs_role_die(s)}

        def check(reading: Reading) -> tuple[FailureReason, str] | None:
            return reading_problem(reading, self.dice, self.config.dice, roles_now)

        def match(frame: np.ndarray) -> None:
            t = time.perf_counter()
            try:
                record.answers = match_slots(slots, record.reading, self.dice, needed_roles)
            except NoDieForSlot as exc:
                raise _Failed(FailureReason.DIE_MISSING, str(exc)) from None
            record.add_time("match", (time.perf_counter() - t) * 1000)

        self._cycle(record, check, match)

    def _cycle(
        self,
        record: ThrowRecord,
        check: Callable[[Reading], tuple[FailureReason, str] | None],
        done: Callable[[np.ndarray], None],
    ) -> None:
        """Shake, settle, read and ``check`` the reading, tapping and re-shaking within the bounds,
        until a reading counts; then ``done`` with its raw frame. Failures end in :meth:`_fail`."""
        t_start = time.perf_counter()
        c_start = self.camera.ticks()
        cyc = self.config.cycle
        taps_left, reshakes_left = cyc.max_taps, cyc.max_reshakes
        action = "shake"
        try:
            if self.calibration is None:
                raise CalibrationError(
                    f"the {self.camera.name} camera is not calibrated: run 'dicetower tower calibrate' "
                    "with the tray empty"
                )
            before = self._before(record)
            while True:
                if action == "shake":
                    self._shake_into(record)
                else:
                    self._tap_into(record)
                frame = self._settle(record)
                reading = self._read(record, frame)
                attempt = len(record.attempts) - 1  # the reading a tap or re-shake is charged to
                problem = check(reading)
                if problem is not None and problem[0] is FailureReason.TRAY_EMPTY:
                    raise _Failed(*problem)
                if action == "shake" and before is not None and not moved(before, thumbnail(frame)):
                    if reshakes_left:
                        reshakes_left -= 1
                        record.retries.append(Retry("reshake", "jam: the dice did not move", attempt))
                        action = "shake"
                        continue
                    raise _Failed(FailureReason.JAM, "jam: the dice did not move when shaken")
                if problem is None:  # it counts: its dice are cut from the raw frame once, here
                    record.crops = die_crops(frame, [d.box for d in reading.dice])
                    break
                reason, text = problem
                ask = self.ask_table if reason is FailureReason.UNREADABLE else None
                filled = ask(record, reading, frame) if ask is not None else None
                if filled is not None and check(filled) is None:  # the table read it: no re-throw
                    record.reading, record.crops = filled, die_crops(frame, [d.box for d in filled.dice])
                    break
                if reason is FailureReason.UNREADABLE and taps_left:
                    taps_left -= 1
                    record.retries.append(Retry("tap", text, attempt))
                    action = "tap"
                    continue
                if reshakes_left:
                    reshakes_left -= 1
                    record.retries.append(Retry("reshake", text, attempt))
                    before = thumbnail(frame)
                    action = "shake"
                    continue
                raise _Failed(reason, text)
            done(frame)
        except _Failed as exc:
            self._fail(record, exc.reason, str(exc))
        except (CalibrationError, TrayKindError):
            self._set_state(TowerState.ATTENTION, "not ready")
            raise
        finally:
            record.timings_ms["total"] = (time.perf_counter() - t_start) * 1000
            record.clock_s["total"] = self.camera.ticks_diff(self.camera.ticks(), c_start)
            self.last_record = record
            self.throws += 1
        record.truth = self.camera.truth
        self._set_state(TowerState.IDLE, f"read {', '.join(map(str, record.reading.faces))}")

    def _fail(self, record: ThrowRecord, reason: FailureReason, message: str) -> None:
        self.shaker.off()
        record.failure, record.message = reason, message
        if not record.photo and self._last_frame is not None:
            record.photo = encode_jpeg(self._last_frame)
        record.truth = self.camera.truth
        self._set_state(TowerState.ATTENTION, message)
        log.warning("throw failed (%s): %s", reason.value, message)
        raise ThrowFailedError(reason, message, record)

    def _before(self, record: ThrowRecord) -> np.ndarray:
        """A thumbnail of the tray before the shake: a photo just like it afterwards is a jam."""
        with self.panel.lit():
            return thumbnail(self._frame(record))

    def _shake_into(self, record: ThrowRecord) -> None:
        self._set_state(TowerState.SHAKING)
        t, c = time.perf_counter(), self.camera.ticks()
        pulses = self.shaker.paced_shake()
        record.pulses.extend(p.to_json() for p in pulses)
        record.add_time("shake", (time.perf_counter() - t) * 1000)
        record.clock_s["shake"] = record.clock_s.get("shake", 0.0) + self.camera.ticks_diff(
            self.camera.ticks(), c
        )
        if not pulses or all(p.refused for p in pulses):
            raise _Failed(
                FailureReason.SHAKER, f"the solenoid refused to shake: {pulses[0].note if pulses else ''}"
            )

    def _tap_into(self, record: ThrowRecord) -> None:
        self._set_state(TowerState.TAPPING)
        t = time.perf_counter()
        record.pulses.append(self.shaker.paced_tap().to_json())
        record.add_time("tap", (time.perf_counter() - t) * 1000)

    def _frame(self, record: ThrowRecord) -> np.ndarray:
        """One usable frame; disconnects, garbage, frozen and black frames are retried (bounded)."""
        cam = self.camera
        cyc = self.config.cycle
        last_problem: tuple[FailureReason, str] = (FailureReason.CAMERA_LOST, "")
        for attempt in range(cyc.camera_retries + 1):
            if attempt:
                cam.wait(cyc.camera_retry_wait_s)
            t = time.perf_counter()
            try:
                frame = cam.read_frame()
            except CameraDisconnectedError as exc:
                record.retries.append(Retry("reconnect", str(exc)))
                last_problem = (FailureReason.CAMERA_LOST, f"the camera stopped answering: {exc}")
                with contextlib.suppress(CameraError):
                    cam.reopen()
                continue
            except CameraFrameError as exc:
                record.retries.append(Retry("recapture", f"garbage frame: {exc}"))
                last_problem = (FailureReason.CAMERA_GARBAGE, f"the camera sends unusable frames: {exc}")
                continue
            except CameraError as exc:  # gone for good (unplugged, a replay played out)
                raise _Failed(FailureReason.CAMERA_LOST, str(exc)) from None
            finally:
                record.add_time("camera", (time.perf_counter() - t) * 1000)
            last = self._last_frame
            if cam.live and last is not None and (frame is last or np.array_equal(frame, last)):
                record.retries.append(Retry("recapture", "frozen frame (the same image again)"))
                last_problem = (FailureReason.CAMERA_FROZEN, "the camera keeps sending the same image")
                continue
            if float(frame.mean()) < BLACK_MEAN:
                record.retries.append(Retry("recapture", "black frame"))
                last_problem = (
                    FailureReason.CAMERA_BLACK,
                    "the camera sends black frames (lens cap? light?)",
                )
                self._last_frame = frame
                continue
            self._last_frame = frame
            return frame
        raise _Failed(*last_problem)

    def _settle(self, record: ThrowRecord) -> np.ndarray:
        """Frames until ``still_frames`` in a row show no motion; the last is the photo."""
        self._set_state(TowerState.SETTLING)
        cam = self.camera
        cyc = self.config.cycle
        t0, c0 = time.perf_counter(), cam.ticks()
        cam_ms = record.timings_ms.get("camera", 0.0)
        still = 0
        prev: np.ndarray | None = None
        frame: np.ndarray | None = None
        with self.panel.lit():
            for _ in range(MAX_SETTLE_FRAMES):
                if cam.ticks_diff(cam.ticks(), c0) > cyc.settle_timeout_s:
                    break
                frame = self._frame(record)
                thumb = thumbnail(frame)
                if prev is not None:
                    still = 0 if moved(prev, thumb) else still + 1
                prev = thumb
                if still >= cyc.still_frames:
                    break
            else:
                still = -1
        record.clock_s["settle"] = record.clock_s.get("settle", 0.0) + cam.ticks_diff(cam.ticks(), c0)
        spent = (time.perf_counter() - t0) * 1000 - (record.timings_ms.get("camera", 0.0) - cam_ms)
        record.add_time("settle", spent)
        if frame is not None:
            record.photo = encode_jpeg(frame)
        if frame is None or still < cyc.still_frames:
            raise _Failed(
                FailureReason.SETTLE_TIMEOUT,
                f"the picture did not keep still for {cyc.still_frames} frames in {cyc.settle_timeout_s:g} s",
            )
        self._set_state(TowerState.CAPTURING)
        return frame

    def _read(self, record: ThrowRecord, frame: np.ndarray) -> Reading:
        self._set_state(TowerState.READING)
        cal = self.calibration
        assert cal is not None
        if cal.reference.shape != frame.shape:
            raise CalibrationError(
                f"the camera's frames are {frame.shape[1]}x{frame.shape[0]} but the calibration is "
                f"{cal.size[0]}x{cal.size[1]}: run 'dicetower tower calibrate' again"
            )
        t = time.perf_counter()
        reading = self._tray_reader.read(frame, cal.reference, cal.tray_array(), expected=len(self.dice))
        record.add_time("read", (time.perf_counter() - t) * 1000)
        record.add_reading(reading, self.camera.truth)
        return reading


def open_tower(
    config: Config,
    *,
    reader: DiceReader | None = None,
    camera: CameraBackend | None = None,
    clock: Clock | None = None,
    calibrate: bool | None = None,
) -> Tower:
    """Build a :class:`Tower` from ``config``: pins, shaker, panel, camera, calibration.

    The clock is virtual (shakes and frames take no real time) for mock pins with the sim or
    replay camera unless ``[sim] realtime = true``; real otherwise. Sim and replay calibrate
    on opening; other cameras load ``[calibration] dir``. Partial construction is undone.
    """
    simulated = config.pins.factory == "mock" and config.camera.backend in ("sim", "replay")
    if clock is None:
        clock = VirtualClock() if simulated and not config.sim.realtime else RealClock()
    stack = contextlib.ExitStack()
    with stack:
        factory = pin_factory(config.pins.factory, clock)
        shaker = Shaker(
            config.pins.solenoid,
            pattern=ShakePattern.from_config(config.shaker),
            pin_factory=factory,
            clock=clock,
        )
        stack.callback(shaker.close)
        panel = Panel(config.pins, pin_factory=factory)
        stack.callback(panel.close)
        if camera is None:
            camera = open_camera(config, clock=clock)
        stack.callback(camera.close)
        if config.pins.factory == "mock":
            camera.watch_solenoid(shaker.pin, shaker.pattern)
        tower = Tower(config, shaker=shaker, panel=panel, camera=camera, reader=reader, clock=clock)
        if calibrate is None:
            calibrate = camera.can_show_empty_tray
        if calibrate:
            tower.calibrate()
        else:
            with contextlib.suppress(CalibrationError):
                cal = Calibration.load(config.calibration_dir, camera.name)
                camera.apply_settings(cal.settings)
                tower.calibration = cal
        stack.pop_all()
    return tower
