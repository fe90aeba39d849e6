"""Is each physical die fair? Statistics over the roll log, per die identity.

For each die (``"red d6"``, ``"white d6 #2"`` on the tower; ``"rng d6"`` for the RNG's
dice, one per kind and role): counts per face, the χ² goodness-of-fit p-value against a
uniform die, Wilson 95 % intervals per face, how many rolls a test would need to catch a
given bias, the lag-1 serial correlation of successive throws, how many re-throws it
caused, and its reject rates per face (:mod:`.rejects`): the retry rule never looks at a
face, but a reader that rejects some faces more than others tilts the counts toward the
faces it reads best (``docs/tower.md``).

A re-throw after a tap is charged to the face the tapped die was read with *after* the tap
(``faces[].rethrows``): a leaning die has no face until it falls, and a die the reader could
not read on one face is read, if at all, on another, so that is never the face it was
rejected on. The face of a rejected die is known only from the camera's truth; the reject
rates say what can be said without it.

The statistics are :mod:`.stats` (re-exported here).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...rules.faces import printed_faces
from .rejects import RejectCounter, RejectStats, face_rate_text, reject_lines
from .stats import (
    chi2_isf,
    chi2_sf,
    gammaincc,
    ncx2_sf,
    rolls_to_detect,
    serial_correlation,
    wilson_interval,
)

__all__ = [
    "DieStats",
    "chi2_isf",
    "chi2_sf",
    "die_stats",
    "fairness_from_rows",
    "format_fairness",
    "gammaincc",
    "histogram_svg",
    "ncx2_sf",
    "reading_line",
    "rolls_to_detect",
    "serial_correlation",
    "wilson_interval",
]


@dataclass
class DieStats:
    """The fairness figures of one die."""

    die: str
    kind: str
    faces: tuple[int, ...]
    counts: dict[int, int]
    rethrows: dict[int, int] = field(default_factory=dict)
    sequence: list[int] = field(default_factory=list, repr=False)
    #: re-throws this die caused whose face is not known (a re-shake moved the dice)
    rethrows_no_face: int = 0
    bias: float = 0.1
    #: what the log's readings say of its rejects; None where none were kept (the RNG's dice)
    rejects: RejectStats | None = None
    #: how its faces came: read by the tower, typed by the table (an unreadable die asked), and of
    #: the tower's, how many the table corrected (the tower measuring itself on its owner's dice)
    by_tower: int = 0
    by_table: int = 0
    corrected: int = 0

    @property
    def n(self) -> int:
        return sum(self.counts.values())

    @property
    def chi2(self) -> float | None:
        n, k = self.n, len(self.faces)
        if n == 0:
            return None
        expected = n / k
        return sum((self.counts.get(f, 0) - expected) ** 2 / expected for f in self.faces)

    @property
    def p_value(self) -> float | None:
        x = self.chi2
        return None if x is None else chi2_sf(x, len(self.faces) - 1)

    def intervals(self) -> dict[int, tuple[float, float]]:
        return {f: wilson_interval(self.counts.get(f, 0), self.n) for f in self.faces}

    @property
    def rolls_needed(self) -> int | None:
        k = len(self.faces)
        return rolls_to_detect(k, self.bias) if k >= 2 and self.bias < k - 1 else None

    def to_json(self) -> dict[str, Any]:
        r, rp = serial_correlation(self.sequence)
        ivals = self.intervals()
        n = self.n
        return {
            "die": self.die,
            "kind": self.kind,
            "rolls": n,
            "faces": [
                {
                    "face": f,
                    "count": self.counts.get(f, 0),
                    "share": self.counts.get(f, 0) / n if n else None,
                    "ci95": list(ivals[f]),
                    "rethrows": self.rethrows.get(f, 0),
                }
                for f in self.faces
            ],
            "expected_share": 1 / len(self.faces),
            "chi2": self.chi2,
            "p_value": self.p_value,
            "bias": self.bias,
            "rolls_to_detect_bias": self.rolls_needed,
            "serial_correlation": r,
            "serial_p_value": rp,
            "rethrows": sum(self.rethrows.values()) + self.rethrows_no_face,
            "rethrows_face_unknown": self.rethrows_no_face,
            "rejects": None if self.rejects is None else self.rejects.to_json(),
            "reading": self.reading_json(),
        }

    def reading_json(self) -> dict[str, Any]:
        """Read by the tower, typed by the table, corrected: the corrected share of the tower's
        reads with its Wilson 95 % interval (the tower's live error rate on these dice)."""
        lo, hi = wilson_interval(self.corrected, self.by_tower) if self.by_tower else (0.0, 1.0)
        return {
            "read_by_tower": self.by_tower,
            "typed_by_table": self.by_table,
            "corrected": self.corrected,
            "corrected_share": self.corrected / self.by_tower if self.by_tower else None,
            "corrected_ci95": [lo, hi],
        }


#: kinds with too many faces for a per-face table (a d1000) are left out of fairness
MAX_FAIRNESS_FACES = 120


def die_stats(die: str, kind: str, sequence: Iterable[int], bias: float = 0.1) -> DieStats:
    """Stats of one die from its faces in throw order."""
    faces = tuple(printed_faces(kind))
    seq = list(sequence)
    counts: dict[int, int] = defaultdict(int)
    for f in seq:
        counts[f] += 1
    return DieStats(die, kind, faces, dict(counts), sequence=seq, bias=bias)


def fairness_from_rows(rows: Iterable[Mapping[str, Any]], bias: float = 0.1) -> list[DieStats]:
    """Fairness per die identity over log rows (oldest first).

    Faces and re-throws count from finished rows only; reject rates from failed rows too,
    since a die that stays unreadable is what fails a roll.
    """
    seqs: dict[tuple[str, str], list[int]] = defaultdict(list)
    rethrows: dict[tuple[str, str], dict[int, int]] = defaultdict(lambda: defaultdict(int))
    kinds: dict[str, str] = {}
    unattributed: dict[tuple[str, str], int] = defaultdict(int)
    origin: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    rejects = RejectCounter()
    for row in rows:
        rejects.add(row)
        if row.get("status") != "done":
            continue
        final = {c.get("slot"): c.get("new") for c in row.get("corrections") or ()}
        for d in row.get("dice") or ():
            kind = d.get("kind")
            face = final.get(d.get("slot"), d.get("face"))  # the face the table settled on
            if not isinstance(kind, str) or not isinstance(face, int):
                continue
            try:
                if len(printed_faces(kind)) > MAX_FAIRNESS_FACES:
                    continue
            except ValueError:
                continue
            die = str(d.get("die") or f"rng {kind}")
            seqs[(die, kind)].append(face)
            kinds[die] = kind
            how = origin[(die, kind)]
            how["table" if d.get("by_table") else "tower"] += 1
            how["corrected"] += d.get("slot") in final and not d.get("by_table")
        for throw in row.get("throws") or ():
            for retry in throw.get("retries") or ():
                for d in retry.get("dice") or ():  # the unreadable dice that caused it
                    die = d.get("die")
                    if die not in kinds:
                        continue
                    if isinstance(d.get("face"), int):
                        rethrows[(die, kinds[die])][d["face"]] += 1
                    else:  # after a re-shake the die is known but not the face it was on
                        unattributed[(die, kinds[die])] += 1
    out = []
    for (die, kind), seq in sorted(seqs.items(), key=lambda item: _natural(item[0][0])):
        stats = die_stats(die, kind, seq, bias)
        stats.rethrows = dict(rethrows.get((die, kind), {}))
        stats.rethrows_no_face = unattributed.get((die, kind), 0)
        stats.rejects = rejects.stats(die, kind, stats.faces)
        how = origin[(die, kind)]
        stats.by_tower, stats.by_table, stats.corrected = how["tower"], how["table"], how["corrected"]
        out.append(stats)
    return out


def _natural(text: str) -> list[Any]:
    """Sort key that puts ``d6`` before ``d20`` and ``#2`` before ``#10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _fmt_p(p: float | None) -> str:
    if p is None:
        return "-"
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}"


def reading_line(reading: Mapping[str, Any]) -> str:
    """Where a die's counted faces came from, and how often the table corrected the tower."""
    lo, hi = reading["corrected_ci95"]
    share = reading["corrected_share"]
    rate = "-" if share is None else f"{100 * share:.1f} % (95 % CI {100 * lo:.1f}-{100 * hi:.1f} %)"
    return (
        f"  faces read by the tower {reading['read_by_tower']}, typed by the table"
        f" {reading['typed_by_table']}; corrected by the table {reading['corrected']}: {rate}"
    )


def format_fairness(stats: Sequence[DieStats]) -> str:
    """The terminal table of ``dicetower fairness``."""
    if not stats:
        return "no finished rolls in the log yet"
    lines = []
    for s in stats:
        j = s.to_json()
        r = j["serial_correlation"]
        lines.append(
            f"{s.die} ({s.kind}): {j['rolls']} rolls, chi2 {j['chi2']:.2f} p={_fmt_p(j['p_value'])}, "
            f"serial r={'-' if r is None else f'{r:+.3f}'} p={_fmt_p(j['serial_p_value'])}, "
            f"re-throws {j['rethrows']}"
        )
        lines.append(reading_line(j["reading"]))
        rej = j["rejects"]
        if rej is not None:
            lines.extend(reject_lines(rej, len(s.faces)))
        if len(s.faces) <= 20:
            for k, f in enumerate(j["faces"]):
                lo, hi = f["ci95"]
                share = "-" if f["share"] is None else f"{100 * f['share']:5.1f} %"
                bar = "#" * round(40 * (f["share"] or 0))
                rate = "" if rej is None else f"  rej {face_rate_text(rej['faces'][k], rej['basis']):>8}"
                lines.append(
                    f"  {f['face']:>3}: {f['count']:>6}  {share}  95 % CI {100 * lo:5.1f}-{100 * hi:5.1f} %"
                    f"{rate}  {bar}"
                )
        if j["rolls_to_detect_bias"]:
            needed, n = j["rolls_to_detect_bias"], j["rolls"]
            lines.append(
                f"  a face {100 * s.bias:.0f} % more likely than fair is caught (80 % power, 5 % level) "
                f"after about {needed} rolls in all: {min(n, needed)} so far"
                + (f", {needed - n} to go" if n < needed else "")
            )
    return "\n".join(lines)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def histogram_svg(stats: DieStats, *, width: int = 420, height: int = 200) -> str:
    """An SVG bar chart of one die's face shares with Wilson intervals and the fair line."""
    j = stats.to_json()
    faces = j["faces"]
    pad_l, pad_r, pad_t, pad_b = 40, 10, 12, 28
    plot_w, plot_h = width - pad_l - pad_r, height - pad_t - pad_b
    top = max([0.0, j["expected_share"] * 1.6, *(f["ci95"][1] for f in faces if j["rolls"])])
    step = next((s for s in (0.01, 0.02, 0.05, 0.1, 0.2, 0.25) if top / s <= 5), 0.25)
    top = min(1.0, math.ceil(top / step - 1e-9) * step) or 1.0
    bw = plot_w / max(1, len(faces))

    def y(v: float) -> float:
        return pad_t + plot_h * (1 - v / top)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="hist" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{_esc(stats.die)} face counts">',
        f'<line class="axis" x1="{pad_l}" y1="{pad_t + plot_h}" x2="{width - pad_r}" y2="{pad_t + plot_h}"/>',
    ]
    for tick in [i * step for i in range(round(top / step) + 1)]:
        if tick:
            parts.append(
                f'<line class="grid" x1="{pad_l}" y1="{y(tick):.1f}" '
                f'x2="{width - pad_r}" y2="{y(tick):.1f}"/>'
            )
        parts.append(
            f'<text class="tick" x="{pad_l - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">'
            f"{100 * tick:.0f}%</text>"
        )
    for i, f in enumerate(faces):
        x = pad_l + i * bw
        share = f["share"] or 0.0
        parts.append(
            f'<rect class="bar" x="{x + bw * 0.15:.1f}" y="{y(share):.1f}" width="{bw * 0.7:.1f}" '
            f'height="{pad_t + plot_h - y(share):.1f}"><title>face {f["face"]}: {f["count"]}</title></rect>'
        )
        if j["rolls"]:
            lo, hi = f["ci95"]
            cx = x + bw / 2
            parts.append(f'<line class="ci" x1="{cx:.1f}" y1="{y(lo):.1f}" x2="{cx:.1f}" y2="{y(hi):.1f}"/>')
        if len(faces) <= 24 or i % max(1, len(faces) // 12) == 0:
            parts.append(
                f'<text class="face" x="{x + bw / 2:.1f}" y="{height - 10}" text-anchor="middle">'
                f"{f['face']}</text>"
            )
    fair = y(j["expected_share"])
    parts.append(f'<line class="fair" x1="{pad_l}" y1="{fair:.1f}" x2="{width - pad_r}" y2="{fair:.1f}"/>')
    parts.append("</svg>")
    return "".join(parts)
