"""Packaging cannot silently break: build the wheel, check it holds what runs, run from it.

The wheel holds the runtime (rules, vision's reading path, firmware) and the shipped models,
nothing else: no training code, no model that is not shipped. The synthetic-dice renderer
ships because the simulated tower's camera draws with it.
A developer's editable install still imports the training code from the checkout.
"""

from __future__ import annotations

import importlib.util
import shutil
import site as sitepackages
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: every model file the wheel ships; any other model file in it is an error
SHIPPED_MODELS = frozenset(
    {
        "dicetower/vision/models/d6_reader.onnx",
        "dicetower/vision/models/d6_reader.json",
        "dicetower/vision/models/d6_familiar.npz",
        "dicetower/vision/models/detector.onnx",
        "dicetower/vision/models/detector.json",
        "dicetower/vision/models/numeral_reader.onnx",
        "dicetower/vision/models/numeral_reader.json",
        "dicetower/vision/models/glyph_reader.onnx",
        "dicetower/vision/models/glyph_reader.json",
    }
)
#: folders the repository keeps out of the wheel (setup.py's NOT_INSTALLED)
LEFT_OUT = ("dicetower/vision/training/", "dicetower/firmware/loopback/")
MODEL_SUFFIXES = (".onnx", ".json", ".pt", ".pth", ".npz")


def _clean_copy(dest: Path) -> Path:
    """The checkout's files (tracked, and untracked but not ignored) without build outputs.

    setuptools reuses ``build/lib``, so a wheel built in a used checkout can carry files a
    packaging change has since left out; a copy builds as a fresh clone does.
    """
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = REPO / rel
        if src.is_file():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = _clean_copy(tmp_path_factory.mktemp("source"))
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
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (whl,) = out.glob("dicetower-*.whl")
    return whl


@pytest.fixture(scope="module")
def site(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    zipfile.ZipFile(wheel).extractall(folder)
    return folder


def _package_files(wheel: Path) -> list[str]:
    return [n for n in zipfile.ZipFile(wheel).namelist() if not n.startswith("dicetower-")]


@pytest.mark.slow
def test_wheel_has_only_the_dicetower_namespace(wheel: Path) -> None:
    names = _package_files(wheel)
    assert {n.split("/")[0] for n in names} == {"dicetower"}
    for part in ("rules", "vision", "firmware"):
        assert f"dicetower/{part}/__init__.py" in names


@pytest.mark.slow
def test_wheel_holds_no_training_code(wheel: Path) -> None:
    names = _package_files(wheel)
    assert [n for n in names if n.startswith(LEFT_OUT)] == []
    assert not any("training" in n.split("/") for n in names)
    # the runtime is there: the reader, the rules and the CLI
    runtime = (
        "vision/reader.py",
        "vision/detector.py",
        "vision/synth/render.py",
        "rules/notation/parser.py",
        "firmware/cli/roll.py",
        "firmware/tower.py",
    )
    for module in runtime:
        assert f"dicetower/{module}" in names


@pytest.mark.slow
def test_wheel_ships_exactly_the_shipped_models(wheel: Path) -> None:
    models = {n for n in _package_files(wheel) if n.endswith(MODEL_SUFFIXES)}
    assert models == SHIPPED_MODELS


@pytest.mark.slow
def test_wheel_size(wheel: Path, record_property: pytest.RecordProperty) -> None:
    size = wheel.stat().st_size
    record_property("wheel_bytes", size)
    print(f"\n{wheel.name}: {size:,} bytes ({size / 2**20:.2f} MiB)")
    # the eight shipped model files are about 4.0 MiB; much more means something else got in
    assert size < 4.5 * 2**20


def _run_from(site: Path, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``code`` in an isolated interpreter that finds ``dicetower`` in ``site`` only.

    ``-S`` skips the ``.pth`` files, so an editable install of this checkout (a finder that
    maps ``dicetower.*`` onto the repository) cannot answer for what the wheel lacks; the
    dependencies come from this interpreter's site-packages, put on the path by hand.
    """
    paths = [str(site), *sitepackages.getsitepackages()]
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", f"import sys; sys.path[:0] = {paths!r}\n{code}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.slow
def test_import_and_run_from_the_built_wheel(site: Path, tmp_path: Path) -> None:
    code = (
        "import dicetower.rules, dicetower.vision, dicetower.firmware\n"
        "from dicetower.firmware.cli import main\n"
        "print(dicetower.rules.__file__)\n"
        "assert main(['roll', '4d6kh3', '--faces', '1,4,5,6']) == 0\n"
    )
    proc = _run_from(site, code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(str(site))
    assert lines[1].endswith("= 15")


@pytest.mark.slow
def test_the_shipped_models_load_from_the_wheel(site: Path, tmp_path: Path) -> None:
    code = (
        "from dicetower.vision.reader import FrameReader\n"
        "import numpy as np\n"
        "reading = FrameReader().read(np.zeros((240, 320, 3), np.uint8))\n"
        "print(len(reading.dice))\n"
    )
    proc = _run_from(site, code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0"]  # an empty black frame holds no dice


@pytest.mark.slow
def test_training_code_is_not_importable_from_the_wheel(site: Path, tmp_path: Path) -> None:
    proc = _run_from(site, "import dicetower.vision.training", tmp_path)
    assert proc.returncode != 0
    assert "ModuleNotFoundError" in proc.stderr


def test_an_editable_install_still_imports_the_training_code() -> None:
    import dicetower.vision

    if not Path(dicetower.vision.__file__).resolve().is_relative_to(REPO):
        pytest.skip("dicetower is installed from a wheel here, not from this checkout")
    for name in ("dicetower.vision.training",):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        assert Path(spec.origin).resolve().is_relative_to(REPO)


@pytest.mark.slow
def test_the_simulated_tower_rolls_from_the_wheel(site: Path, tmp_path: Path) -> None:
    code = (
        "from dicetower.firmware.cli import main\n"
        f"raise SystemExit(main(['roll', '2d6', '--tower', 'sim', '--save', {str(tmp_path / 'rolls')!r}]))\n"
    )
    proc = _run_from(site, code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert list((tmp_path / "rolls").rglob("*.jpg")), proc.stdout
