"""TowerSource answers the rules core: notation, a rule system, follow-ups, and a clear error on failure."""

from __future__ import annotations

from typing import Any

import pytest
from dicetower.firmware.source import TowerSource, TowerSourceError
from dicetower.rules.errors import SourceUnavailableError
from dicetower.rules.notation import Roller
from dicetower.rules.source import Role
from dicetower.rules.systems import get_system, run_check


def test_notation_on_the_tower_uses_the_faces_it_read(sim_tower: Any) -> None:
    tower = sim_tower(seed=21)
    source = TowerSource(tower)
    result = Roller(cache_size=0).roll("4d6kh3+2", source)
    (record,) = source.records
    faces = [a.face for a in record.answers]
    assert result.total == sum(sorted(faces)[1:]) + 2
    assert [a.slot for a in source.answers] == [0, 1, 2, 3]


def test_runic_flux_wild_die_follow_ups_are_read_from_the_red_die(sim_tower: Any) -> None:
    tower = sim_tower(seed=22)
    system = get_system("runic-flux")
    follow_ups = 0
    for _ in range(8):
        source = TowerSource(tower)
        run_check(system, "skill", source, {"level": 3, "stat": 2, "difficulty": 12})
        wild = [a for a in source.answers if a.role == Role.WILD.value]
        assert wild and all(a.colour == "red" for a in wild)
        for record in source.records[1:]:  # an exploding or botched wild die: a new throw for that die only
            assert [s["role"] for s in record.slots] == ["wild"] and len(record.answers) == 1
            follow_ups += 1
    assert follow_ups  # seed 22 explodes or botches at least once in eight checks


def test_a_failed_throw_reaches_the_rules_as_source_unavailable(sim_tower: Any) -> None:
    tower = sim_tower(seed=23)
    tower.camera.inject("leaves_tray")
    seen = []
    source = TowerSource(tower, on_throw=seen.append)
    with pytest.raises(SourceUnavailableError) as exc:
        Roller(cache_size=0).roll("3d6", source)
    assert isinstance(exc.value, TowerSourceError)
    assert exc.value.reason == "die_missing" and exc.value.record is seen[0]
    with pytest.raises(TowerSourceError, match=r"cannot roll this.*d20"):
        Roller(cache_size=0).roll("1d20", TowerSource(tower))
