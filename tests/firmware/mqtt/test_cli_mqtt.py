"""``--mqtt`` on the command line: bad values are refused with one line before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from dicetower.firmware.cli import main


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["hub"], "dicetower hub needs --mqtt URL"),
        (["hub", "--mqtt", "http://x"], "--mqtt: must be a broker URL"),
        (["hub", "--mqtt", "mqtt://x", "--backfill", "-1"], "--backfill must be 0..1000 "),
        (
            ["serve", "--rng", "--mqtt", "mqtt://x", "--mqtt-tower", "a/b"],
            "--mqtt-tower: must be 1-64 letters",
        ),
        (
            ["serve", "--rng", "--mqtt", "mqtt://x", "--mqtt-prefix", "a/#"],
            "--mqtt-prefix: must be 1-4 topic levels",
        ),
        (["serve", "--rng", "--mqtt", "mqtt://x", "--mqtt-password-file", "/nonexistent"], "cannot be read"),
    ],
)
def test_bad_mqtt_options_are_one_line_errors(
    argv: list[str],
    said: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DICETOWER_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DICETOWER_MQTT_URL", raising=False)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("dicetower: error:") and said in err, err
    assert not list(tmp_path.iterdir())  # nothing was created
