"""The simulated camera: a tray of dice drawn by :mod:`dicetower.vision.synth`, thrown by a seeded RNG.

It is the world as much as the camera. It watches the solenoid's mock pin and tells a shake
from a tap by the shaker's own :class:`~dicetower.firmware.pattern.ShakePattern`: a shake throws
every die in the tray (new faces from the RNG, new places), a tap lets a leaning die fall
flat with a new face (and re-places the dice: the renderer draws positions at random).
After a throw the next few frames show the dice moving (the rendered scene shifted), then
they rest. It knows the truth of every frame (:attr:`SimCamera.truth`).

Faults, each on request (the ``inject_*`` hooks, as gpiozero's ``MockPin.drive_low``) and at
``fault_rate`` per throw drawn from ``faults``:

* ``cocked``: a die leans, no face up (a tap settles it);
* ``touching``: two dice touch;
* ``blurred``, ``frozen`` (the same image again), ``black``: one bad frame soon after the dice rest;
* ``disconnect``: the next 1-3 frames raise :class:`CameraDisconnectedError`, then it returns;
* ``leaves_tray``: a die jumps out and stays out until :meth:`SimCamera.return_dice`;
* ``jam``: the next shake does not move the dice.

Which fault, which die and when never depend on the faces, so no fault can bias them.
A tray of pip d6 only is drawn by the d6 scene renderer (one body colour for the plain dice
and at most one red die, its wild die); a tray holding a d10, d10t or d20 is drawn by the
numeral renderer (:func:`~dicetower.vision.synth.numerals.render_tray`), every die in its own
configured colour. Both draw the tower's own tray (:class:`~dicetower.vision.synth.tray.TowerTray`:
the round tray, its walls and matte liner, under the ring light, seen from one camera height), so
every die of a kind is the same size in every photo (:data:`DIE_PX`), and the light never changes,
so the empty-tray reference stays true.
"""

from __future__ import annotations

import contextlib
import random
import zlib
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

import cv2
import numpy as np

from ...vision.kinds import DRAWN_KINDS, KINDS, Reader, faces_of, label_of
from ...vision.manifest import LabelledDie
from ...vision.synth import SceneStyle, render_scene
from ...vision.synth.die3d import DieLook
from ...vision.synth.numerals import NUMERAL_COLOURS, NumeralStyle, random_look, render_tray
from ...vision.synth.numerals import TrayDie as DrawnDie
from ...vision.synth.render import BODY_COLOURS
from ...vision.synth.solids import face_values
from ...vision.synth.tray import TowerTray
from ...vision.tower_scale import DICE_MM, die_px
from ..clock import Clock
from ..config import FAULTS, Config, TrayDie
from ..errors import CameraDisconnectedError, CameraUnavailableError
from ..pattern import ShakePattern
from . import CameraBackend, SolenoidWatch

__all__ = ["SimCamera"]

#: The die kinds the simulated camera draws, as a config names them (a config ``d6`` is a pip d6).
DRAWN_LABELS = tuple(dict.fromkeys(label_of(k) for k in DRAWN_KINDS if KINDS[k].reader is not Reader.NONE))
#: The tower's tray and the camera's height (4.4 px a millimetre at the dice's tops).
TOWER = TowerTray()
#: Dice are drawn this wide in a 640-pixel-wide frame (in proportion at other widths), one camera
#: height for all (the tower's 4.4 px a millimetre: a 16 mm d6, an 18 mm d10, a 22 mm d20,
#: :mod:`~dicetower.vision.tower_scale`): a d6's top face is this many pixels a side, a numeral
#: die's outline about this many across.
DIE_PX: dict[str, float] = {kind: die_px(kind) or 0.0 for kind in DICE_MM}
#: The range the numeral style keeps for any other kind (the renderer's default draw).
NUMERAL_DIE_PX = (64.0, 84.0)
#: Frames the dice move for after a shake (inclusive range), and after a tap.
MOVING_FRAMES = (2, 6)
TAP_MOVING_FRAMES = 1
#: Per-frame sensor noise: uniform 0..NOISE grey levels, from a tile sliced at a random offset.
NOISE = 4
_TRAY_BGR = TOWER.floor


def drawn_side(kind: str, size: tuple[int, int]) -> float:
    """The side the renderers are asked for, so that a ``kind`` die is :data:`DIE_PX` wide at ``size``.

    Why the conversion: the renderers measure sizes against a 640-pixel short side; the camera's
    scale follows the frame's width (one lens, one height, more or fewer pixels).
    """
    w, h = size
    return DIE_PX.get(kind, sum(NUMERAL_DIE_PX) / 2) * w / min(w, h)


class SimCamera(CameraBackend):
    """A simulated tray camera. ``dice`` are the tray's dice (config ``[dice]``), ``seed`` the RNG's."""

    name = "sim"
    can_show_empty_tray = True

    def __init__(
        self,
        dice: Sequence[TrayDie] | None = None,
        *,
        seed: int | None = None,
        size: tuple[int, int] = (640, 480),
        fault_rate: float = 0.0,
        faults: Sequence[str] = FAULTS,
        clock: Clock | None = None,
        fps: float = 30.0,
    ) -> None:
        super().__init__(clock=clock)
        if dice is None:
            dice = [TrayDie("d6", "white")] * 4 + [TrayDie("d6", "red", "wild")]
        dice = list(dice)
        for d in dice:
            if d.kind not in DRAWN_LABELS:
                raise CameraUnavailableError(
                    f"the simulated camera draws {', '.join(DRAWN_LABELS)} only; the tray has a {d.kind}"
                )
        #: drawn by the numeral renderer: the tray holds a kind other than the pip d6
        self.numeral = any(d.kind != "d6" for d in dice)
        red = [i for i, d in enumerate(dice) if d.colour == "red"]
        others = {d.colour for d in dice if d.colour != "red"}
        if self.numeral:
            unknown_colours = sorted({d.colour for d in dice} - set(NUMERAL_COLOURS))
            if unknown_colours:
                raise CameraUnavailableError(
                    f"the simulated camera draws {', '.join(NUMERAL_COLOURS)} dice; "
                    f"the tray has {', '.join(unknown_colours)}"
                )
        elif len(red) > 1 or len(others) > 1:
            raise CameraUnavailableError(
                "the simulated camera draws one body colour for the plain pip d6 and at most one red die; "
                f"the tray has {', '.join(sorted({d.colour for d in dice}))}"
            )
        unknown = [f for f in faults if f not in FAULTS]
        if unknown or not 0.0 <= fault_rate <= 1.0:
            raise ValueError(f"faults must come from {', '.join(FAULTS)} and fault_rate be 0..1")
        # the d6 renderer draws its wild (red) die first: keep the tray in that order
        self.dice: tuple[TrayDie, ...] = (
            tuple(dice)
            if self.numeral
            else tuple(dice[i] for i in red) + tuple(d for d in dice if d.colour != "red")
        )
        self.size = (int(size[0]), int(size[1]))
        d6_side = drawn_side("d6", self.size)
        self._style = SceneStyle(
            die_size=(d6_side, d6_side),
            body=next(iter(others), "white"),
            wild_die=bool(red),
            pip_shape="round",
            tray=_TRAY_BGR,
            blur=0.0,
            noise=1.0,
            perspective=0.0,
            parallax=0.0,
            light=0.0,
            grain=0.0,
            tower=TOWER,
        )
        self._numeral_style = NumeralStyle(
            die_size=NUMERAL_DIE_PX,
            tray=_TRAY_BGR,
            blur=0.0,
            noise=0.0,
            perspective=0.0,
            light=0.0,
            grain=0.0,
            tilt=10.0,
            tower=TOWER,
        )
        self.seed = seed
        self.rng = random.Random(seed)
        self.fault_rate = float(fault_rate)
        self.faults = tuple(faults)
        self.frame_s = 1.0 / fps
        self.faces = [self._new_face(i) for i in range(len(self.dice))]
        self.out: set[int] = set()  #: dice out of the tray
        self.cocked: set[int] = set()
        self.touching = False
        self.injected: list[str] = []  #: every fault that happened, in order (for tests and the bench)
        #: The room's light as a gain on every frame, the empty tray's included (1.0: as drawn); a test
        #: sets it to dim or brighten the tray between throws, as a lamp or the daylight does.
        self.light = 1.0
        self._render_seed = self.rng.randrange(2**31)
        #: each die's fixed look, face layout and size (numeral trays)
        self._physique = self._physical_dice() if self.numeral else []
        #: each pip d6's fixed pip colour (pip trays)
        self._pips = [] if self.numeral else self._pip_colours()
        self._scene: tuple[np.ndarray, tuple[LabelledDie, ...]] | None = None
        self._jam_next = False
        self._moving = 0
        self._frame_faults: deque[str] = deque()  #: one-shot faults, one per upcoming frame ("" = none)
        self._disconnected = 0
        self._empty = False
        self._watch: SolenoidWatch | None = None
        self._last: np.ndarray | None = None
        self._truth: tuple[LabelledDie, ...] = ()
        noise_rng = np.random.default_rng(self.rng.randrange(2**31))
        w, h = self.size
        self._noise = noise_rng.integers(0, NOISE + 1, (h + 64, w + 64, 3), dtype=np.uint8)
        if self.numeral:
            self._reference = render_tray(0, [], self.size, style=self._numeral_style)[0]
        else:
            self._reference = render_scene(self._render_seed, 0, self.size, style=self._style)[0]

    @classmethod
    def from_config(cls, config: Config, *, clock: Clock | None = None) -> SimCamera:
        sim = config.sim
        return cls(
            config.dice.dice,
            seed=None if sim.seed < 0 else sim.seed,
            size=(config.camera.width, config.camera.height),
            fault_rate=sim.fault_rate,
            faults=sim.faults or FAULTS,
            clock=clock,
        )

    # -- the world

    def _new_face(self, i: int) -> int:
        """A fair face for die ``i`` from the RNG (the manifest's faces: a d10t shows 0, 10, ... 90)."""
        kind = self.dice[i].kind
        return self.rng.choice(faces_of(kind))

    def watch_solenoid(self, pin: Any, pattern: ShakePattern | None = None) -> None:
        self._watch = SolenoidWatch(pin, pattern)

    def throw(self) -> None:
        """Shake the tray: every die in it gets a new face and place (unless a jam is due)."""
        if self._jam_next:
            self._jam_next = False
            return
        for i in range(len(self.dice)):
            if i not in self.out:
                self.faces[i] = self._new_face(i)
        self.cocked.clear()
        self.touching = False
        self._render_seed = self.rng.randrange(2**31)
        self._scene = None
        self._frame_faults.clear()
        self._moving = self.rng.randint(*MOVING_FRAMES)
        if self.faults and self.rng.random() < self.fault_rate:
            self._inject(self.rng.choice(self.faults))

    def tap(self) -> None:
        """A short pulse: leaning dice fall flat with a new face; the others keep theirs."""
        if self._jam_next:
            return
        for i in sorted(self.cocked):
            self.faces[i] = self._new_face(i)
        self.cocked.clear()
        self.touching = False
        self._render_seed = self.rng.randrange(2**31)
        self._scene = None
        self._moving = TAP_MOVING_FRAMES

    def _inject(self, fault: str, *, at_random: bool = True) -> None:
        self.injected.append(fault)
        if fault == "cocked":
            inside = [i for i in range(len(self.dice)) if i not in self.out]
            if inside:
                self.cocked = {inside[-1]}  # the renderer leans the last dice it draws
        elif fault == "touching":
            self.touching = True
        elif fault in ("blurred", "frozen", "black"):
            # one bad frame: drawn at a rate, among the first few once the dice rest; on request, the next
            self._frame_faults.extend([""] * (self.rng.randint(0, 4) if at_random else 0) + [fault])
        elif fault == "disconnect":
            self._disconnected = self.rng.randint(1, 3)
        elif fault == "leaves_tray":
            inside = [i for i in range(len(self.dice)) if i not in self.out]
            if inside:
                self.out.add(self.rng.choice(inside))
                self._scene = None
        elif fault == "jam":
            self._jam_next = True
        else:  # pragma: no cover - checked in __init__
            raise ValueError(fault)

    # test hooks, in the manner of MockPin.drive_low()
    def inject(self, fault: str) -> None:
        """Make ``fault`` happen now: a scene fault to the dice as they lie, a frame fault to the next frame
        the dice are at rest in, ``jam`` to the next shake."""
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
        self._inject(fault, at_random=False)
        if fault in ("cocked", "touching"):
            self._scene = None

    def return_dice(self) -> None:
        """Put every die that left the tray back (a person picking it up)."""
        self.out.clear()
        self._scene = None

    @contextlib.contextmanager
    def empty_tray(self) -> Iterator[None]:
        self._empty = True
        try:
            yield
        finally:
            self._empty = False

    # -- the camera

    @property
    def truth(self) -> tuple[LabelledDie, ...]:
        return self._truth

    @property
    def truth_dice(self) -> tuple[tuple[TrayDie, LabelledDie], ...]:
        """The truth with each label's tray die (colour and role), in the renderer's order."""
        inside = [d for i, d in enumerate(self.dice) if i not in self.out]
        return tuple(zip(inside, self._truth, strict=True))

    def _render(self) -> tuple[np.ndarray, tuple[LabelledDie, ...]]:
        if self._scene is None:
            inside = [i for i in range(len(self.dice)) if i not in self.out]
            # cocked dice are drawn last (the renderer leans the last ``cocked`` of them)
            order = [i for i in inside if i not in self.cocked] + [i for i in inside if i in self.cocked]
            if self.numeral:
                frame, labels = self._render_numeral(order)
                by_die = dict(zip(order, labels, strict=True))
                self._scene = (frame, tuple(by_die[i] for i in inside))
                return self._scene
            frame, _, labels = render_scene(
                self._render_seed,
                len(order),
                self.size,
                style=self._style,
                faces=[self.faces[i] for i in order],
                cocked=sum(1 for i in order if i in self.cocked),
                touching=self.touching,
                pip_colours=[self._pips[i] for i in order],
            )
            by_die = dict(zip(order, labels, strict=True))
            self._scene = (frame, tuple(by_die[i] for i in inside))
        return self._scene

    def _physical_dice(self) -> list[tuple[DieLook, tuple[int, ...], float]]:
        """Each die's look, face layout and size: a die looks the same on every throw, whatever the seed.

        Why not from the seed: the seed says how the dice fall; the dice are the tray's, so a second
        run with another seed (rolling the dice a tower was taught on) throws the same dice.
        """
        out = []
        for i, d in enumerate(self.dice):
            rng = np.random.default_rng(zlib.crc32(f"{i} {d.kind} {d.colour}".encode()))
            look = random_look(rng, d.colour, "solid", self._numeral_style)
            values = tuple(int(v) for v in face_values(d.kind, rng))
            out.append((look, values, drawn_side(d.kind, self.size)))
        return out

    def _pip_colours(self) -> list[tuple[int, int, int]]:
        """Each pip d6's pip colour, one of its body's: the same die shows the same pips on every throw.

        Why fixed per die, not drawn per scene: the tray holds physical dice, and a die whose pips
        turn from black to red between throws is not one a taught reader (or a person) would meet.
        Chosen from the die's place, kind and colour, like :meth:`_physical_dice`, not from the seed.
        """
        out = []
        for i, d in enumerate(self.dice):
            body = "red" if d.colour == "red" else self._style.body or "white"
            choices = BODY_COLOURS[body][1]
            out.append(choices[zlib.crc32(f"{i} {d.kind} {d.colour} pips".encode()) % len(choices)])
        return out

    def _render_numeral(self, order: list[int]) -> tuple[np.ndarray, list[LabelledDie]]:
        drawn = []
        for i in order:
            look, values, side = self._physique[i]
            d = self.dice[i]
            drawn.append(
                DrawnDie(d.kind, self.faces[i], d.colour, "solid", i in self.cocked, look, values, side)
            )
        frame, _, labels = render_tray(
            self._render_seed, drawn, self.size, style=self._numeral_style, touching=self.touching
        )
        return frame, labels

    def capture(self) -> np.ndarray:
        self.wait(self.frame_s)
        if self._watch is not None:
            event = self._watch.take()
            if event == "shake":
                self.throw()
            elif event == "tap":
                self.tap()
        if self._disconnected:
            self._disconnected -= 1
            raise CameraDisconnectedError("simulated camera: disconnected (USB or ribbon cable)")
        if self._empty:
            frame, self._truth = self._reference, ()
        else:
            frame, self._truth = self._render()
        if self.light != 1.0:  # the room's light changed (a test hook): the empty tray too
            frame = cv2.convertScaleAbs(frame, alpha=self.light)
        fault = ""
        if self._moving:
            self._moving -= 1
            dx, dy = self.rng.randint(-40, 40), self.rng.randint(-40, 40)
            frame = np.roll(frame, (dy, dx), axis=(0, 1))
        elif self._frame_faults:
            fault = self._frame_faults.popleft()
        if fault == "frozen" and self._last is not None:
            return self._last
        if fault == "black":
            out = np.zeros_like(frame)
        else:
            ox, oy = self.rng.randrange(64), self.rng.randrange(64)
            h, w = frame.shape[:2]
            out = cv2.add(frame, self._noise[oy : oy + h, ox : ox + w])  # saturating: no wrap at 255
            if fault == "blurred":
                out = cv2.blur(out, (15, 1))
        self._last = out
        return out

    def reopen(self) -> None:
        pass
