"""Wizard Quest (rule book ``000_a89a2c88a552c45e.txt``): d6 pools with Aces, d20 hit dice, d100 resistance.

``SYSTEM`` is what the registry loads. The interpretations of unclear rule-book lines are quoted
and justified in ``docs/rules/wizard-quest.md``.
"""

from __future__ import annotations

from ..base import System
from .checks import build_checks, percentile
from .costs import (
    aggravated_turns,
    botch_damage,
    damage,
    focus_stamina_cost,
    magic_stamina_cost,
    physical_stamina_cost,
    raw_damage,
)
from .pools import PoolRead, is_botch, opposed_weights, pool_weights, read_pool
from .scales import HitRead, hit_bonus, read_4d6, read_d20

__all__ = [
    "SYSTEM",
    "HitRead",
    "PoolRead",
    "aggravated_turns",
    "botch_damage",
    "damage",
    "focus_stamina_cost",
    "hit_bonus",
    "is_botch",
    "magic_stamina_cost",
    "opposed_weights",
    "percentile",
    "physical_stamina_cost",
    "pool_weights",
    "raw_damage",
    "read_4d6",
    "read_d20",
    "read_pool",
]

SYSTEM = System(
    name="wizard-quest",
    title="Wizard Quest Campaign Dice",
    rule_book="000_a89a2c88a552c45e.txt",
    checks=build_checks(),
)
