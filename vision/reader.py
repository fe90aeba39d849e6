"""Read a whole frame: locate -> read -> colour -> face centres -> report.

:func:`open_reader` is the one way to get the product's reader: it loads the models once (the
detector inside :func:`locate_dice`, the face reader here) into a :class:`FrameReader`, which is
reused for every frame. ``dicetower read``, ``eval``, ``calibrate`` and the benchmarks all read
through it; :func:`import_reader` names another :class:`~dicetower.vision.reading.DiceReader`
(the classic baseline, a test's stand-in) for eval to compare.

A numeral die smaller than its kind's imaging budget (:attr:`~.kinds.DieKind.min_px`) is
refused as ``too_small`` once its kind is known (:func:`below_budget`): below it the reader's
answers on real dice turn wrong, and the camera, not the throw, is what to change.

Per located die: ``too_small`` (too few pixels for pips) and ``cut_off`` when the frame edge
clips the box to under :data:`CUT_ASPECT` of a square (most of the die is outside: a half face
can look like another face) are decided before reading. Every other die is read, touching or at
the edge included (the detector splits touching dice into separate boxes, and the model is
trained on crops with neighbours in them); when such a die is then not read confidently, the
reason given is ``touching`` / ``cut_off`` rather than ``low_confidence``, because that is why.
A die read with a face also gets the centre of that face where its pips are found
(``vision.faces.topface``, in the same crops). Boxes and centres are in the given frame's pixels.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from .bodies import body_boxes
from .colour import die_colours
from .detector import DieDetector
from .errors import VisionError
from .faces.glyphs import GlyphModelError, GlyphReader, with_glyph
from .faces.numerals import NumeralReader, with_kind
from .faces.pips import NOT_A_DIE, D6Reader, FaceRead, crop_greys, is_too_small
from .faces.topface import face_centres
from .identity import balance, white_balance_gains
from .kinds import BODY_KINDS, KINDS, NUMERAL_KINDS, Reader
from .locate import CUT_MARGIN, DieCandidate, as_bgr, changed_share, foreground_small, locate_dice, tray_mask
from .reading import DiceReader, DieReading, KindRead, Reading, ReadStatus, UnreadableReason
from .view import FrameView, frame_view

__all__ = [
    "BODY_PART",
    "BODY_SAME_IOU",
    "CUT_ASPECT",
    "NOT_A_DIE_DROP",
    "SOLID_SHARE",
    "FrameReader",
    "LocateFn",
    "ReaderSpecError",
    "below_budget",
    "import_reader",
    "open_reader",
    "read_frame",
]

#: ``locate(frame, reference, tray) -> candidates``
LocateFn = Callable[[np.ndarray, "np.ndarray | None", "np.ndarray | None"], list[DieCandidate]]
#: A box clipped by the frame edge to a shorter/longer side ratio under this is not read.
CUT_ASPECT = 0.6
#: A frame with more dice than this is read for the first this-many only (bounds the work).
MAX_DICE = 200

#: A candidate the face reader calls "not a die" at least this surely is dropped, not reported
#: unreadable: an unreadable die makes the tower throw again, a rubber foot should not. Chosen on
#: the val split (see BENCHMARKS.md); a real die below the bar is still reported unreadable.
NOT_A_DIE_DROP = NOT_A_DIE
#: A candidate whose middle changed this much against the empty tray is something new in it
#: (:meth:`FrameReader.solid`): never dropped as "not a die". A die's middle changes nearly all
#: over (a white die on the dark liner: 0.9 and more); a shadow or a fleck, little of it.
SOLID_SHARE = 0.6
#: A body overlapping a located box by this IoU is that box (the detector found the die).
BODY_SAME_IOU = 0.5
#: A located box inside a body and wider than this share of it is the die itself, not a
#: fragment: the body is that die (and its shadow), left to the detector's box.
BODY_PART = 0.7


def _iou(a: Sequence[float], b: Sequence[float]) -> float:
    ix = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def _holds(box: Sequence[float], point: tuple[float, float]) -> bool:
    return box[0] <= point[0] <= box[0] + box[2] and box[1] <= point[1] <= box[1] + box[3]


#: Reader reasons that a located die's own flags (cut off, touching) explain better.
_UNSURE = frozenset({UnreadableReason.LOW_CONFIDENCE, UnreadableReason.COCKED})


def _pre_reason(c: DieCandidate) -> UnreadableReason | None:
    """A reason not to read the die at all, decided from its box alone."""
    if is_too_small(c.box):
        return UnreadableReason.TOO_SMALL
    w, h = float(c.box[2]), float(c.box[3])
    if c.cut_off and min(w, h) < CUT_ASPECT * max(w, h):
        return UnreadableReason.CUT_OFF
    return None


def below_budget(die: DieReading, kind: str) -> DieReading:
    """``die`` refused as ``too_small`` when it is a numeral ``kind`` (a :data:`~.kinds.KINDS` name)
    narrower than that kind's ``min_px``; otherwise ``die`` as it is.

    Why refuse a face the reader gave: below the budget its answers on real dice turn wrong
    (``bench/imaging_budget.py``: of 156 held-back d20 photos, 9 and 10 read wrong at 48 and
    40 px against 1 at 96), and an unreadable die costs a re-throw where a wrong one costs the
    roll. Why numeral kinds only: the pip reader's answers on small dice stay right or
    unreadable (no wrong read down to 12 px on ``byler-d6``), and it has its own pixel floor.
    """
    row = KINDS.get(kind)
    if row is None or row.reader is not Reader.NUMERALS or not row.min_px:
        return die
    if max(die.box[2], die.box[3]) >= row.min_px:
        return die
    return replace(
        die, face=None, status=ReadStatus.UNREADABLE, reason=UnreadableReason.TOO_SMALL, face_centre=None
    )


def _default_locate(
    frame: np.ndarray, reference: np.ndarray | None, tray: np.ndarray | None
) -> list[DieCandidate]:
    return locate_dice(frame, reference=reference, tray=tray)


class FrameReader:
    """Reads the dice of BGR frames; construct once, call :meth:`read` per frame.

    ``model_dir`` overrides where ``d6_reader.onnx`` / ``.json`` are loaded from;
    ``locate`` replaces the detector (tests and eval with labelled boxes pass their own).
    :func:`open_reader` builds one on the shipped models or on a folder's. Example::

        reader = open_reader()
        reading = reader.read(frame)
        print(reading.faces)
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        locate: LocateFn | None = None,
        numerals: NumeralReader | None = None,
        glyphs: GlyphReader | None = None,
    ) -> None:
        self.faces = D6Reader(model_dir)
        #: Opt-in reader of other kinds (numeral d6, d10, d10t, d20): ``None`` reads pip d6 only.
        self.numerals = numerals
        #: The upright-numeral reader that gives those kinds their faces (:mod:`.glyphs`);
        #: ``None`` leaves the faces to ``numerals`` alone.
        self.glyphs = glyphs
        self._locate = locate or _default_locate
        self.not_a_die_drop = NOT_A_DIE_DROP
        #: Name die colours from crops white-balanced against the empty-tray reference (when one
        #: is given): a warm lamp turns a white die cream and a red one orange, and the rules
        #: tell the wild die by its colour. Off by default: the tray's own colour must be known.
        self.white_balance = False
        #: The tray's BGR colour under neutral light; ``None``: a neutral (grey, black, white) tray.
        self.tray_colour: tuple[int, int, int] | None = None
        #: Refuse numeral dice below their kind's imaging budget (:func:`below_budget`); off only
        #: to measure that budget (``bench/imaging_budget.py``), which is what the reader does without it.
        self.budget = True

    def read(
        self, frame: np.ndarray, reference: np.ndarray | None = None, tray: np.ndarray | None = None
    ) -> Reading:
        """Locate and read every die in ``frame``."""
        frame = as_bgr(frame)
        t0 = time.perf_counter()
        cands = self._locate(frame, reference, tray)[:MAX_DICE]
        if self.numerals is not None:
            cands = self.with_bodies(frame, cands, reference, tray)
        t1 = time.perf_counter()
        view = self.view_of(cands)
        gains = white_balance_gains(reference, self.tray_colour) if self.white_balance else None
        solid = self.solid(frame, cands, reference)
        dice, timings = self.read_candidates(frame, cands, view, gains=gains, solid=solid)
        timings = {"locate": (t1 - t0) * 1000.0, **timings}
        h, w = frame.shape[:2]
        return Reading(
            dice=tuple(dice),
            width=int(w),
            height=int(h),
            scale=1.0,
            timings_ms=timings,
            view=view.view.value,
            tilt=view.tilt,
        )

    def with_bodies(
        self,
        frame: np.ndarray,
        candidates: Sequence[DieCandidate],
        reference: np.ndarray | None = None,
        tray: np.ndarray | None = None,
    ) -> list[DieCandidate]:
        """``candidates`` with whole numeral dice in place of the fragments the detector boxed.

        The detector learnt pip d6: on a d20 or a d10 it boxes numerals, not the die. Each die
        body (:func:`~dicetower.vision.bodies.body_boxes`) that no candidate already boxes, no
        smaller than the median candidate and holding only smaller boxes, is read by the
        numeral reader; one it names d10, d10t or d20 surely becomes a candidate
        (source ``"body"``) and the candidates centred inside it are dropped. A body of any
        other answer is dropped instead, so pip d6 reading is untouched.
        """
        if self.numerals is None:
            return list(candidates)
        h, w = frame.shape[:2]
        inside = tray_mask(tray, (h, w)) if tray is not None else None
        sides = sorted(max(c.box[2], c.box[3]) for c in candidates)
        typical = sides[len(sides) // 2] if sides else 0.0
        fresh = []
        for b in body_boxes(frame, reference):
            cx, cy = b[0] + b[2] / 2, b[1] + b[3] / 2
            side = max(b[2], b[3])
            if inside is not None and not inside[min(int(cy), h - 1), min(int(cx), w - 1)]:
                continue
            if side < typical:  # a numeral die is no smaller than the dice around it
                continue
            held = [c for c in candidates if _holds(b, c.centre)]
            if any(max(c.box[2], c.box[3]) > BODY_PART * side for c in held):
                continue  # the detector boxed this die whole (a body is a die and its shadow)
            if all(_iou(b, c.box) < BODY_SAME_IOU for c in candidates):
                fresh.append(b)
        if not fresh:
            return list(candidates)
        reads = self.numerals.read_crops(self.numerals.crops(frame, fresh))
        bodies = [b for b, r in zip(fresh, reads, strict=True) if r.kind in BODY_KINDS]
        if not bodies:
            return list(candidates)
        kept = [c for c in candidates if not any(_holds(b, c.centre) for b in bodies)]
        for x, y, bw, bh in bodies:
            margin = CUT_MARGIN * max(bw, bh) + 1.0
            cut = x <= margin or y <= margin or x + bw >= w - margin or y + bh >= h - margin
            corners = ((x, y), (x + bw, y), (x + bw, y + bh), (x, y + bh))
            contour = tuple((round(px), round(py)) for px, py in corners)
            kept.append(DieCandidate((x, y, bw, bh), 0.5, contour, False, bool(cut), "body"))
        return kept[:MAX_DICE]

    def solid(
        self, frame: np.ndarray, candidates: Sequence[DieCandidate], reference: np.ndarray | None
    ) -> set[int]:
        """The candidates that are something new in the tray: most of their middle changed against
        the empty-tray ``reference`` (none without one).

        Why: the face reader's "not a die" drops a rubber foot or a fleck of the tray, which the
        empty tray shows too; a leaning die, seen as two slanted faces, it can also call "not a
        die", and dropping it makes the tower throw again for a die missing rather than tap it
        flat. Something the empty tray did not show is kept, as unreadable.
        """
        if reference is None or reference.shape != frame.shape or not candidates:
            return set()
        mask, scale = foreground_small(frame, reference)
        return {
            i
            for i, c in enumerate(candidates)
            if changed_share(mask, tuple(v * scale for v in c.box)) >= SOLID_SHARE  # type: ignore[arg-type]
        }

    def view_of(self, candidates: Sequence[DieCandidate]) -> FrameView:
        """How the camera saw these located dice (:mod:`dicetower.vision.view`).

        Only dice that will be read count: a box cut by the frame edge or too small says nothing
        of the camera.
        """
        boxes = [c.box for c in candidates if _pre_reason(c) is None]
        return frame_view(boxes, self.faces.top_down_tilt)

    def read_candidates(
        self,
        frame: np.ndarray,
        candidates: Sequence[DieCandidate],
        view: FrameView | None = None,
        *,
        gains: np.ndarray | None = None,
        solid: set[int] | frozenset[int] = frozenset(),
    ) -> tuple[list[DieReading], dict[str, float]]:
        """Read located dice (boxes in ``frame`` pixels); returns readings and stage timings (ms).

        ``view`` chooses the thresholds (:meth:`D6Reader.thresholds_for`); judged from the
        candidates when not given. ``gains`` (BGR, :func:`~.identity.white_balance_gains`)
        white-balance the crops colours are named from. ``solid``: indices of candidates that are
        something new in the tray (:meth:`solid`), kept as unreadable when the face reader calls
        them no die.
        """
        frame = as_bgr(frame)
        cands = list(candidates)[:MAX_DICE]
        if view is None:
            view = self.view_of(cands)
        t0 = time.perf_counter()
        crops, maps = self.faces.crops_mapped(frame, [c.box for c in cands])
        skip = {i: reason for i, c in enumerate(cands) if (reason := _pre_reason(c)) is not None}
        need = [i for i in range(len(cands)) if i not in skip]
        need_crops = [crops[i] for i in need]
        greys = crop_greys(need_crops)  # once: the reader's input and where pips are found
        grey_of = dict(zip(need, greys, strict=True))
        reads: dict[int, FaceRead] = dict(
            zip(need, self.faces.read_crops(need_crops, greys, view.view), strict=True)
        )
        kinds: dict[int, KindRead] = {}
        unsure_kinds: dict[int, KindRead] = {}  # surely numeral dice of an unsure kind
        if self.numerals is not None and need:
            numeral_reads = self.numerals.read_crops(self.numerals.crops(frame, [cands[i].box for i in need]))
            kinds = {i: k for i, k in zip(need, numeral_reads, strict=True) if k.kind in NUMERAL_KINDS}
            unsure = UnreadableReason.KIND_UNSURE
            unsure_kinds = {i: k for i, k in zip(need, numeral_reads, strict=True) if k.reason is unsure}
            if self.glyphs is not None and kinds:
                ids = list(kinds)
                glyph_reads = self.glyphs.read(
                    frame,
                    [cands[i].box for i in ids],
                    [str(kinds[i].kind) for i in ids],
                    [kinds[i].kind_confidence for i in ids],
                )
                for i, g in zip(ids, glyph_reads, strict=True):
                    kinds[i] = with_glyph(kinds[i], g)
        t1 = time.perf_counter()
        colours = die_colours(crops if gains is None else [balance(c, gains) for c in crops])
        t2 = time.perf_counter()
        kept: list[tuple[int, int | None, UnreadableReason | None]] = []  # (candidate, face, reason)
        for i, c in enumerate(cands):
            r = reads.get(i)
            if r is not None and r.probs and r.probs[0] >= self.not_a_die_drop and i not in kinds:
                if i not in solid:
                    continue
                r = replace(r, face=None, reason=UnreadableReason.LOW_CONFIDENCE)  # a die it cannot read
            reason: UnreadableReason | None
            if r is None:
                reason = skip.get(i, UnreadableReason.LOW_CONFIDENCE)
            elif r.reason in _UNSURE and c.cut_off:  # a die half out of frame looks like no face up
                reason = UnreadableReason.CUT_OFF
            elif r.reason in _UNSURE and c.touching:
                reason = UnreadableReason.TOUCHING
            else:
                reason = r.reason
            kept.append((i, r.face if (r is not None and reason is None) else None, reason))
        t3 = time.perf_counter()
        centres = face_centres(
            [grey_of.get(i) for i, _f, _r in kept], [maps[i] for i, _f, _r in kept], [f for _i, f, _r in kept]
        )
        t4 = time.perf_counter()
        out = []
        for (i, face, reason), centre in zip(kept, centres, strict=True):
            r = reads.get(i)
            name, hsv = colours[i]
            die = DieReading(
                box=tuple(float(v) for v in cands[i].box),  # type: ignore[arg-type]
                kind="d6",
                face=face,
                status=ReadStatus.READ if face is not None else ReadStatus.UNREADABLE,
                reason=None if face is not None else reason,
                confidence=float(r.confidence) if r is not None else 0.0,
                colour=name,
                hsv=hsv,
                contour=cands[i].contour,
                face_centre=centre,
            )
            read = kinds.get(i) or unsure_kinds.get(i)
            if read is not None:
                die = with_kind(die, read)
                if self.budget:
                    die = below_budget(die, str(read.kind or read.guess or ""))
            out.append(die)
        return out, {
            "read": (t1 - t0) * 1000.0,
            "colour": (t2 - t1) * 1000.0,
            "face_centre": (t4 - t3) * 1000.0,
        }


def open_reader(
    models: str | Path | None = None, *, numerals: bool = False, familiar: bool = True
) -> FrameReader:
    """The product's reader: on the shipped models, or on the models in folder ``models``.

    Why a folder: a newly trained or calibrated reader or detector is judged with the same eval
    as the shipped pair (``dicetower eval --models DIR``), without copying it over the shipped
    files first. The folder holds ``d6_reader.onnx`` + ``.json`` and/or ``detector.onnx``
    (+ ``.json``); a model it lacks is the shipped one, so either can be judged alone. A folder
    with neither is an error (``FileNotFoundError``), not a silent run of the shipped pair; a
    model that does not load raises ``ReaderModelError`` or ``DetectorError``.

    ``numerals`` adds the numeral reader (numeral d6, d10, d10t, d20), the folder's
    ``numeral_reader.onnx`` when it has one, and the upright-numeral reader that gives those
    kinds their faces (``glyph_reader.onnx``, likewise): off, every die is read as a pip d6,
    which is faster and what a d6-only table wants.

    ``familiar`` False reads every d6 the reader is sure of, even one unlike its training dice
    (``vision/faces/familiar.py``): to measure what that check does.
    """
    reader = _open_reader(models, numerals)
    reader.faces.check_familiar &= familiar
    return reader


def _open_reader(models: str | Path | None, numerals: bool) -> FrameReader:
    """:func:`open_reader`'s reader with every check its files hold."""
    if models is None:
        return FrameReader(numerals=NumeralReader() if numerals else None, glyphs=_glyphs(None, numerals))
    folder = Path(models)
    has_reader = (folder / "d6_reader.onnx").is_file()
    detector_path = folder / "detector.onnx"
    has_numerals = (folder / "numeral_reader.onnx").is_file()
    has_glyphs = (folder / "glyph_reader.onnx").is_file()
    if not has_reader and not detector_path.is_file() and not has_numerals and not has_glyphs:
        raise FileNotFoundError(
            f"{folder}: holds neither d6_reader.onnx nor detector.onnx"
            " (nor numeral_reader.onnx, glyph_reader.onnx)"
        )
    numeral_reader = NumeralReader(folder if has_numerals else None) if numerals else None
    glyphs = _glyphs(folder if has_glyphs else None, numerals)
    if not detector_path.is_file():
        return FrameReader(folder if has_reader else None, numerals=numeral_reader, glyphs=glyphs)
    detector = DieDetector(detector_path)

    def locate(
        frame: np.ndarray, reference: np.ndarray | None, tray: np.ndarray | None
    ) -> list[DieCandidate]:
        return locate_dice(frame, reference=reference, tray=tray, detector=detector)

    return FrameReader(folder if has_reader else None, locate=locate, numerals=numeral_reader, glyphs=glyphs)


def _glyphs(folder: Path | None, wanted: bool) -> GlyphReader | None:
    """The upright-numeral reader (``folder``'s, else the shipped one) when kinds are on and one exists."""
    if not wanted:
        return None
    try:
        return GlyphReader(folder)
    except GlyphModelError:
        return None


class ReaderSpecError(VisionError, ValueError):
    """A ``module:name`` reader that cannot be imported or does not read frames."""


def import_reader(spec: str) -> DiceReader:
    """The reader ``"package.module:name"`` names, for eval to score beside the product's.

    ``name`` is a class built with no arguments (``dicetower.vision.eval.baseline:ClassicReader``)
    or an object; either way the result must have ``read(frame, reference, tray)``.
    """
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ReaderSpecError(f"reader must be 'module:name', got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ReaderSpecError(f"cannot import reader module {module_name!r}: {exc}") from None
    found = getattr(module, attr, None)
    reader = found() if isinstance(found, type) else found
    if not callable(getattr(reader, "read", None)):
        raise ReaderSpecError(f"{module_name}:{attr} is not a reader (no read(frame, reference, tray))")
    return reader


_every_kind: FrameReader | None = None
_every_kind_lock = threading.Lock()


def read_frame(
    frame: np.ndarray, reference: np.ndarray | None = None, tray: np.ndarray | None = None
) -> Reading:
    """Read ``frame`` with a process-wide reader of every kind, loaded once on first use.

    For scripts that read a few photos without keeping a reader: the numeral reader loads
    once per process, not per call. A long-lived caller builds its own with :func:`open_reader`.
    """
    global _every_kind
    with _every_kind_lock:
        if _every_kind is None:
            _every_kind = FrameReader(numerals=NumeralReader())
        reader = _every_kind
    return reader.read(frame, reference, tray)
