"""``dicetower hub --mqtt URL [--host H] [--port P] [--data DIR]``.

Subscribes to every tower under the prefix and serves the hub overlay (``/overlay``), the
towers page with the roll control and the combined log (``/towers``), and their API. Listens
on 127.0.0.1:8090 by default; beyond loopback, asking a tower for a roll needs the hub's own
token (created on first start, stored 0600 in the data directory, printed once).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import COMMANDS
from .host_options import add_allowed_host_argument, allowed_hosts
from .mqtt_options import add_mqtt_arguments, mqtt_settings

__all__ = ["register", "run"]

EXAMPLES = """\
examples:
  dicetower hub --mqtt mqtt://127.0.0.1                  the hub of the towers on a local broker
  dicetower hub --mqtt mqtts://hub:secret@broker.example --port 8090 --data ./hub
  dicetower hub --mqtt mqtt://127.0.0.1 --host 0.0.0.0   reachable from the LAN: roll requests need the token
  dicetower hub --mqtt mqtt://127.0.0.1 --log-cap-mb 64  keep the combined log under 64 MB

OBS: add a Browser source with URL http://127.0.0.1:8090/overlay (docs/towers.md)
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "hub",
        help=COMMANDS["hub"],
        description="Follow every tower on an MQTT broker: one overlay, one checked log, a towers page.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8090, help="port (default 8090)")
    p.add_argument(
        "--data", type=Path, default=None, help="the hub's log (default: the data directory's hub/)"
    )
    p.add_argument(
        "--name", default="", help="this hub's name on the broker (default: random per data folder)"
    )
    p.add_argument(
        "--backfill",
        type=int,
        default=100,
        help="earlier rolls to ask a tower for when first heard (default 100, at most 1000)",
    )
    p.add_argument(
        "--tower-keys",
        type=Path,
        default=None,
        metavar="FILE",
        help="pin towers' keys: one 'TOWER ed25519:KEY' a line (docs/towers.md)",
    )
    p.add_argument(
        "--trust-first-use",
        action="store_true",
        help="pin a new tower's first signed key without asking (a broker with the per-tower ACL)",
    )
    p.add_argument(
        "--accept-unsigned",
        action="store_true",
        help="take unsigned events: no key is checked (only where the broker's ACL is trusted alone)",
    )
    p.add_argument(
        "--log-cap-mb",
        type=float,
        default=None,
        metavar="MB",
        help="cap on the combined log; the oldest rolls are thinned (DICETOWER_HUB_LOG_CAP_MB; default 512)",
    )
    p.add_argument("--require-token", action="store_true", help="ask for the bearer token even on loopback")
    add_allowed_host_argument(p, config_key=False)
    add_mqtt_arguments(p, tower=False)
    p.set_defaults(func=run)


def _hub_name(data_dir: Path, given: str) -> str:
    """The hub's name: given, or one made once and kept in the data folder (a persistent session
    needs the same client id after a restart)."""
    import secrets

    from ..mqtt.settings import check_tower_name

    if given:
        return check_tower_name(given)
    path = data_dir / "hub-name"
    try:
        return check_tower_name(path.read_text().strip())
    except (OSError, ValueError):
        name = f"hub-{secrets.token_hex(4)}"
        data_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(name + "\n")
        return name


def run(args: argparse.Namespace) -> int:
    from ...rules.errors import printable
    from ..hub.app import HubConfig, create_hub_app
    from ..mqtt.client import Connection
    from ..rolllog import default_data_dir
    from ..server import listen

    settings = mqtt_settings(args, None)
    if settings is None:
        raise ValueError("dicetower hub needs --mqtt URL (or DICETOWER_MQTT_URL)")
    from ..hub.keys import read_keys_file
    from ..mqtt.resend import RESEND_CAP

    if not 0 <= args.backfill <= RESEND_CAP:
        raise ValueError(f"--backfill must be 0..{RESEND_CAP} (what a tower resends at most)")
    from ..hub.store import log_cap_bytes

    log_cap = log_cap_bytes(args.log_cap_mb)
    tower_keys = read_keys_file(args.tower_keys) if args.tower_keys else {}
    data_dir = args.data or default_data_dir() / "hub"
    conn = Connection(
        settings.url, settings.user(), settings.password(), settings.ca_file, settings.keepalive_s
    )
    config = HubConfig(
        data_dir=data_dir,
        connection=conn,
        prefix=settings.prefix,
        hub_id=_hub_name(data_dir, args.name),
        host=args.host,
        port=args.port,
        backfill=args.backfill,
        require_token=True if args.require_token else None,
        allowed_hosts=allowed_hosts(args.allowed_host, None),
        tower_keys=tower_keys,
        trust_first_use=args.trust_first_use,
        accept_unsigned=args.accept_unsigned,
        log_cap_bytes=log_cap,
    )
    app = create_hub_app(config)

    def announce(bound: int) -> None:
        print(
            f"dicetower: hub on http://{printable(args.host)}:{bound} (overlay /overlay, towers /towers);"
            f" towers under {printable(settings.prefix)}/ on {printable(settings.url_safe)};"
            f" log in {printable(str(data_dir))}",
            file=sys.stderr,
            flush=True,
        )

    listen.serve(app, args.host, args.port, announce=announce)  # binds first, announces once serving
    return 0
