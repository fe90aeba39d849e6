"""The ``/fairness`` page: one card per die with an SVG histogram and its figures.

Plain server-rendered HTML with the SVG inline and the styles in ``static/fairness.css``,
so the page works under the server's CSP (no inline script or style) and in any browser.
Each tower die's card says how often the reader rejected it and, per face, at what rate:
from the camera's truth where it is known, else the apparent rate, marked ``~``, with the
sentence saying what it assumes (``rejects.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from .fairness import DieStats, histogram_svg
from .rejects import face_rate_text

__all__ = ["fairness_html"]


def _p(p: float | None) -> str:
    if p is None:
        return "–"
    return f"{p:.3f}" if p >= 1e-3 else f"{p:.1e}"


def _share(share: float | None) -> str:
    return "–" if share is None else f"{100 * share:.1f} %"


def _num(x: float | None, spec: str) -> str:
    return "–" if x is None else format(x, spec)


def _verdict(p: float | None, n: int, needed: int | None, bias: float) -> tuple[str, str]:
    """The card's headline; the rolls it names are the same figure as "rolls" and "to catch" below."""
    if p is None or n == 0:
        return "none", "no rolls yet"
    if p < 0.001:
        return "bad", "looks biased (p < 0.001)"
    if needed and n < needed:
        return "few", (
            f"no sign of bias yet, after {n} of the {needed} rolls a test needs to catch a face "
            f"{100 * bias:.0f} % more likely than fair ({needed - n} to go)"
        )
    return "ok", "no sign of bias"


def _to_catch(needed: int | None, n: int) -> str:
    if not needed:
        return "–"
    return f"{needed} rolls in all ({min(n, needed)} so far)"


def _reject_cell(face: Mapping[str, Any], basis: str) -> str:
    if basis == "truth" and face["looks"]:
        return f"{face['rejected']}/{face['looks']} ({_share(face['rate'])})"
    return face_rate_text(face, basis).replace("-", "–")


def _rejects_dl(rej: Mapping[str, Any] | None, faces: int) -> str:
    if rej is None:
        return ""
    if not rej["looks"]:
        return "<dt>rejected</dt><dd>no reading after a shake yet</dd>"
    out = (
        f"<dt>rejected</dt><dd>{rej['rejected']} of {rej['looks']} looks after a shake "
        f"({_share(rej['reject_rate'])}): a look is each landing, read or not, so a die thrown "
        "again has more looks than rolls</dd>"
        f"<dt>throws retried</dt><dd>{rej['throws_retried']} of {rej['throws']}</dd>"
    )
    if rej["basis"] == "truth":
        out += (
            f"<dt>reject ratio</dt><dd>{_num(rej['ratio'], '.2f')} "
            f"(depends on the face: p = {_p(rej['face_p'])})</dd>"
        )
        if rej["predicted_tilt"] is not None:
            see = rej["rolls_to_see_tilt"]
            out += (
                f"<dt>tilt predicted</dt><dd>{100 * rej['predicted_tilt']:.2f} points off 1/{faces}"
                + (f"; {see} rolls to see it" if see else "")
                + "</dd>"
            )
    return out


def _rejects_note(rej: Mapping[str, Any] | None) -> str:
    if rej is None or not rej["looks"]:
        return ""
    if rej["basis"] == "truth":
        return (
            '<p class="note">Rejected per face: looks after a shake at a die showing that face, '
            "from the camera's truth.</p>"
        )
    return (
        '<p class="note">Rejected per face (~) is apparent: without the camera\'s truth the face of a '
        "rejected die is unseen, so these are the reader's reject rates only if the die is fair.</p>"
    )


def _reading_dl(reading: dict[str, Any]) -> str:
    """Read by the tower, typed by the table, and the tower's corrected share with its interval."""
    share = reading["corrected_share"]
    lo, hi = reading["corrected_ci95"]
    rate = "–" if share is None else f"{100 * share:.1f} % (95 % CI {100 * lo:.1f}–{100 * hi:.1f} %)"
    return (
        f'<dt>read by the tower</dt><dd class="by-tower">{reading["read_by_tower"]}</dd>'
        f'<dt>typed by the table</dt><dd class="by-table">{reading["typed_by_table"]}</dd>'
        f'<dt>corrected by the table</dt><dd class="corrected">{reading["corrected"]}: {rate}</dd>'
    )


def fairness_html(stats: Sequence[DieStats]) -> str:
    cards = []
    for s in stats:
        j = s.to_json()
        cls, verdict = _verdict(j["p_value"], j["rolls"], j["rolls_to_detect_bias"], s.bias)
        r = j["serial_correlation"]
        rej = j["rejects"]
        rows = (
            "".join(
                f"<tr><td>{f['face']}</td><td>{f['count']}</td>"
                f"<td>{_share(f['share'])}</td>"
                f"<td>{100 * f['ci95'][0]:.1f}–{100 * f['ci95'][1]:.1f} %</td>"
                + ("" if rej is None else f"<td>{_reject_cell(rej['faces'][k], rej['basis'])}</td>")
                + "</tr>"
                for k, f in enumerate(j["faces"])
            )
            if len(s.faces) <= 20
            else ""
        )
        table = (
            "<table><thead><tr><th>face</th><th>count</th><th>share</th><th>95 % CI</th>"
            + ("" if rej is None else "<th>rejected</th>")
            + f"</tr></thead><tbody>{rows}</tbody></table>{_rejects_note(rej)}"
            if rows
            else ""
        )
        if table and len(s.faces) > 8:  # a long table folds away; the histogram shows the shape
            table = f"<details><summary>per-face table</summary>{table}</details>"
        cards.append(
            f'<section class="die {cls}"><h2>{escape(s.die)} <small>{escape(s.kind)}</small></h2>'
            f'<p class="verdict">{escape(verdict)}</p>'
            f"{histogram_svg(s)}"
            "<dl>"
            f"<dt>rolls</dt><dd>{j['rolls']} faces read and counted</dd>"
            f"<dt>χ²</dt><dd>{_num(j['chi2'], '.2f')} "
            f"(p = {_p(j['p_value'])})</dd>"
            f"<dt>serial r</dt><dd>{_num(r, '+.3f')} (p = {_p(j['serial_p_value'])})</dd>"
            f"<dt>re-throws</dt><dd>{j['rethrows']}</dd>"
            f"{_reading_dl(j['reading'])}"
            f"{_rejects_dl(rej, len(s.faces))}"
            f"<dt>to catch +{100 * s.bias:.0f} %</dt>"
            f"<dd>{_to_catch(j['rolls_to_detect_bias'], j['rolls'])}</dd>"
            "</dl>"
            f"{table}</section>"
        )
    body = "".join(cards) or '<p class="empty">No finished rolls in the log yet.</p>'
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>dicetower fairness</title>"
        '<link rel="stylesheet" href="/static/fairness.css"></head><body>'
        "<header><h1>Are the dice fair?</h1>"
        "<p>Counts per face of every die in the roll log, the χ² test against a fair die, "
        "Wilson 95 % intervals (whiskers), the fair share (dashed line), the serial correlation "
        "of successive throws, and how often the reader rejected each die and each face: a die "
        "re-thrown until it is read comes up more often on the faces read best.</p></header>"
        f'<main class="dice">{body}</main></body></html>'
    )
