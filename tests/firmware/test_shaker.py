"""The solenoid's limits, asserted on gpiozero's mock pin: what the pin did, never what our code was told."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from dicetower.firmware.clock import VirtualClock, VirtualClockFactory
from dicetower.firmware.errors import ShakerClosedError, ShakerTimingError
from dicetower.firmware.pattern import MAX_REST_S, ShakePattern
from dicetower.firmware.shaker import WATCHDOG_GRACE_S, Shaker, ShakerLimits

LIMITS = ShakerLimits(max_on_s=0.15, min_off_s=0.04, window_s=10.0, max_duty=0.25)


def on_times(pin: Any) -> list[float]:
    """Recorded on-intervals: the timestamp of each low state that follows a high one."""
    return [
        s.timestamp for prev, s in zip(pin.states, pin.states[1:], strict=False) if prev.state and not s.state
    ]


def off_times(pin: Any) -> list[float]:
    """Rests between pulses (a high state's timestamp is the low time before it), first one excluded."""
    return [
        s.timestamp for prev, s in zip(pin.states, pin.states[1:], strict=False) if not prev.state and s.state
    ][1:]


def test_pin_is_low_at_start_even_if_it_was_high(mock_factory: Any) -> None:
    pin = mock_factory.pin(17)
    pin.function = "output"
    pin.state = True
    with Shaker(17, pin_factory=mock_factory):
        assert pin.state is False or pin.state == 0
    assert not pin.state


def test_a_shake_is_the_pattern_asked_for(mock_factory: Any) -> None:
    with Shaker(17, pin_factory=mock_factory, limits=LIMITS) as shaker:
        pulses = shaker.shake(count=3, on_s=0.05, off_s=0.06)
    assert [p.given_s for p in pulses] == [0.05, 0.05, 0.05]
    pin = mock_factory.pin(17)
    pin.assert_states_and_times(
        [(0, False), (0, True), (0.05, False), (0.06, True), (0.05, False), (0.06, True), (0.05, False)]
    )


def test_a_long_pulse_is_shortened_to_max_on(virtual: tuple[Any, Any]) -> None:
    clock, factory = virtual
    with Shaker(17, pin_factory=factory, limits=LIMITS, clock=clock) as shaker:
        p = shaker.pulse(5.0)
    assert p.given_s == pytest.approx(0.15) and "shortened to max_on" in p.note
    assert on_times(factory.pin(17)) == [pytest.approx(0.15)]


def test_a_short_rest_is_lengthened_to_min_off(virtual: tuple[Any, Any]) -> None:
    clock, factory = virtual
    with Shaker(17, pin_factory=factory, limits=LIMITS, clock=clock) as shaker:
        shaker.shake(count=4, on_s=0.05, off_s=0.001)
    assert all(rest >= 0.04 - 1e-9 for rest in off_times(factory.pin(17)))
    assert len(on_times(factory.pin(17))) == 4


def test_the_duty_budget_shortens_then_refuses(virtual: tuple[Any, Any]) -> None:
    clock, factory = virtual
    with Shaker(17, pin_factory=factory, limits=LIMITS, clock=clock) as shaker:
        given = [shaker.pulse(0.15) for _ in range(20)]
    refused = [p for p in given if p.refused]
    assert refused and all("duty budget spent" in p.note for p in refused)
    assert sum(on_times(factory.pin(17))) == pytest.approx(LIMITS.budget_s)  # 2.5 s of 10 s, not a bit more


def test_off_and_close_cut_a_pulse_short(mock_factory: Any) -> None:
    limits = ShakerLimits(max_on_s=1.0, min_off_s=0.04, window_s=10.0, max_duty=0.5)
    shaker = Shaker(17, pin_factory=mock_factory, limits=limits)
    shaker.shake(count=3, on_s=1.0, off_s=0.1, wait=False)
    time.sleep(0.05)
    shaker.off()
    shaker.wait(2.0)
    assert on_times(mock_factory.pin(17))[0] < 0.5
    shaker.shake(count=3, on_s=1.0, off_s=0.1, wait=False)
    time.sleep(0.05)
    shaker.close()
    shaker.close()  # idempotent
    pin = mock_factory.pin(17)
    assert not pin.state and all(t < 0.5 for t in on_times(pin))
    assert shaker.closed and shaker.value == 0
    with pytest.raises(ShakerClosedError):
        shaker.pulse(0.01)


def test_the_watchdog_forces_an_overrun_low(mock_factory: Any) -> None:
    with Shaker(17, pin_factory=mock_factory, limits=LIMITS) as shaker:
        shaker._device.on()  # a pulse thread that stalled with the pin high
        time.sleep(LIMITS.max_on_s + WATCHDOG_GRACE_S + 0.3)
        pin = mock_factory.pin(17)
        assert not pin.state
        assert on_times(pin)[0] < LIMITS.max_on_s + WATCHDOG_GRACE_S + 0.15


def test_pin_is_low_after_an_exception(mock_factory: Any) -> None:
    limits = ShakerLimits(max_on_s=1.0, min_off_s=0.04, window_s=10.0, max_duty=0.5)
    with pytest.raises(RuntimeError), Shaker(17, pin_factory=mock_factory, limits=limits) as shaker:
        shaker.shake(count=5, on_s=1.0, off_s=0.1, wait=False)
        time.sleep(0.05)
        assert mock_factory.pin(17).state
        raise RuntimeError("the caller crashed mid-shake")
    assert not mock_factory.pin(17).state


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "lots", None, True])
def test_nonsense_on_times_never_reach_the_pin(mock_factory: Any, bad: Any) -> None:
    with Shaker(17, pin_factory=mock_factory) as shaker:
        for call in (shaker.pulse, shaker.tap, lambda v: shaker.shake(2, v, 0.05)):
            with pytest.raises(ShakerTimingError, match="on_s"):
                call(bad)
    assert len(mock_factory.pin(17).states) == 1


def test_random_commands_never_pass_a_limit(virtual: tuple[Any, Any]) -> None:
    """2,000 random shakes and taps (the benchmark runs 10,000): every recorded interval within the limits."""
    clock, factory = virtual
    rng = random.Random(7)
    with Shaker(17, pin_factory=factory, limits=LIMITS, clock=clock) as shaker:
        for _ in range(2000):
            if rng.random() < 0.5:
                on = rng.uniform(-0.05, 0.4)
                if on > 0:
                    shaker.tap(on)
                else:
                    with pytest.raises(ShakerTimingError):
                        shaker.tap(on)
            else:
                shaker.shake(rng.randint(0, 8), rng.uniform(0, 0.5), rng.uniform(0, 0.2))
            if rng.random() < 0.2:
                clock.advance(rng.uniform(0, 5))
    check_pin_within_limits(factory.pin(17), LIMITS)


def check_pin_within_limits(pin: Any, limits: ShakerLimits) -> None:
    t, intervals = 0.0, []
    for prev, s in zip(pin.states, pin.states[1:], strict=False):
        t += s.timestamp
        if prev.state and not s.state:
            intervals.append((t - s.timestamp, t))
    assert intervals
    assert max(end - start for start, end in intervals) <= limits.max_on_s + 1e-9
    assert all(b[0] - a[1] >= limits.min_off_s - 1e-9 for a, b in itertools.pairwise(intervals))
    for _, end in intervals:  # every window ending at a pulse's end (where on-time peaks)
        lo = end - limits.window_s
        used = sum(max(0.0, e - max(s, lo)) for s, e in intervals if e > lo and s < end)
        assert used <= limits.budget_s + 1e-6


CHILD = """
import json, sys, time
from gpiozero.pins.mock import MockFactory
from dicetower.firmware.shaker import Shaker, ShakerLimits
from dicetower.firmware.signals import signals_off
factory = MockFactory()
limits = ShakerLimits(max_on_s=1.0, min_off_s=0.04, window_s=10, max_duty=0.5)
shaker = Shaker(17, pin_factory=factory, limits=limits)
try:
    with signals_off(shaker.off):
        shaker.shake(count=20, on_s=1.0, off_s=0.05, wait=False)
        time.sleep(0.05)
        print("on" if factory.pin(17).state else "off", flush=True)
        time.sleep(30)
finally:
    shaker.close()
    print(json.dumps([[s.timestamp, bool(s.state)] for s in factory.pin(17).states]), flush=True)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_pin_is_low_after_a_signal_in_a_child_process(sig: int) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "on"
        child.send_signal(sig)
        out, err = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
    states = json.loads(out.strip().splitlines()[-1])
    assert states[-1][1] is False  # low at the end
    assert states[1][1] is True and states[2][0] < 0.9  # the 1 s pulse was cut short by the signal
    # SIGTERM: SystemExit(143); SIGINT: KeyboardInterrupt, which Python ends by re-raising SIGINT
    assert child.returncode in ((143,) if sig == signal.SIGTERM else (-signal.SIGINT, 130)), err


# -- the shaker's own pattern, paced by the duty budget


def spend(shaker: Shaker, seconds: float) -> None:
    """Pulses of max_on until ``seconds`` of the duty budget are used."""
    while seconds > 1e-9:
        seconds -= shaker.pulse(min(seconds, shaker.limits.max_on_s)).given_s


def test_a_paced_shake_waits_for_room_instead_of_being_cut(virtual: tuple[Any, Any]) -> None:
    clock, factory = virtual
    with Shaker(17, pin_factory=factory, limits=LIMITS, clock=clock) as shaker:
        spend(shaker, LIMITS.budget_s - 0.1)
        cut = shaker.shake(6, 0.08, 0.12)  # unpaced: 100 ms of budget left for 480 ms asked
        assert any(p.refused or p.given_s < 0.08 for p in cut)
        t0 = clock.ticks()
        paced = shaker.paced_shake()
        assert clock.ticks() - t0 > 1.0  # it waited for old pulses to leave the window
    assert [p.given_s for p in paced] == [0.08] * 6 and not any(p.note for p in paced)
    assert on_times(factory.pin(17))[-6:] == [pytest.approx(0.08)] * 6
    check_pin_within_limits(factory.pin(17), LIMITS)


def test_a_paced_tap_is_the_patterns_tap(virtual: tuple[Any, Any]) -> None:
    clock, factory = virtual
    pattern = ShakePattern(tap_on_s=0.03, limits=LIMITS)
    with Shaker(17, pin_factory=factory, pattern=pattern, clock=clock) as shaker:
        spend(shaker, LIMITS.budget_s)
        clock.advance(LIMITS.window_s - 4.0)  # the first pulses leave the window in about a second
        assert shaker.tap(0.03).refused  # unpaced: no budget left
        t0 = clock.ticks()
        tap = shaker.paced_tap()
        assert clock.ticks() - t0 > 0.5
    assert tap.given_s == 0.03 and not tap.refused
    assert on_times(factory.pin(17))[-1] == pytest.approx(0.03)


def test_the_shaker_owns_one_pattern_and_limits_given_replace_its_own(mock_factory: Any) -> None:
    with Shaker(17, pin_factory=mock_factory) as shaker:
        assert shaker.pattern == ShakePattern() and shaker.limits is shaker.pattern.limits
    pattern = ShakePattern(shake_count=2, limits=ShakerLimits(max_on_s=0.5, max_duty=0.5))
    with Shaker(17, pin_factory=mock_factory, pattern=pattern, limits=LIMITS) as shaker:
        assert shaker.limits == LIMITS == shaker.pattern.limits and shaker.pattern.shake_count == 2


def test_a_pattern_passed_in_cannot_loosen_the_limits(virtual: tuple[Any, Any]) -> None:
    clock, factory = virtual
    greedy = ShakePattern(
        shake_count=50,
        shake_on_s=0.9,
        shake_off_s=0.0,
        tap_on_s=0.9,
        limits=ShakerLimits(1.0, 0.001, 10, 0.5),
    )
    with Shaker(17, pin_factory=factory, limits=LIMITS, clock=clock) as shaker:
        for _ in range(5):
            shaker.paced_shake(greedy)
            shaker.paced_tap(greedy)
    check_pin_within_limits(factory.pin(17), LIMITS)


def test_a_closed_shaker_refuses_its_pattern_and_stays_low(mock_factory: Any) -> None:
    shaker = Shaker(17, pin_factory=mock_factory)
    shaker.close()
    with pytest.raises(ShakerClosedError):
        shaker.paced_shake()
    with pytest.raises(ShakerClosedError):
        shaker.paced_tap()
    assert not mock_factory.pin(17).state


# -- every way out of a pulse leaves the pin low; times that are not times are refused


class FailingClock(VirtualClock):
    """A virtual clock whose wait raises once a pulse is on (a clock that breaks mid-pulse)."""

    def __init__(self) -> None:
        super().__init__()
        self.pin: Any = None

    def wait(self, event: Any, seconds: float) -> bool:
        if self.pin is not None and self.pin.state:
            raise RuntimeError("the clock broke")
        return super().wait(event, seconds)


def test_a_clock_that_raises_mid_pulse_leaves_the_pin_low_at_once() -> None:
    clock = FailingClock()
    factory = VirtualClockFactory(clock)
    with Shaker(17, pin_factory=factory, limits=LIMITS, clock=clock) as shaker:
        clock.pin = factory.pin(17)
        with pytest.raises(RuntimeError, match="the clock broke"):
            shaker.pulse(0.1)
        assert not factory.pin(17).state  # now, not when the watchdog looks 200 ms later
        assert [s.state for s in factory.pin(17).states] == [False, True, False]


def _raise_system_exit(signum: int, frame: Any) -> None:
    raise SystemExit(143)


@pytest.mark.parametrize(
    ("sig", "handler", "raised"),
    [
        (signal.SIGINT, signal.default_int_handler, KeyboardInterrupt),
        (signal.SIGUSR1, _raise_system_exit, SystemExit),
    ],
)
def test_an_exception_from_a_signal_mid_pulse_leaves_the_pin_low_at_once(
    mock_factory: Any, sig: int, handler: Any, raised: type[BaseException]
) -> None:
    """No handler that turns the pin off first: the exception alone must not leave it high."""
    limits = ShakerLimits(max_on_s=1.0, min_off_s=0.04, window_s=10.0, max_duty=0.5)
    old = signal.signal(sig, handler)
    main = threading.main_thread().ident
    assert main is not None and threading.current_thread() is threading.main_thread()
    timer = threading.Timer(0.1, signal.pthread_kill, (main, sig))
    try:
        with Shaker(17, pin_factory=mock_factory, limits=limits) as shaker:
            timer.start()
            with pytest.raises(raised):
                shaker.pulse(1.0)
            pin = mock_factory.pin(17)
            assert not pin.state  # the watchdog would drop it only at 1.05 s
            assert on_times(pin) and on_times(pin)[0] < 0.5
    finally:
        timer.cancel()
        signal.signal(sig, old)


def test_an_infinite_rest_is_refused_and_the_budget_still_holds(virtual: tuple[Any, Any]) -> None:
    clock, factory = virtual
    with Shaker(17, pin_factory=factory, limits=LIMITS, clock=clock) as shaker:
        for off in (float("inf"), float("nan"), -0.1, MAX_REST_S + 1, "1"):
            with pytest.raises(ShakerTimingError, match="off_s"):
                shaker.shake(3, 0.1, off)
        with pytest.raises(ShakerTimingError):
            shaker.wait_for_budget(float("inf"))
        assert clock.ticks() == 0.0 and len(factory.pin(17).states) == 1  # nothing moved
        given = [shaker.pulse(0.15) for _ in range(30)]
    assert any(p.refused for p in given)
    check_pin_within_limits(factory.pin(17), LIMITS)
    with pytest.raises(ValueError):
        clock.advance(float("inf"))


@pytest.mark.parametrize(
    "bad",
    [
        {"window_s": float("inf")},
        {"min_off_s": float("inf")},
        {"max_on_s": float("nan")},
        {"max_duty": float("nan")},
        {"min_off_s": -1.0},
    ],
)
def test_limits_that_are_not_finite_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ShakerTimingError):
        ShakerLimits(**bad)


class LateClock(VirtualClock):
    """A virtual clock whose every wait returns ``late`` seconds after its time (a loaded CPU)."""

    margin_s = 0.005

    def __init__(self, late: float) -> None:
        super().__init__()
        self.late = late

    def wait(self, event: Any, seconds: float) -> bool:
        if event.is_set():
            return True
        self.advance(seconds + self.late)
        return event.is_set()


@pytest.mark.parametrize("late", [0.001, 0.004, 0.012, 0.03])
def test_a_late_clock_never_takes_a_pulse_past_max_on(late: float) -> None:
    clock = LateClock(late)
    factory = VirtualClockFactory(clock)
    with Shaker(17, pin_factory=factory, limits=LIMITS, clock=clock) as shaker:
        pulses = [shaker.pulse(1.0) for _ in range(5)] + shaker.shake(4, 0.08, 0.12)
    on = on_times(factory.pin(17))
    assert len(on) == 9 and max(on) <= LIMITS.max_on_s
    assert all(p.given_s == pytest.approx(0.08) for p in pulses[5:])  # pulses short of the margin stay whole
    assert min(on[:5]) >= LIMITS.max_on_s - 2 * late - 0.005 - 1e-9  # shortened by the margin, no more


def test_a_clock_too_late_for_max_on_refuses_pulses() -> None:
    clock = LateClock(0.08)
    factory = VirtualClockFactory(clock)
    with Shaker(17, pin_factory=factory, limits=LIMITS, clock=clock) as shaker:
        p = shaker.pulse(0.1)
    assert p.refused and "late" in p.note
    assert len(factory.pin(17).states) == 1


def _busy(stop: Any) -> None:
    while not stop.is_set():
        sum(range(1000))


def _busy_process(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


@pytest.mark.slow
@pytest.mark.skipif(
    os.getloadavg()[0] > (os.cpu_count() or 1),
    reason="the machine is busy with other work: real-time lateness here would not be the shaker's",
)
def test_on_the_real_clock_under_load_no_pulse_passes_max_on(mock_factory: Any) -> None:
    """24 pulses asked past max_on on the real clock, with a busy thread (the GIL) and a busy process
    (the CPU): every on-time the pin shows stays within max_on."""
    limits = ShakerLimits(max_on_s=0.06, min_off_s=0.02, window_s=10.0, max_duty=0.5)
    stop = threading.Event()
    thread = threading.Thread(target=_busy, args=(stop,), daemon=True)
    process = multiprocessing.get_context("spawn").Process(target=_busy_process, args=(20.0,))
    thread.start()
    process.start()
    try:
        with Shaker(17, pin_factory=mock_factory, limits=limits) as shaker:
            pulses = [shaker.pulse(1.0) for _ in range(24)]
    finally:
        stop.set()
        process.terminate()
        process.join()
    on = on_times(mock_factory.pin(17))
    assert len(on) == sum(not p.refused for p in pulses) >= 8
    assert max(on) <= limits.max_on_s, [round(t * 1000, 1) for t in on]
