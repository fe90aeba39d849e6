"""The throw folder of the tower commands is held under the photo cap the server's roll log has."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.photo_cap import PHOTO_CAP_ENV, oldest_over_cap, photo_cap_bytes, prune_throw_folder


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Throws saved without ``--save`` go under XDG_STATE_HOME; keep them in the test's folder."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv(PHOTO_CAP_ENV, raising=False)
    return tmp_path / "state" / "dicetower" / "throws"


def _stems(folder: Path) -> set[str]:
    return {p.stem for p in folder.iterdir()}


def _shown_photos(out: str) -> list[Path]:
    return [Path(p) for p in re.findall(r"photo: (\S+\.jpg)", out)]


def test_the_throw_folder_is_kept_under_the_cap_and_the_shown_roll_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save = tmp_path / "throws"

    def roll(*cap: str) -> list[Path]:
        argv = ["roll", "4d6kh3", "--tower", "sim", "--sim-seed", "2", "--save", str(save), *cap]
        assert main(argv) == 0
        return _shown_photos(capsys.readouterr().out)

    shown = roll() + roll()  # the default cap (512 MB) keeps both
    assert len(shown) == 2 and _stems(save) == {p.stem for p in shown}
    one_throw = sum(f.stat().st_size for f in save.iterdir()) / 2
    cap_mb = f"{2.5 * one_throw / 2**20:.6f}"  # room for two throws, not three
    for _ in range(2):
        shown += roll("--photo-cap-mb", cap_mb)
    kept = _stems(save)
    assert sum(f.stat().st_size for f in save.iterdir()) <= float(cap_mb) * 2**20
    assert kept == {p.stem for p in shown[-2:]}  # the newest two; the oldest went first
    assert all(p.exists() and p.with_suffix(".json").exists() for p in shown[-2:])


def test_the_environment_sets_the_cap_for_roll_and_a_cap_of_0_keeps_the_roll_shown(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(PHOTO_CAP_ENV, "0")
    for seed in ("1", "2", "3"):
        assert main(["roll", "2d6", "--tower", "sim", "--sim-seed", seed]) == 0
        (photo,) = _shown_photos(capsys.readouterr().out)
        assert photo.parent == state_dir and photo.exists()
        assert _stems(state_dir) == {photo.stem}  # only the roll just shown


@pytest.mark.parametrize(("env", "flag"), [("-1", None), ("lots", None), ("nan", None), (None, "-2")])
def test_a_bad_cap_is_one_error_before_anything_is_thrown(
    env: str | None, flag: str | None, state_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    if env is not None:
        monkeypatch.setenv(PHOTO_CAP_ENV, env)
    argv = ["roll", "1d6", "--tower", "sim", *(["--photo-cap-mb", flag] if flag else [])]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dicetower: error: ")
    assert ("--photo-cap-mb" if flag else PHOTO_CAP_ENV) in err
    assert not state_dir.exists()


def test_pruning_takes_the_oldest_throws_whole_and_nothing_else(tmp_path: Path) -> None:
    for n in range(5):
        for ext, size in ((".jpg", 900), (".json", 100)):
            path = tmp_path / f"throw-2026-{n}{ext}"
            path.write_bytes(b"x" * size)
            os.utime(path, (1_000_000 + n, 1_000_000 + n))
    (tmp_path / "notes.txt").write_bytes(b"y" * 5000)  # not a throw: never touched, never counted
    removed = prune_throw_folder(tmp_path, 3000, keep={"throw-2026-0"})  # 5000 bytes of throws
    assert sorted(p.name for p in removed) == [
        "throw-2026-1.jpg", "throw-2026-1.json", "throw-2026-2.jpg", "throw-2026-2.json"
    ]  # fmt: skip
    assert _stems(tmp_path) == {"notes", "throw-2026-0", "throw-2026-3", "throw-2026-4"}
    assert prune_throw_folder(tmp_path / "absent", 0) == []


def test_the_plan_is_the_one_the_roll_log_prunes_by() -> None:
    files = [("a", 10), ("b", 10), ("c", 10)]
    assert oldest_over_cap(files, 30, 30) == []
    assert oldest_over_cap(files, 30, 15) == ["a", "b"]
    assert oldest_over_cap(iter(files), 30, 0) == ["a", "b", "c"]
    assert photo_cap_bytes(1.5) == 3 * 2**19
