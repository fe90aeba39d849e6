"""``dicetower serve [--tower sim|config|replay | --rng] [--host H] [--port P] [--data DIR]``.

The tower's one service: the HTTP/WebSocket API, the OBS overlay, the roll log, MQTT when
``[mqtt]`` names a broker, and the tower's start button, each press a roll as an API call is.
Rolls on the simulated tower by default, on the tower of the config file with ``--tower config``
(``--config PATH``; what systemd runs), or with the RNG (``--rng``, no button). Under systemd
it says when it is ready and pings the watchdog (``server/watchdog.py``). Listens on 127.0.0.1
by default. Beyond loopback (``--host 0.0.0.0``)
rolling needs the bearer token that is created on first start, stored 0600 in the data directory and printed
once. Settings resolve as flag, then ``DICETOWER_*`` environment variable, then default.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from . import COMMANDS
from .host_options import add_allowed_host_argument, allowed_hosts
from .mqtt_options import add_mqtt_arguments, mqtt_settings
from .tower import add_tower_arguments

__all__ = ["register", "run"]

EXAMPLES = """\
examples:
  dicetower serve                                  API + overlay on http://127.0.0.1:8080 (the sim tower)
  dicetower serve --tower config                   the real tower of /etc/dicetower/config.toml: API, overlay,
                                                   log, MQTT and its button (what systemd runs)
  dicetower serve --tower sim --autopress --presses 3   the simulated button presses itself 3 times
  dicetower serve --rng                            dice from the OS's secure RNG, no tower
  dicetower serve --tower config --taught my-dice  read the dice a taught model knows by their own reader
  dicetower serve --data ./rolls --port 9000       keep the roll log and photos in ./rolls
  dicetower serve --host 0.0.0.0                   reachable from the LAN: rolling needs the printed token
  dicetower serve --host 0.0.0.0 --allowed-host tower.lan   also answer to http://tower.lan:8080 (a DNS name)
  dicetower serve --teach ./teach                  also name a teach folder's groups on /teach (docs/teach.md)
  dicetower serve --accept-broken-log              serve a log that does not verify (see dicetower log verify)
  dicetower serve --mqtt mqtt://hub.local --mqtt-tower table-3   publish rolls to a broker (docs/towers.md)
  curl -X POST localhost:8080/api/rolls -H 'content-type: application/json' -d '{"notation":"4d6kh3"}'

OBS: add a Browser source with URL http://127.0.0.1:8080/overlay?theme=dark&scale=1 (docs/server.md)
"""


def _env(name: str, default: str) -> str:
    return os.environ.get(f"DICETOWER_{name}", default)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help=COMMANDS["serve"],
        description="Serve rolls over HTTP and WebSocket, the OBS overlay and the fairness page.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default=None, help="address to listen on (DICETOWER_HOST; default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (DICETOWER_PORT; default 8080)")
    p.add_argument("--data", type=Path, default=None, help="roll log and photos (DICETOWER_DATA_DIR)")
    p.add_argument("--require-token", action="store_true", help="ask for the bearer token even on loopback")
    p.add_argument(
        "--trusted-proxy",
        action="append",
        default=None,
        metavar="ADDR",
        help="a reverse proxy (address or network) whose X-Forwarded-For names the client; repeatable "
        "(DICETOWER_TRUSTED_PROXIES, comma-separated; default none: the header is ignored)",
    )
    add_allowed_host_argument(p, config_key=True)
    p.add_argument(
        "--cors-origin",
        action="append",
        default=None,
        metavar="ORIGIN",
        help="a browser origin answered with CORS headers, e.g. a Foundry world's https://host:30000; "
        "repeatable (DICETOWER_CORS_ORIGINS, comma-separated; default none: CORS off; docs/foundry.md)",
    )
    p.add_argument("--tls-cert", type=Path, metavar="FILE", help="serve https with this certificate (PEM)")
    p.add_argument("--tls-key", type=Path, metavar="FILE", help="the certificate's private key (PEM)")
    p.add_argument(
        "--rate", type=float, default=None, help="rolls per second per client (0: no limit; default 2)"
    )
    p.add_argument("--burst", type=int, default=10, help="rolls a client may send at once (default 10)")
    p.add_argument(
        "--max-queue", type=int, default=100, help="rolls that may wait; more get 503 (default 100)"
    )
    p.add_argument(
        "--photo-cap-mb",
        type=float,
        default=None,
        metavar="MB",
        help="photo folder cap; oldest pruned (DICETOWER_PHOTO_CAP_MB; default 512)",
    )
    p.add_argument(
        "--accept-broken-log",
        action="store_true",
        help="start even if the roll log does not verify (its problems are recorded in the log)",
    )
    p.add_argument(
        "--teach",
        type=Path,
        default=None,
        metavar="DIR",
        help="a teach folder to name on /teach (DICETOWER_TEACH_DIR; docs/teach.md)",
    )
    rng = p.add_argument_group("RNG dice instead of a tower")
    rng.add_argument("--rng", action="store_true", help="roll with the RNG (no photos)")
    rng.add_argument("--seed", default=None, help="seed the RNG (tests and demos)")
    rng.add_argument(
        "--throw-time",
        type=float,
        default=0.0,
        help="seconds each RNG throw takes, as a tower's would (demos)",
    )
    add_tower_arguments(p, default=None, throws=False)  # photos go in the roll log
    button = p.add_argument_group("the tower's start button (a press rolls, as POST /api/rolls does)")
    button.add_argument(
        "--press-roll",
        action="append",
        default=[],
        metavar="EXPR",
        help="what the first presses roll, in order (repeatable); then the config's [roll] default",
    )
    button.add_argument(
        "--autopress", action="store_true", help="mock pins only: press the button by itself once serving"
    )
    button.add_argument(
        "--presses", type=int, metavar="N", help="with --autopress: how many presses (default 1)"
    )
    add_mqtt_arguments(p, tower=True)
    p.set_defaults(func=run)


def _announce(token: str, data_dir: Path) -> None:
    from ...rules.errors import printable

    print(
        f"dicetower: created the API token (stored 0600 in {printable(str(data_dir / 'api-token'))};"
        " shown only now):\n"
        f"  {token}\n  send it as: Authorization: Bearer <token>",
        file=sys.stderr,
        flush=True,
    )


def _cors_origins(args: argparse.Namespace, file_cfg: Any) -> tuple[str, ...]:
    """The browser origins answered with CORS headers: ``--cors-origin``, else ``DICETOWER_CORS_ORIGINS``,
    else the config file's ``[server] cors_origins``."""
    from ..web.cors import parse_origins

    if args.cors_origin:
        return parse_origins(args.cors_origin)
    if _env("CORS_ORIGINS", ""):
        return parse_origins([_env("CORS_ORIGINS", "")])
    return tuple(file_cfg.server.cors_origins) if file_cfg is not None else ()


def _config_file(args: argparse.Namespace, cfg: Any) -> Any:
    """The config file's sections: the tower's config, or with ``--rng`` the ``--config`` named (or None)."""
    if cfg is not None:
        return cfg
    if args.config:
        from ..config import load_config

        return load_config(args.config)
    return None


def _press_plan(args: argparse.Namespace) -> Any:
    """What the button's presses roll, checked now: a bad ``--press-roll`` fails before anything opens."""
    from ...rules.errors import DiceError
    from ...rules.notation import parse
    from ..rolls.button import MAX_AUTOPRESSES, PressPlan

    count = 1 if args.presses is None else args.presses
    if not 0 <= count <= MAX_AUTOPRESSES:
        raise ValueError(f"--presses must be between 0 and {MAX_AUTOPRESSES}, got {count}")
    for expression in args.press_roll:
        try:
            parse(expression)
        except DiceError as exc:
            raise ValueError(f"--press-roll {expression[:40]!r}: {exc}") from None
    return PressPlan(queued=tuple(args.press_roll), autopress=count if args.autopress else 0)


def run(args: argparse.Namespace) -> int:
    from ...rules.errors import printable
    from ..notify import Notifier
    from ..photo_cap import photo_cap_bytes
    from ..rolllog import check_log, default_data_dir
    from ..rolls.rolling import DiceSupply, RandomSupply
    from ..rolls.tower_supply import TowerSupply
    from ..server import listen
    from ..server.app import ServerConfig, create_app
    from ..server.clients import TrustedProxies
    from .tower import tower_config

    host = args.host or _env("HOST", "127.0.0.1")
    port = args.port if args.port is not None else int(_env("PORT", "8080"))
    data_dir = args.data or default_data_dir()
    rate = args.rate if args.rate is not None else float(_env("RATE", "2"))
    proxies = args.trusted_proxy if args.trusted_proxy is not None else _env("TRUSTED_PROXIES", "").split(",")
    trusted = TrustedProxies(proxies)  # checked now: a mistyped proxy fails before the server starts
    tls = listen.tls_files(args.tls_cert, args.tls_key)  # checked now, as the proxies are
    photo_cap = photo_cap_bytes(args.photo_cap_mb)
    teach_dir = args.teach or (Path(_env("TEACH_DIR", "")) if _env("TEACH_DIR", "") else None)
    if teach_dir is not None:
        from ...vision.taught.naming import load_teach

        load_teach(teach_dir)  # checked now: a bad teach.json fails before the server starts
    if args.rng and args.tower:
        raise ValueError("give --rng or --tower, not both")
    if args.presses is not None and not args.autopress:
        raise ValueError("--presses goes with --autopress")
    presses = None
    if args.rng:
        if args.autopress or args.press_roll:
            raise ValueError("--autopress and --press-roll need a tower's button: give --tower, not --rng")
        seed = args.seed

        def open_supply() -> DiceSupply:
            return RandomSupply(seed, throw_time=args.throw_time)

        what = "RNG dice"
        cfg = None
    else:
        if args.seed is not None or args.throw_time:
            raise ValueError("--seed and --throw-time go with --rng (the sim tower takes --sim-seed)")
        args.tower = args.tower or "sim"
        cfg = tower_config(args)  # validated now: a bad config fails before the server starts

        def open_supply() -> DiceSupply:
            return TowerSupply.open(cfg)

        what = f"the {args.tower} tower ({cfg.camera.backend} camera, {cfg.dice.describe()})"
        if args.autopress and cfg.pins.factory != "mock":
            raise ValueError(
                '--autopress works with mock pins only (--tower sim, or [pins] factory = "mock")'
            )
        presses = _press_plan(args)
    file_cfg = _config_file(args, cfg)
    origins = _cors_origins(args, file_cfg)  # checked now, before anything opens
    mqtt = mqtt_settings(args, file_cfg.mqtt if file_cfg is not None else None)
    check = check_log(data_dir, accept_broken=args.accept_broken_log)  # refused here, before anything opens
    for problem in check.problems:
        print(f"dicetower: warning: starting on a broken roll log: {problem}", file=sys.stderr)
    config = ServerConfig(
        data_dir=data_dir,
        host=host,
        port=port,
        require_token=True if args.require_token else None,
        rate_per_second=rate,
        rate_burst=args.burst,
        photo_cap_bytes=photo_cap,
        max_waiting=max(1, min(args.max_queue, 10_000)),
        supply_factory=open_supply,
        announce_token=_announce,
        teach_dir=teach_dir,
        trusted_proxies=tuple(str(n) for n in trusted.networks),
        cors_origins=origins,
        allowed_hosts=allowed_hosts(args.allowed_host, file_cfg),
        accept_broken_log=args.accept_broken_log,
        log_check=check,
        mqtt=mqtt,
        presses=presses,
    )
    scheme = "https" if tls else "http"

    def announce(bound: int) -> None:
        print(
            f"dicetower: serving on {scheme}://{printable(host)}:{bound} (overlay /overlay, "
            f"fairness /fairness, API /openapi.json{', naming /teach' if teach_dir else ''}); "
            f"{printable(what)};"
            f" roll log in {printable(str(data_dir))}"
            + (f"; publishing to {printable(mqtt.url_safe)} as {printable(mqtt.tower_name)}" if mqtt else ""),
            file=sys.stderr,
            flush=True,
        )

    with Notifier() as notifier:
        config.notifier = notifier
        app = create_app(config)
        # binds first: a busy port says so, and "serving" is said only once it serves
        listen.serve(app, host, port, announce=announce, tls=tls)
    return 0
