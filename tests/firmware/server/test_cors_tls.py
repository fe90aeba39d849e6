"""CORS for the origins named (a Foundry world) and nothing else, and https with --tls-cert/--tls-key."""

from __future__ import annotations

import dataclasses
import json
import shutil
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.firmware.web.cors import MAX_ORIGINS, parse_origins
from mqtt_broker import free_port, make_certificates
from starlette.testclient import TestClient

FOUNDRY = "https://foundry.example.org:30000"


def test_origins_are_checked_and_normalised() -> None:
    got = parse_origins(["https://Foundry.Example.org:30000/", "http://192.168.1.5:30000,http://[::1]:8"])
    assert got == ("https://foundry.example.org:30000", "http://192.168.1.5:30000", "http://[::1]:8")
    assert parse_origins(["", " , "]) == ()
    for bad, said in [
        ("foundry.example.org", "scheme and host"),
        ("*", "scheme and host"),
        ("ftp://foundry.example.org", "scheme and host"),
        ("https://foundry.example.org/game", "no path"),
        ("https://foundry.example.org:99999", "CORS origin"),
    ]:
        with pytest.raises(ValueError, match=said):
            parse_origins([bad])
    with pytest.raises(ValueError, match="at most"):
        parse_origins([f"http://h{i}.example" for i in range(MAX_ORIGINS + 1)])


def _preflight(client: TestClient, origin: str) -> object:
    return client.options(
        "/api/rolls",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )


def test_a_named_origin_is_answered_and_any_other_is_not(config: ServerConfig) -> None:
    app = create_app(dataclasses.replace(config, cors_origins=(FOUNDRY,), require_token=True))
    with TestClient(app) as client:
        ok = _preflight(client, FOUNDRY)
        assert ok.status_code == 200
        assert ok.headers["access-control-allow-origin"] == FOUNDRY
        assert "authorization" in ok.headers["access-control-allow-headers"].lower()
        assert "access-control-allow-credentials" not in ok.headers
        other = _preflight(client, "https://evil.example")
        assert other.status_code == 400 and "access-control-allow-origin" not in other.headers
        # the module reads refusals too: a 401 carries the header for the named origin only
        refused = client.post("/api/rolls", json={"notation": "1d6"}, headers={"Origin": FOUNDRY})
        assert refused.status_code == 401
        assert refused.headers["access-control-allow-origin"] == FOUNDRY
        assert (
            "access-control-allow-origin"
            not in client.get("/api/tower", headers={"Origin": "https://evil.example"}).headers
        )


def test_cors_is_off_unless_origins_are_named(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        assert "access-control-allow-origin" not in _preflight(client, FOUNDRY).headers
        assert (
            "access-control-allow-origin" not in client.get("/api/tower", headers={"Origin": FOUNDRY}).headers
        )


def _serve(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    command = [
        sys.executable,
        "-m",
        "dicetower.firmware.cli",
        "serve",
        "--rng",
        "--data",
        str(tmp_path / "d"),
    ]
    return subprocess.Popen([*command, *extra], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)


def test_tls_serves_https_with_the_certificate_given(tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl CLI is not installed")
    certs = make_certificates(tmp_path / "certs")
    port = free_port()
    server = _serve(
        tmp_path, "--port", str(port), "--tls-cert", str(certs.fullchain), "--tls-key", str(certs.key)
    )
    try:
        context = ssl.create_default_context(cafile=str(certs.ca))
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(
                    f"https://127.0.0.1:{port}/api/tower", context=context, timeout=5
                ) as r:
                    assert json.load(r)["roller"]["source"] == "rng"
                break
            except OSError:
                assert server.poll() is None, server.stderr.read()
                assert time.monotonic() < deadline, "the https server did not answer"
                time.sleep(0.2)
        with pytest.raises(OSError):  # plain http on the TLS port is not served
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/tower", timeout=5)
    finally:
        server.terminate()
        _, err = server.communicate(timeout=20)
    assert f"serving on https://127.0.0.1:{port}" in err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--tls-cert", "cert.pem"], "go together"),
        (["--tls-cert", "missing.pem", "--tls-key", "missing.key"], "no such file"),
        (["--tls-cert", "junk.pem", "--tls-key", "junk.pem"], "not a certificate"),
        (["--cors-origin", "foundry.example.org"], "scheme and host"),
    ],
)
def test_bad_tls_and_cors_options_are_one_line_before_anything_starts(
    tmp_path: Path, args: list[str], said: str
) -> None:
    (tmp_path / "junk.pem").write_text("not a certificate\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "dicetower.firmware.cli",
            "serve",
            "--rng",
            "--data",
            str(tmp_path / "d"),
            *args,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 1
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("dicetower: error:") and said in line
    assert "serving" not in run.stderr


def test_the_config_files_server_table_names_the_origins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dicetower.firmware.cli import main
    from dicetower.firmware.server import listen
    from starlette.middleware.cors import CORSMiddleware

    apps: list = []
    monkeypatch.setattr(listen, "serve", lambda app, host, port, announce, **_: apps.append(app))
    monkeypatch.delenv("DICETOWER_CORS_ORIGINS", raising=False)
    config = tmp_path / "tower.toml"
    config.write_text(f'[server]\ncors_origins = ["{FOUNDRY}/"]\n', encoding="utf-8")
    assert main(["serve", "--tower", "sim", "--config", str(config), "--data", str(tmp_path / "d")]) == 0
    [cors] = [m for m in apps[0].user_middleware if m.cls is CORSMiddleware]
    assert cors.kwargs["allow_origins"] == [FOUNDRY]
    config.write_text('[server]\ncors_origins = ["foundry.example.org"]\n', encoding="utf-8")
    assert main(["tower", "config", "--check", str(config)]) == 1
    assert "cors_origins" in capsys.readouterr().err
