"""The shipped systemd units (the tower's and the hub's) and sysusers file: checked by systemd's own tools,
and read for what they promise.

``systemd-analyze verify`` refuses a unit whose ``ExecStart=`` program does not exist, and the shipped units
point at the Pi's install path (``/opt/dicetower/.venv/bin/dicetower``). The tests verify a copy whose
``ExecStart=`` points at this environment's own ``dicetower`` script, and whose ``EnvironmentFile=`` (the
hub's broker URL, a file the installer writes) is a file beside it; nothing else in the copy changes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SYSTEMD_DIR = Path(__file__).resolve().parents[2] / "systemd"
UNIT = SYSTEMD_DIR / "dicetower.service"
HUB_UNIT = SYSTEMD_DIR / "dicetower-hub.service"
UNITS = (UNIT, HUB_UNIT)
HUB_ENV = "/etc/dicetower/hub.env"
SYSUSERS = SYSTEMD_DIR / "dicetower.sysusers.conf"
INSTALLED_PROGRAM = "/opt/dicetower/.venv/bin/dicetower"

#: systemd-analyze's exposure score, 0 (locked down) to 10 (unprotected). The tower's unit scores 1.8 on
#: systemd 252; a change that opens either sandbox past this fails here instead of going unnoticed.
MAX_EXPOSURE = 2.5


def unit_entries(text: str) -> dict[str, list[tuple[str, str]]]:
    """``{section: [(key, value), ...]}``, keeping repeated keys in order as systemd does."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        assert current is not None, f"line {number} sits before any [section]: {raw!r}"
        assert "=" in line, f"line {number} is not KEY=value: {raw!r}"
        key, value = line.split("=", 1)
        current.append((key.strip(), value.strip()))
    return sections


def values(section: list[tuple[str, str]], key: str) -> list[str]:
    return [value for name, value in section if name == key]


def one(section: list[tuple[str, str]], key: str) -> str:
    found = values(section, key)
    assert len(found) == 1, f"{key}= appears {len(found)} times"
    return found[0]


@pytest.fixture(scope="module")
def service() -> list[tuple[str, str]]:
    return unit_entries(UNIT.read_text(encoding="utf-8"))["Service"]


@pytest.fixture(scope="module")
def hub_service() -> list[tuple[str, str]]:
    return unit_entries(HUB_UNIT.read_text(encoding="utf-8"))["Service"]


def local_program() -> Path:
    program = Path(sys.executable).parent / "dicetower"
    if not program.exists():
        pytest.skip(f"no dicetower script next to {sys.executable}: install the package with pip -e first")
    return program


def local_copy(tmp_path: Path, unit: Path = UNIT) -> Path:
    text = unit.read_text(encoding="utf-8")
    assert text.count(INSTALLED_PROGRAM) == 1, "ExecStart= is the one place the install path appears"
    text = text.replace(INSTALLED_PROGRAM, str(local_program()))
    if f"EnvironmentFile={HUB_ENV}" in text:
        env = tmp_path / "hub.env"
        env.write_text("DICETOWER_MQTT_URL=mqtt://127.0.0.1\n", encoding="utf-8")
        text = text.replace(f"EnvironmentFile={HUB_ENV}", f"EnvironmentFile={env}")
    copy = tmp_path / unit.name
    copy.write_text(text, encoding="utf-8")
    return copy


def systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        pytest.skip("systemd-analyze is not installed (Debian package 'systemd'; .ci/run installs it)")
    return found


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_systemd_analyze_verify_accepts_the_unit_without_a_warning(tmp_path: Path, unit: Path) -> None:
    analyze = systemd_analyze()
    result = subprocess.run(
        [analyze, "verify", str(local_copy(tmp_path, unit))], capture_output=True, text=True, timeout=60
    )
    # verify exits 0 on an unknown key or a bad value and only warns: any output at all is a failure.
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == ""
    assert result.stdout.strip() == ""


def test_verify_catches_a_misspelt_key(tmp_path: Path) -> None:
    """The check above can fail: a one-letter typo in the unit makes systemd-analyze speak."""
    analyze = systemd_analyze()
    copy = local_copy(tmp_path)
    copy.write_text(copy.read_text().replace("NotifyAccess=main", "NotifyAcces=main"), encoding="utf-8")
    result = subprocess.run([analyze, "verify", str(copy)], capture_output=True, text=True, timeout=60)
    assert "NotifyAcces" in result.stderr


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_the_sandbox_exposure_stays_low(tmp_path: Path, unit: Path) -> None:
    analyze = systemd_analyze()
    result = subprocess.run(
        [analyze, "security", "--offline=yes", "--no-pager", str(local_copy(tmp_path, unit))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode != 0 and "offline" in result.stderr:
        pytest.skip(f"this systemd-analyze cannot score a unit file offline: {result.stderr.strip()}")
    match = re.search(r"Overall exposure level for \S+: ([0-9.]+)", result.stdout)
    assert match, result.stdout[-2000:] + result.stderr
    assert float(match.group(1)) <= MAX_EXPOSURE, result.stdout


def test_the_unit_runs_the_tower_as_a_notify_service_with_a_watchdog(service: list[tuple[str, str]]) -> None:
    assert one(service, "Type") == "notify"
    assert one(service, "NotifyAccess") == "main"
    assert one(service, "Restart") == "on-failure"
    watchdog = one(service, "WatchdogSec")
    assert re.fullmatch(r"\d+s", watchdog), watchdog
    assert 10 <= int(watchdog[:-1]) <= 120
    # The default SIGABRT skips the program's handler, the one that turns the solenoid off.
    assert one(service, "WatchdogSignal") == "SIGTERM"
    # The one service: pins, button, camera, API, overlay, log and MQTT in one process.
    command = one(service, "ExecStart").split()
    assert command[:4] == [INSTALLED_PROGRAM, "serve", "--tower", "config"]
    assert command[command.index("--config") + 1] == "/etc/dicetower/config.toml"
    assert command[command.index("--data") + 1] == "/var/lib/dicetower"


def test_the_hub_unit_runs_the_hub_with_no_devices(hub_service: list[tuple[str, str]]) -> None:
    command = one(hub_service, "ExecStart").split()
    assert command[:2] == [INSTALLED_PROGRAM, "hub"]
    assert one(hub_service, "EnvironmentFile") == HUB_ENV  # DICETOWER_MQTT_URL: the broker
    assert one(hub_service, "PrivateDevices") == "yes"
    assert values(hub_service, "DeviceAllow") == []
    assert one(hub_service, "NoNewPrivileges") == "yes"
    assert one(hub_service, "Restart") == "on-failure"


def test_the_hub_unit_caps_the_hubs_log(hub_service: list[tuple[str, str]]) -> None:
    """The cap comes from Environment=, so /etc/dicetower/hub.env (read after it) can change it."""
    from dicetower.firmware.hub.store import LOG_CAP_ENV, log_cap_bytes

    assert "--log-cap-mb" not in one(hub_service, "ExecStart").split()  # a flag would outrank hub.env
    env = dict(value.split("=", 1) for value in values(hub_service, "Environment"))
    assert log_cap_bytes(float(env[LOG_CAP_ENV])) == 512 * 2**20


def test_the_unit_runs_as_its_own_user_with_gpio_and_camera_access(service: list[tuple[str, str]]) -> None:
    assert one(service, "User") == "dicetower"
    assert set(one(service, "SupplementaryGroups").split()) == {"gpio", "video"}
    assert one(service, "DevicePolicy") == "closed"
    allowed = {value.split()[0] for value in values(service, "DeviceAllow")}
    assert {"char-gpiochip", "char-video4linux", "char-media", "char-dma_heap"} <= allowed
    assert all(value.split()[1] == "rw" for value in values(service, "DeviceAllow"))
    # PrivateDevices= would hide /dev/gpiochip* and the camera however DeviceAllow= reads.
    assert values(service, "PrivateDevices") in ([], ["no"])
    assert one(service, "CapabilityBoundingSet") == ""
    assert one(service, "NoNewPrivileges") == "yes"
    assert one(service, "ProtectSystem") == "strict"
    assert one(service, "StateDirectory") == "dicetower"
    assert one(service, "ConfigurationDirectory") == "dicetower"
    assert set(one(service, "RestrictAddressFamilies").split()) <= {
        "AF_UNIX",
        "AF_INET",
        "AF_INET6",
        "AF_NETLINK",
    }


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_the_command_line_in_exec_start_is_one_the_cli_accepts(unit: Path) -> None:
    from dicetower.firmware import cli

    argv = one(unit_entries(unit.read_text(encoding="utf-8"))["Service"], "ExecStart").split()[1:]
    if argv[0] not in cli.SUBCOMMANDS:
        pytest.skip(f"the 'dicetower {argv[0]}' subcommand is not in this build")
    with pytest.raises(SystemExit) as exit_info:
        cli.main([*argv, "--help"])
    assert exit_info.value.code == 0


def test_sysusers_creates_the_user_in_the_gpio_and_video_groups(tmp_path: Path) -> None:
    sysusers = shutil.which("systemd-sysusers")
    if sysusers is None:
        pytest.skip("systemd-sysusers is not installed (Debian package 'systemd'; .ci/run installs it)")
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "usr/lib/sysusers.d").mkdir(parents=True)
    shutil.copy(SYSUSERS, root / "usr/lib/sysusers.d/dicetower.conf")
    result = subprocess.run([sysusers, f"--root={root}"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    # Only "Creating ..." lines: a parse warning or a conflict fails here.
    assert all(line.startswith("Creating ") for line in result.stderr.splitlines()), result.stderr
    passwd = {line.split(":")[0]: line.split(":") for line in (root / "etc/passwd").read_text().splitlines()}
    groups = {line.split(":")[0]: line.split(":") for line in (root / "etc/group").read_text().splitlines()}
    user = passwd["dicetower"]
    assert user[5] == "/var/lib/dicetower"
    assert user[6].endswith("nologin")
    for group in ("gpio", "video"):
        assert "dicetower" in groups[group][3].split(","), groups[group]
