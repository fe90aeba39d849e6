"""``python3 foundry/build.py`` makes the zip Foundry installs; module.json declares what Foundry reads."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_module_json_declares_what_foundry_reads() -> None:
    manifest = json.loads((REPO / "foundry" / "module.json").read_text(encoding="utf-8"))
    assert manifest["id"] == "dicetower"
    assert manifest["title"] and manifest["version"]
    assert int(manifest["compatibility"]["minimum"]) >= 12
    languages = [lang["path"] for lang in manifest["languages"]]
    for entry in manifest["esmodules"] + manifest["styles"] + languages:
        assert (REPO / "foundry" / entry).is_file(), entry


def test_build_writes_an_installable_zip(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "foundry/build.py", "--out", str(tmp_path), "--base-url", "https://example.org/dt/"],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    with zipfile.ZipFile(tmp_path / "dicetower-foundry.zip") as archive:
        names = set(archive.namelist())
        inside = json.loads(archive.read("module.json"))
    assert "module.json" in names and "scripts/main.mjs" in names and "lang/en.json" in names
    assert not any(name.startswith("test/") or name.endswith(".py") for name in names), names
    assert inside["manifest"] == "https://example.org/dt/module.json"
    assert inside["download"] == "https://example.org/dt/dicetower-foundry.zip"
    assert json.loads((tmp_path / "module.json").read_text(encoding="utf-8")) == inside
