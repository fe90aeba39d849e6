"""``dicetower check`` and ``dicetower odds``: options built from each check's parameters."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from dicetower.firmware.cli import main
from dicetower.rules.systems import get_system, system_names


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_check_with_typed_in_faces(capsys):
    code, out, err = run(["check", "wizard-quest", "pool", "--level", "5", "--faces", "6,4,1,3,6"], capsys)
    assert code == 0 and err == ""
    line, prob = out.splitlines()
    assert line.startswith("wizard-quest pool level=5: 6 4 1 3 6 → 2 aces, 11 successes, 1 one — success")
    assert prob == "P(success) = 193/216 ≈ 89.35%"


def test_check_json_is_the_result_schema(capsys):
    code, out, _ = run(["check", "wizard-quest", "hit", "--hb", "2", "--faces", "12", "--json"], capsys)
    data = json.loads(out)
    assert code == 0
    assert data["schema"] == "dicetower.check/1"
    assert (data["system"], data["check"], data["outcome"], data["total"]) == (
        "wizard-quest",
        "hit",
        "hit",
        12 + 2,
    )
    assert data["dice"][0]["face"] == 12 and data["dice"][0]["die"] == "d20"
    assert data["odds"]["probabilities"]["hit"] == pytest.approx(float(Fraction(6, 20)))


def test_seeded_checks_repeat(capsys):
    argv = [
        "check",
        "wizard-quest",
        "opposed",
        "--level",
        "6",
        "--opponent-level",
        "4",
        "--seed",
        "7",
        "--json",
    ]
    first = run(argv, capsys)[1]
    assert run(argv, capsys)[1] == first


def test_bool_and_choice_params(capsys):
    code, out, _ = run(["check", "wizard-quest", "hit", "--called", "no", "--faces", "17"], capsys)
    assert code == 0 and "— hit" in out
    code, out, _ = run(["check", "wizard-quest", "hit", "--death_blow", "npc", "--faces", "17"], capsys)
    assert "— death-blow" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check", "wizard-quest", "pool"], "missing parameter level"),
        (["check", "wizard-quest", "pool", "--level", "many"], "level must be int"),
        (["check", "wizard-quest", "pool", "--level", "3", "--faces", "6,4"], "not enough faces"),
        (["check", "wizard-quest", "pool", "--level", "1", "--faces", "6,4"], "left over"),
        (["check", "wizard-quest", "pool", "--level", "1", "--faces", "7"], "not on a d6"),
        (["check", "wizard-quest", "pool", "--level", "1", "--faces", "x"], "whole numbers"),
        (["check", "wizard-quest", "pool", "--level", "1", "--faces", "6", "--seed", "1"], "not both"),
        (["check", "wizard-quest", "nope"], "has no check"),
        (["check", "nope", "pool"], "unknown system"),
        (["check"], "which system"),
        (["check", "wizard-quest"], "which check"),
    ],
)
def test_errors_are_one_line_exit_1(argv, message, capsys):
    code, out, err = run(argv, capsys)
    assert code == 1 and out == ""
    assert err.startswith("dicetower: error: ") and message in err
    assert err.count("\n") == 1


def test_check_help_lists_systems_and_checks(capsys):
    code, out, _ = run(["check", "--help"], capsys)
    assert code == 0
    for name in system_names():
        assert name in out
    assert "pool" in out and "opposed" in out


def test_system_help_lists_params_and_examples(capsys):
    code, out, _ = run(["check", "wizard-quest", "--help"], capsys)
    assert code == 0
    for check in get_system("wizard-quest").checks.values():
        assert f"  {check.name} - " in out
        assert check.example in out
        for p in check.params:
            assert f"--{p.name}" in out


def test_check_help_shows_its_options(capsys):
    code, out, _ = run(["check", "wizard-quest", "attack", "--help"], capsys)
    assert code == 0
    assert "--opponent_level" in out and "--faces" in out and "examples:" in out


@pytest.mark.parametrize("system", system_names())
def test_every_system_runs_through_the_generic_cli(system, capsys):
    s = get_system(system)
    for check in s.checks.values():
        argv = ["check", system, check.name, "--seed", "1", "--json"]
        for k, v in check.sample_params[0].items():
            argv += [f"--{k}", str(v).lower() if isinstance(v, bool) else str(v)]
        code, out, err = run(argv, capsys)
        assert code == 0, err
        assert json.loads(out)["outcome"] in check.outcomes


def test_odds_table(capsys):
    code, out, _ = run(["odds", "wizard-quest", "pool", "--level", "5"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "wizard-quest pool level=5"
    assert any(line.split()[:3] == ["botch", "10.24%", "199/1944"] for line in lines)


def test_odds_json_exact_strings(capsys):
    code, out, _ = run(["odds", "wizard-quest", "save", "--bonus", "3", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["schema"] == "dicetower.odds/1"
    assert data["exact"] == {"success": "13/20", "failure": "7/20"}
    assert sum(Fraction(v) for v in data["exact"].values()) == 1


def test_odds_of_large_pool_is_quick_and_summarised(capsys):
    code, out, _ = run(
        ["odds", "wizard-quest", "opposed", "--level", "100", "--opponent_level", "100"], capsys
    )
    assert code == 0 and "digit denominator" in out


def test_odds_help_has_no_roll_options(capsys):
    code, out, _ = run(["odds", "wizard-quest", "pool", "--help"], capsys)
    assert code == 0 and "--level INT" in out and "--faces FACES" not in out


def test_rerolled_dice_are_struck_through(capsys):
    argv = ["check", "wizard-quest", "pool", "--level", "2", "--focus", "1", "--faces", "1,2,6,4"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert out.splitlines()[0].startswith(
        "wizard-quest pool level=2 focus=1: ~~1~~ ~~2~~ 6 4 → 1 ace, 6 successes"
    )


def test_probability_near_certain_keeps_its_digits(capsys):
    code, out, _ = run(["check", "wizard-quest", "pool", "--level", "100", "--seed", "3"], capsys)
    assert code == 0 and "(P≈99.9994451%)" in out and "exact: 77-digit denominator" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check", "wizard-quest", "pool", "--level", "100000"], "at most 300"),
        (["check", "wcrpg", "xd10", "--x", "1000"], "at most 100"),
        (["check", "wcrpg", "check", "--dc", "5", "--faces", "35,2"], "not on a d10t"),
        (["check", "runic-flux", "skill", "--level", "9", "--difficulty", "5"], "at most 4"),
        (["check", "duelling", "health", "--current-health", "nan"], "finite"),
        (
            [
                "check",
                "runic-flux",
                "skill",
                "--level",
                "0",
                "--difficulty",
                "5",
                "--faces",
                ",".join(["6"] * 102),
            ],
            "exploded more than",
        ),
    ],
)
def test_bad_input_is_one_line_never_a_usage_dump(argv, message, capsys):
    code, out, err = run(argv, capsys)
    assert code == 1 and out == ""
    assert err.startswith("dicetower: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check", "wizard-quest", "pool", "--lvl", "5"], "unknown option(s) --lvl"),
        (["check", "wizard-quest", "pool", "--level"], "argument --level: expected one argument"),
        (
            ["odds", "wizard-quest", "hit", "--death_blow"],
            "argument --death_blow/--death-blow: expected one argument",
        ),
        (["odds", "wizard-quest", "pool", "--level", "3", "--faces", "1,2,3"], "unknown option(s) --faces"),
    ],
)
def test_a_check_line_that_does_not_parse_is_a_usage_error_naming_the_checks_help(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == ""
    error, hint = err.splitlines()  # one line, then where to read on: never a usage dump
    assert error.startswith(f"dicetower: error: {' '.join(argv[:3])}: ") and message in error
    assert hint == f"  see 'dicetower {' '.join(argv[:3])} --help' for the options and examples"


def test_near_certain_odds_are_not_printed_as_one(capsys):
    # 300d6 fails or botches with P ~ 2.5e-14: "1.000000e+00" and "100.%" both claimed certainty.
    code, out, _ = run(["odds", "wizard-quest", "pool", "--level", "300"], capsys)
    success = next(line for line in out.splitlines() if line.startswith("success"))
    assert code == 0 and "1.000000e+00" not in success and "100.%" not in success
    assert "1 − 2.495102e-14" in success and "100% − 2.50e-12%" in success


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["check", "wcrpg", "xd10", "--x", "3", "--faces", "2,5,0"], "2 + 5 + 0 = 7"),
        (["check", "wcrpg", "xd5", "--x", "2", "--faces", "7,0"], "4 + 5 = 9"),
        (["check", "duelling", "health", "--half", "--current-health", "74", "--faces", "3"], "74 → 75.5"),
        (
            ["check", "runic-flux", "skill", "--level", "1", "--difficulty", "4", "--faces", "2,1,6"],
            "wild −6",
        ),
    ],
)
def test_text_lines_show_the_rule_book_arithmetic(argv, expected, capsys):
    code, out, _ = run(argv, capsys)
    assert code == 0 and expected in out.splitlines()[0]


@pytest.mark.parametrize("command", ["check", "odds"])
@pytest.mark.parametrize("system", system_names())
def test_every_check_help_prints(system, command, capsys):
    # argparse %-formats option help: "health % before" once crashed `check duelling d6-damage --help`.
    for check in get_system(system).checks.values():
        code, out, err = run([command, system, check.name, "--help"], capsys)
        assert code == 0 and err == "", err
        assert all(f"--{p.name}" in out for p in check.params)
        percent = [p.help for p in check.params if "%" in p.help]
        flat = " ".join(out.split())  # argparse wraps to the terminal width
        assert all(" ".join(h.split("%")[0].split()) + " %" in flat for h in percent)  # shown, not eaten
