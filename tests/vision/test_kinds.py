"""The one table of die kinds, and every part that must agree with it."""

from __future__ import annotations

import numpy as np
import pytest
from dicetower.vision.faces.glyphs import INK_KINDS, TEXTS, text_face
from dicetower.vision.faces.numerals import KIND_OF_CLASS, class_names
from dicetower.vision.kinds import (
    BODY_KINDS,
    DRAWN_KINDS,
    KINDS,
    LABELS,
    NUMERAL_KINDS,
    NUMERAL_NETWORK_KINDS,
    Reader,
    faces_of,
    kind,
    label_of,
    readable_labels,
)
from dicetower.vision.manifest import DIE_FACES
from dicetower.vision.synth.solids import face_values, shape_of


def test_the_table_holds_every_kind_the_datasets_label() -> None:
    assert set(LABELS) == {"d4", "d6", "d8", "d10", "d10t", "d12", "d20"}
    assert label_of("d6n") == "d6" and label_of("d20") == "d20"
    assert faces_of("d10t") == tuple(range(0, 100, 10))


def test_an_unknown_kind_is_named_with_the_known_ones() -> None:
    with pytest.raises(KeyError, match="known: d4, d6, d6n"):
        kind("d7")


def test_the_manifest_takes_its_labels_from_the_table() -> None:
    assert {label: frozenset(faces_of(label)) for label in LABELS} == DIE_FACES


def test_the_numeral_network_classes_follow_the_table() -> None:
    assert NUMERAL_NETWORK_KINDS == ("d6", "d6n", "d10", "d10t", "d20")
    names = class_names()
    assert names[0] == "none" and len(names) == 1 + sum(len(KINDS[k].faces) for k in NUMERAL_NETWORK_KINDS)
    assert set(KIND_OF_CLASS[1:]) == set(NUMERAL_NETWORK_KINDS)


@pytest.mark.parametrize("name", sorted(NUMERAL_KINDS))
def test_every_numeral_kind_prints_only_numerals_the_upright_reader_knows(name: str) -> None:
    row = KINDS[name]
    for face in row.faces:
        assert row.text(face) in TEXTS
        assert text_face(name, row.text(face)) == face


def test_the_tens_die_prints_two_digits() -> None:
    assert KINDS["d10t"].text(0) == "00" and KINDS["d10t"].face_of_text("7") is None
    assert text_face("d20", "00") is None and text_face("nope", "1") is None


def test_readers_and_locators_read_their_sets_from_the_table() -> None:
    assert frozenset({"d6n", "d10", "d10t", "d20"}) == NUMERAL_KINDS == INK_KINDS
    assert frozenset({"d10", "d10t", "d20"}) == BODY_KINDS
    assert readable_labels() == ("d6", "d10", "d10t", "d20")
    assert all(KINDS[k].reader is Reader.NONE for k in ("d4", "d8", "d12"))


@pytest.mark.parametrize("name", DRAWN_KINDS)
def test_every_drawn_kind_has_a_solid_whose_faces_are_the_kinds(name: str) -> None:
    solid = shape_of(name)
    values = face_values(name, np.random.default_rng(3))
    assert len(values) == solid.n_faces
    assert set(values.tolist()) == set(KINDS[name].faces)


def test_the_sim_camera_and_the_config_name_kinds_as_labels() -> None:
    from dicetower.firmware.cameras.sim import DRAWN_LABELS

    assert DRAWN_LABELS == ("d6", "d10", "d10t", "d20")
