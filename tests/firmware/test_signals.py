"""SIGTERM and SIGINT drive the solenoid low and end the process through every ``finally``.

The child-process test in ``test_shaker.py`` checks a real exit; these check the handlers in
this process, on gpiozero's MockFactory pin, and that the previous handlers come back.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import pytest
from dicetower.firmware.shaker import Shaker, ShakerLimits
from dicetower.firmware.signals import install_signal_handlers, signals_off

LONG = ShakerLimits(max_on_s=1.0, min_off_s=0.04, window_s=10.0, max_duty=0.5)


def _wait_until_high(pin: Any) -> None:
    deadline = time.monotonic() + 2.0
    while not pin.state and time.monotonic() < deadline:
        time.sleep(0.005)
    assert pin.state


@pytest.mark.parametrize(
    ("sig", "raised"), [(signal.SIGTERM, SystemExit), (signal.SIGINT, KeyboardInterrupt)]
)
def test_a_signal_drives_the_pin_low_then_unwinds(mock_factory: Any, sig: int, raised: type) -> None:
    pin = mock_factory.pin(17)
    with Shaker(17, pin_factory=mock_factory, limits=LONG) as shaker:
        with pytest.raises(raised) as exc, signals_off(shaker.off):
            shaker.shake(count=5, on_s=1.0, off_s=0.1, wait=False)
            _wait_until_high(pin)
            os.kill(os.getpid(), sig)
            time.sleep(5)  # the handler raises here, long before this ends
        assert not pin.state  # low before the shaker is closed: the handler turned it off
        shaker.wait(2.0)
    if sig == signal.SIGTERM:
        assert exc.value.code == 143
    assert not pin.state


def test_the_previous_handlers_come_back() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    with signals_off(lambda: None):
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {s: signal.getsignal(s) for s in before} == before


def test_a_failing_cleanup_does_not_stop_the_exit() -> None:
    def broken() -> None:
        raise RuntimeError("the pin is already gone")

    with pytest.raises(SystemExit), signals_off(broken):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)


def test_off_the_main_thread_nothing_is_installed() -> None:
    before = signal.getsignal(signal.SIGTERM)
    restores = []
    thread = threading.Thread(target=lambda: restores.append(install_signal_handlers(lambda: None)))
    thread.start()
    thread.join()
    assert signal.getsignal(signal.SIGTERM) is before
    restores[0]()  # a no-op
    assert signal.getsignal(signal.SIGTERM) is before
