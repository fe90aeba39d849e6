"""SIGTERM and SIGINT as a clean exit that drives the solenoid low first.

Why: systemd stops the service with SIGTERM and a person stops the CLI with Ctrl-C. Python's
default for SIGTERM ends the process without running ``finally`` blocks, which could leave the
solenoid's pin high; here SIGTERM raises ``SystemExit(143)`` instead (SIGINT already raises
``KeyboardInterrupt``), so every ``with``/``finally`` that owns the shaker runs and closes it.
The handler also calls ``cleanup`` (such as ``shaker.off``) before raising, so the pin goes low
even before the stack unwinds.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

__all__ = ["install_signal_handlers", "signals_off"]


class _Terminated(SystemExit):
    """SIGTERM, raised in the main thread so every ``finally`` and ``with`` runs."""


def install_signal_handlers(cleanup: Callable[[], None] | None = None) -> Callable[[], None]:
    """Turn SIGTERM into ``SystemExit(143)`` and have SIGINT raise ``KeyboardInterrupt``, each
    after calling ``cleanup`` (its errors ignored: the exit must still happen).

    Returns a function that restores the previous handlers. Only the main thread can install
    handlers; elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def on_term(signum: int, frame: FrameType | None) -> None:
        if cleanup is not None:
            with contextlib.suppress(Exception):
                cleanup()
        raise _Terminated(128 + signum)

    def on_int(signum: int, frame: FrameType | None) -> None:
        if cleanup is not None:
            with contextlib.suppress(Exception):
                cleanup()
        raise KeyboardInterrupt

    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_int)

    def restore() -> None:
        for s, h in old.items():
            signal.signal(s, h)

    return restore


@contextlib.contextmanager
def signals_off(cleanup: Callable[[], None] | None = None) -> Iterator[None]:
    """:func:`install_signal_handlers` for the duration of a ``with`` block (``cleanup`` is
    typically ``shaker.off``: a signal turns the solenoid off)."""
    restore = install_signal_handlers(cleanup)
    try:
        yield
    finally:
        restore()
