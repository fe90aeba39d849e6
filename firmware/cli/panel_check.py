"""``dicetower tower test-panel``: light each LED and the tray light in turn, then wait for the button.

Why apart from ``tower.py``: it opens the config's panel pins only, never the tower (the solenoid's
pin is not claimed, so the check cannot fire it), and it has its own report; ``tower.py`` registers
it beside the other actions.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["register_test_panel"]

HELP = "light each LED and the tray light in turn, then wait for a button press (the solenoid is not driven)"

EXAMPLES = """\
examples:
  dicetower tower test-panel                the real tower's panel (/etc/dicetower/config.toml)
  dicetower tower test-panel --hold 2 --wait 30   each light on 2 s, then 30 s to press the button
  dicetower tower test-panel --tower sim --autopress   mock pins: the button presses itself
"""


def register_test_panel(sub: argparse._SubParsersAction) -> None:
    """Add ``test-panel`` to ``tower``'s actions."""
    from .tower import add_tower_arguments

    a = sub.add_parser(
        "test-panel",
        help=HELP,
        description=HELP,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_tower_arguments(a, default="config", throws=False)
    a.add_argument(
        "--hold", type=float, default=1.0, metavar="S", help="seconds each light stays on (default 1)"
    )
    a.add_argument(
        "--wait", type=float, default=10.0, metavar="S", help="seconds to wait for the press (default 10)"
    )
    a.add_argument("--autopress", action="store_true", help="mock pins only: press the button by itself")
    a.set_defaults(func=_test_panel)


def _test_panel(args: argparse.Namespace) -> int:
    from ..clock import RealClock
    from ..panel import Panel
    from ..panel_check import check_panel
    from ..pins import pin_factory
    from .tower import tower_config

    cfg = tower_config(args)
    pins = cfg.pins
    if args.autopress and pins.factory != "mock":
        raise ValueError("--autopress works with mock pins only")
    clock = RealClock()
    print(f"panel test ({pins.factory} pins); the solenoid (GPIO{pins.solenoid}) is not driven", flush=True)

    def say(line: str) -> None:
        print(line, flush=True)
        if args.autopress and line.startswith("press the button"):
            button = panel.button.pin
            button.drive_high()
            button.drive_low()  # pull-up button: pressed is low

    with Panel(pins, pin_factory=pin_factory(pins.factory, clock)) as panel:
        panel.led_idle.off()  # the panel lights "idle" when opened: every light starts dark
        result = check_panel(panel, pins, clock=clock, hold_s=args.hold, wait_s=args.wait, say=say)
    lights = f"{len(result.lit)} light(s) lit in turn"
    if result.stuck:
        print(
            f"dicetower: error: {lights}, but the button (GPIO{pins.button}) reads pressed before it was "
            "pressed: a short to GND, or a normally-closed switch",
            file=sys.stderr,
        )
        return 1
    if not result.pressed:
        print(
            f"dicetower: error: {lights}, but the button (GPIO{pins.button}) was not pressed within "
            f"{args.wait:g} s: check S1 between its GPIO and GND, and [pins] button",
            file=sys.stderr,
        )
        return 1
    print(f"panel ok: {lights}; the button (GPIO{pins.button}) pressed after {result.waited_s:.1f} s")
    return 0
