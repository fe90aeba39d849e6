"""Packaging cannot silently break: build the wheel, import from it, check what it ships."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (whl,) = out.glob("dicetower-*.whl")
    return whl


@pytest.mark.slow
def test_wheel_has_only_the_dicetower_namespace(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.startswith("dicetower-")}
    assert top == {"dicetower"}, top
    for part in ("rules", "vision", "firmware"):
        assert f"dicetower/{part}/__init__.py" in names
    # models ship inside the wheel, not beside it
    onnx_in_repo = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "vision").rglob("*.onnx"))
    for rel in onnx_in_repo:
        assert "dicetower/" + rel in names


@pytest.mark.slow
def test_import_from_the_built_wheel(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import dicetower.rules, dicetower.vision, dicetower.firmware, dicetower.firmware.cli as c;"
        "print(dicetower.rules.__file__); print(c.main(['--help']) if False else 'ok')"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); {code}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert str(site) in proc.stdout.splitlines()[0]
