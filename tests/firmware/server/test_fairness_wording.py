"""The fairness figures say what they count, so that side by side they do not seem to contradict:
the rolls a test needs are one figure (in all, so far, to go), and looks are told apart from rolls."""

from __future__ import annotations

import re
from typing import Any

from dicetower.firmware.server.fairness import fairness_from_rows, format_fairness
from dicetower.firmware.server.fairness_page import fairness_html

FACES = (3, 1, 4, 1, 5, 2, 6, 5, 3, 5)


def _rows(n: int) -> list[dict[str, Any]]:
    """``n`` throws of one white d6, each read at once except every fifth: rejected, shaken again, read."""
    rows = []
    for i in range(n):
        face = FACES[i % len(FACES)]
        attempts = [{"after": "shake", "dice": [{"die": "white d6", "face": face, "truth": face}]}]
        if i % 5 == 0:
            attempts.insert(0, {"after": "shake", "dice": [{"die": "white d6", "face": None, "truth": 6}]})
        rows.append(
            {
                "status": "done",
                "dice": [{"slot": 0, "kind": "d6", "face": face, "die": "white d6", "throw": 0}],
                "throws": [{"index": 0, "retries": [], "attempts": attempts}],
            }
        )
    return rows


def test_the_page_names_one_figure_for_the_rolls_a_test_needs_and_says_what_looks_are() -> None:
    (stats,) = fairness_from_rows(_rows(51))
    j = stats.to_json()
    n, needed, looks = j["rolls"], j["rolls_to_detect_bias"], j["rejects"]["looks"]
    assert (n, looks) == (51, 62) and needed > n
    page = fairness_html([stats])
    assert "more rolls to catch a small one" not in page
    verdict = re.search(r'<p class="verdict">(.*?)</p>', page).group(1)
    assert verdict == (
        f"no sign of bias yet, after {n} of the {needed} rolls a test needs to catch a face 10 % more likely"
        f" than fair ({needed - n} to go)"
    )
    assert f"<dt>to catch +10 %</dt><dd>{needed} rolls in all ({n} so far)</dd>" in page
    assert f"<dt>rolls</dt><dd>{n} faces read and counted</dd>" in page
    assert f"11 of {looks} looks after a shake" in page
    assert "a look is each landing, read or not, so a die thrown again has more looks than rolls" in page


def test_the_cli_says_the_same() -> None:
    (stats,) = fairness_from_rows(_rows(51))
    needed = stats.to_json()["rolls_to_detect_bias"]
    text = format_fairness([stats])
    assert f"after about {needed} rolls in all: 51 so far, {needed - 51} to go" in text
    assert "11 of 62 looks after a shake" in text
    assert "a look is each landing, read or not: a die thrown again has more looks than rolls" in text
    (enough,) = fairness_from_rows(_rows(needed + 10))
    assert f"after about {needed} rolls in all: {needed} so far\n" in format_fairness([enough]) + "\n"
