"""Run an earlier commit's frame reader next to ours, in the same benchmark run.

Why a second process: both versions are the package ``dicetower``, and one interpreter can
import only one of them. The earlier commit is checked out into a temporary git worktree, a
shim folder puts that checkout's ``rules/``, ``vision/`` and ``firmware/`` on ``sys.path`` as
``dicetower.*`` (ahead of the editable install), and a worker process reads frames on
request. The worker times each read itself (the same ``perf_counter`` span as the
in-process readers), so pipes and pickling are not counted, and the caller asks for one read
at a time, interleaved with its own readers: both versions run under the same conditions.

Used by ``bench/vision.py --previous REV``; the worker end is ``python previous_version.py --serve``.
:class:`Checkout` alone (the worktree and the shim) is what ``bench/startup.py`` times.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Checkout", "PreviousVersion", "PreviousVersionError"]

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("rules", "vision", "firmware")
#: A worker that does not answer one read in this long is stuck, not slow.
READ_TIMEOUT_S = 120.0


class PreviousVersionError(RuntimeError):
    """The earlier commit could not be checked out or its reader failed."""


class Checkout:
    """Commit ``rev`` checked out into a temporary git worktree, importable as ``dicetower``.

    :meth:`env` is the environment of a process that imports that commit's ``dicetower.*``
    (a shim folder first on ``PYTHONPATH``, ahead of the editable install). ``rev=None``
    makes the same shim over this working tree, so both sides of a comparison import the
    package the same way. Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, rev: str | None) -> None:
        self.rev = rev
        self.root = Path(tempfile.mkdtemp(prefix="dicetower-prev-"))
        try:
            self.tree = REPO if rev is None else self._worktree(rev)
            self._shim()
        except BaseException:
            self.close()
            raise

    def _worktree(self, rev: str) -> Path:
        tree = self.root / "tree"
        done = subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), rev],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise PreviousVersionError(f"cannot check out {rev!r}: {done.stderr.strip()}")
        return tree

    def _shim(self) -> None:
        shim = self.root / "shim" / "dicetower"
        shim.mkdir(parents=True)
        (shim / "__init__.py").write_text('"""Shim: a checkout as dicetower."""\n', encoding="utf-8")
        for folder in FOLDERS:
            if (self.tree / folder).is_dir():
                (shim / folder).symlink_to(self.tree / folder, target_is_directory=True)

    def env(self, **extra: str) -> dict[str, str]:
        """This process's environment with the checkout's ``dicetower`` first on the path."""
        return dict(os.environ, PYTHONPATH=str(self.root / "shim"), **extra)

    def close(self) -> None:
        tree = self.root / "tree"
        if tree.exists():
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                capture_output=True,
                check=False,
            )
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Checkout:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PreviousVersion:
    """A reader backed by commit ``rev`` in a worker process (use as a context manager).

    :meth:`read` returns the earlier version's :class:`~dicetower.vision.reading.Reading` of a
    frame and leaves the worker's own timing of that read in :attr:`last_ms`.
    """

    def __init__(self, rev: str) -> None:
        self.rev = rev
        self.last_ms: float | None = None
        self._checkout = Checkout(rev)
        self._tmp = self._checkout.root
        self._frames: dict[int, Path] = {}
        self._proc: subprocess.Popen[str] | None = None
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        env = self._checkout.env(PYTHONDONTWRITEBYTECODE="1")
        self._proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(self._tmp),
        )
        hello = self._ask({"hello": True})
        if not str(hello.get("package", "")).startswith(str(self._tmp)):
            raise PreviousVersionError(f"worker imported the wrong dicetower: {hello.get('package')}")

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise PreviousVersionError("the worker is not running")
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], READ_TIMEOUT_S)
        line = proc.stdout.readline() if ready else ""  # one answer line per request
        if not line:
            raise PreviousVersionError(f"the {self.rev} worker stopped answering (exit {proc.poll()})")
        answer = json.loads(line)
        if "error" in answer:
            raise PreviousVersionError(f"{self.rev}: {answer['error']}")
        return answer

    def read(self, frame: np.ndarray, reference: np.ndarray | None = None, tray: Any = None) -> Any:
        from dicetower.vision.reading import DieReading, Reading, ReadStatus, UnreadableReason

        if reference is not None or tray is not None:
            raise PreviousVersionError("the previous-version reader is timed without a reference or tray")
        path = self._frames.get(id(frame))
        if path is None:
            path = self._tmp / f"frame{len(self._frames)}.npy"
            np.save(path, frame)
            self._frames[id(frame)] = path
        answer = self._ask({"frame": str(path)})
        self.last_ms = float(answer["ms"])
        dice = tuple(
            DieReading(
                box=tuple(float(v) for v in d["box"]),  # type: ignore[arg-type]
                kind=d.get("kind", "d6"),
                face=d.get("face"),
                status=ReadStatus(d["status"]),
                reason=UnreadableReason(d["reason"]) if d.get("reason") else None,
                confidence=float(d.get("confidence", 0.0)),
                colour=d.get("colour", ""),
                hsv=tuple(d.get("hsv", (0, 0, 0))),  # type: ignore[arg-type]
            )
            for d in answer["reading"]["dice"]
        )
        r = answer["reading"]
        return Reading(dice=dice, width=int(r["width"]), height=int(r["height"]))

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None
        self._checkout.close()

    def __enter__(self) -> PreviousVersion:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve() -> int:
    """Worker loop: one JSON request per line in, one JSON answer per line out."""
    import cv2
    import dicetower
    from dicetower.vision.reader import FrameReader  # in every version, so any commit can be timed

    cv2.setNumThreads(1)
    read = FrameReader().read
    frames: dict[str, np.ndarray] = {}
    warmed = False
    for line in sys.stdin:
        try:
            request = json.loads(line)
            if request.get("hello"):
                answer: dict[str, Any] = {"package": str(Path(dicetower.__file__).resolve().parent)}
            else:
                path = request["frame"]
                if path not in frames:
                    frames[path] = np.load(path)
                frame = frames[path]
                if not warmed:  # model loading is not a per-photo cost, as in the caller
                    read(frame, None)
                    warmed = True
                start = time.perf_counter()
                reading = read(frame, None)
                ms = (time.perf_counter() - start) * 1000.0
                answer = {"ms": ms, "reading": reading.to_json()}
        except Exception as exc:  # report it: the caller turns it into PreviousVersionError
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        raise SystemExit(serve())
    print(__doc__)
    raise SystemExit(2)
