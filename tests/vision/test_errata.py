"""Errata files: labels a person corrected, applied by eval only when asked (vision/eval/errata.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dicetower.vision.eval.errata import ErrataError, apply_errata, errata_for, read_errata
from dicetower.vision.eval.evaluate import select_entries
from dicetower.vision.manifest import LabelledDie, write_manifest_line

REPO_ERRATA = Path(__file__).resolve().parents[2] / "vision" / "training" / "errata"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "hand-d6"
    folder.mkdir()
    with (folder / "manifest.jsonl").open("w") as fh:
        write_manifest_line(
            fh, "images/a.jpg", [LabelledDie("d6", 2, (0, 0, 9, 9)), LabelledDie("d6", 5, (20, 0, 9, 9))]
        )
        write_manifest_line(
            fh, "images/b.jpg", [LabelledDie("d20", 7, (0, 0, 9, 9)), LabelledDie("d6", 6, (20, 0, 9, 9))]
        )
    return folder


def _errata(path: Path, *lines: dict) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_correction_changes_that_die_only(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    fix = {"image": "images/a.jpg", "die": 0, "label": 2, "face": 3, "why": "three pips"}
    errata = read_errata(_errata(tmp_path / "hand-d6.jsonl", fix))
    fixed = apply_errata(select_entries(folder), errata)
    assert [d.face for d in fixed[0].dice] == [3, 5]
    assert [d.face for d in fixed[1].dice] == [7, 6]
    assert errata_for(folder, tmp_path) == errata  # found by the folder's name


def test_die_counts_the_manifest_not_the_kinds_filter(tmp_path: Path) -> None:
    """b.jpg's d6 is its second die; with --kinds d6 it is the first one left, but still die 1."""
    folder = _folder(tmp_path)
    fix = {"image": "images/b.jpg", "die": 1, "label": 6, "face": None, "why": "leaning on the wall"}
    errata = read_errata(_errata(tmp_path / "e.jsonl", fix))
    (b,) = [e for e in select_entries(folder, kinds=["d6"], errata=errata) if e.relpath == "images/b.jpg"]
    assert b.dice == (LabelledDie("d6", 6, (20.0, 0.0, 9.0, 9.0), cocked=True),)


@pytest.mark.parametrize(
    ("fix", "says"),
    [
        ({"image": "images/a.jpg", "die": 0, "label": 4, "face": 3, "why": "x"}, "labelled 2, not 4"),
        ({"image": "images/a.jpg", "die": 9, "label": 2, "face": 3, "why": "x"}, "not there"),
        ({"image": "images/zz.jpg", "die": 0, "label": 2, "face": 3, "why": "x"}, "no photo images/zz.jpg"),
    ],
)
def test_a_correction_for_another_manifest_is_refused(tmp_path: Path, fix: dict, says: str) -> None:
    folder = _folder(tmp_path)
    errata = read_errata(_errata(tmp_path / "e.jsonl", fix))
    with pytest.raises(ErrataError, match=says):
        select_entries(folder, errata=errata)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"image": "images/a.jpg", "die": 0, "label": 2, "face": 2, "why": "x"}', "nothing to correct"),
        ('{"image": "images/a.jpg", "die": 0, "label": 2, "face": 3, "why": " "}', "why must say"),
        ('{"image": "images/a.jpg", "die": true, "label": 2, "face": 3, "why": "x"}', "die must be"),
        ('{"image": "images/a.jpg", "die": 0, "label": 2, "face": "3", "why": "x"}', "face must be"),
        (
            '{"image": "images/a.jpg", "die": 0, "label": 2, "face": 3, "why": "x", "by": "me"}',
            "unknown keys",
        ),
        ('{"image": "images/a.jpg", "die": 0, "label": 2, "face": 3}', "why"),
        ("[1, 2]", "expected a JSON object"),
        ("{not json", "bad errata line"),
    ],
)
def test_a_bad_line_is_refused_with_its_place(tmp_path: Path, line: str, says: str) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(
        '\n{"image": "images/b.jpg", "die": 1, "label": 6, "face": 1, "why": "one pip"}\n' + line + "\n"
    )
    with pytest.raises(ErrataError, match=says) as err:
        read_errata(path)
    assert "e.jsonl:3" in str(err.value)


def test_two_corrections_of_one_die_are_refused(tmp_path: Path) -> None:
    fix = {"image": "images/a.jpg", "die": 0, "label": 2, "face": 3, "why": "x"}
    with pytest.raises(ErrataError, match="a second correction"):
        read_errata(_errata(tmp_path / "e.jsonl", fix, {**fix, "face": 4}))


def test_no_errata_file_for_a_folder_is_no_corrections(tmp_path: Path) -> None:
    assert errata_for(_folder(tmp_path), tmp_path / "elsewhere") == []


def test_the_repo_errata_are_well_formed_and_each_says_why() -> None:
    files = sorted(REPO_ERRATA.glob("*.jsonl"))
    assert files, "vision/training/errata holds the corrections of the shared datasets"
    for path in files:
        for e in read_errata(path):
            assert len(e.why) > 20  # a person's description, not a token


def test_the_repo_errata_still_match_the_shared_datasets() -> None:
    """A correction that no longer matches its manifest is refused, so this fails loudly if one changes."""
    root = Path(__file__).resolve().parents[3] / "shared" / "datasets"
    if not root.is_dir():
        pytest.skip("../shared/datasets is absent")
    for path in sorted(REPO_ERRATA.glob("*.jsonl")):
        folder = root / path.stem
        if not folder.is_dir():
            continue
        errata = read_errata(path)
        entries = select_entries(folder, errata=errata)
        fixed = {(e.relpath, i): d.face for e in entries for i, d in enumerate(e.dice)}
        assert all(fixed[(e.image, e.die)] == e.face for e in errata if e.face is not None)
