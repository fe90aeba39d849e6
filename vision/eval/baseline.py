"""The classic pip-counting reader, kept as the baseline the real reader is measured against.

The approach found in most hobby dice readers: find pips with ``cv2.SimpleBlobDetector``
(small, round, convex blobs, dark or light), group them into dice with DBSCAN (a pip's
neighbours on the same die are closer than the gap to the next die), and call each group's
pip count its face. Its known weaknesses are the point of comparing: a 2 or 3 splits when
its pips are far apart, dice that touch merge, and a die's body colour is never looked at.

:class:`ClassicReader` reads frames as the product's reader does (the
:class:`~dicetower.vision.reading.DiceReader` protocol), so ``dicetower eval --reader
dicetower.vision.eval.baseline:ClassicReader`` scores it; ``bench/vision.py`` runs both side by side.
DBSCAN is implemented here (no scikit-learn dependency).
"""

from __future__ import annotations

import time
from collections import deque

import cv2
import numpy as np

from ..reading import DieReading, Reading, ReadStatus, UnreadableReason

__all__ = ["MAX_BLOBS", "ClassicReader", "dbscan", "detect_pips", "read_frame"]

#: More candidate pips than this in one frame is not a tray of dice; keep the largest.
MAX_BLOBS = 600
#: DBSCAN radius in median pip diameters: the diagonal of a 2 is ~3.5 pip diameters.
EPS_PIPS = 3.6
#: Grey-level difference between a pip and the ring around it; tray grain and glare are fainter.
MIN_PIP_CONTRAST = 15.0


def dbscan(points: np.ndarray, eps: float, min_samples: int = 1) -> np.ndarray:
    """Cluster ``points`` (N x 2); return a label per point, -1 for noise.

    Textbook DBSCAN: a point with at least ``min_samples`` points (itself included) within
    ``eps`` is a core point; clusters are the core points reachable from one another plus
    the border points they reach. O(N^2) memory, so callers bound N.
    """
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    n = len(pts)
    labels = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return labels
    d2 = ((pts[:, None, :] - pts[None, :, :]) ** 2).sum(axis=2)
    neighbours = [np.flatnonzero(row <= eps * eps) for row in d2]
    core = np.array([len(nb) >= min_samples for nb in neighbours])
    cluster = 0
    for i in range(n):
        if labels[i] != -1 or not core[i]:
            continue
        labels[i] = cluster
        queue = deque([i])
        while queue:  # each point is labelled once, so this ends after at most N pops
            j = queue.popleft()
            if not core[j]:
                continue
            for k in neighbours[j]:
                if labels[k] == -1:
                    labels[k] = cluster
                    queue.append(int(k))
        cluster += 1
    return labels


def _detector(min_area: float, max_area: float) -> cv2.SimpleBlobDetector:
    p = cv2.SimpleBlobDetector_Params()
    p.filterByColor = False  # dark pips on light dice and light pips on dark dice
    p.filterByArea = True
    p.minArea = float(min_area)
    p.maxArea = float(max_area)
    p.filterByCircularity = True
    p.minCircularity = 0.6
    p.filterByConvexity = True
    p.minConvexity = 0.8
    p.filterByInertia = True
    p.minInertiaRatio = 0.4
    p.minDistBetweenBlobs = 2.0
    return cv2.SimpleBlobDetector_create(p)


def detect_pips(frame: np.ndarray) -> np.ndarray:
    """Pip candidates as an N x 3 array of (x, y, diameter), largest first, N <= MAX_BLOBS."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    side = max(grey.shape[:2])
    # a pip is ~0.2 of its die's side; dice from ~3% to ~40% of the frame's side
    min_area = max(4.0, (0.005 * side) ** 2)
    max_area = (0.08 * side) ** 2
    keypoints = _detector(min_area, max_area).detect(grey)
    pts = np.array([(k.pt[0], k.pt[1], k.size) for k in keypoints], dtype=np.float64).reshape(-1, 3)
    order = np.argsort(-pts[:, 2], kind="stable")
    pts = pts[order][: MAX_BLOBS * 4]
    keep = [i for i, (x, y, d) in enumerate(pts) if _contrast(grey, x, y, d / 2) >= MIN_PIP_CONTRAST]
    return pts[keep][:MAX_BLOBS]


def _contrast(grey: np.ndarray, x: float, y: float, r: float) -> float:
    """|mean inside the blob - mean of a ring around it|: pips are inked or drilled, grain is not."""
    h, w = grey.shape[:2]
    R = int(np.ceil(r * 1.8)) + 1
    x0, y0, x1, y1 = max(0, int(x) - R), max(0, int(y) - R), min(w, int(x) + R + 1), min(h, int(y) + R + 1)
    patch = grey[y0:y1, x0:x1].astype(np.float32)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    d = np.hypot(xx - x, yy - y)
    inner, ring = patch[d <= r * 0.6], patch[(d >= r * 1.2) & (d <= r * 1.8)]
    if inner.size == 0 or ring.size == 0:
        return 0.0
    return abs(float(inner.mean()) - float(ring.mean()))


def read_frame(frame: np.ndarray, reference: np.ndarray | None = None, tray: object = None) -> Reading:
    """Read ``frame`` the classic way; ``reference`` and ``tray`` are accepted and ignored."""
    del reference, tray
    start = time.perf_counter()
    h, w = frame.shape[:2]
    pips = detect_pips(frame)
    t_pips = time.perf_counter()
    dice: list[DieReading] = []
    if len(pips):
        eps = EPS_PIPS * float(np.median(pips[:, 2]))
        labels = dbscan(pips[:, :2], eps, min_samples=1)
        for c in range(int(labels.max()) + 1):
            members = pips[labels == c]
            count = len(members)
            pad = float(np.median(members[:, 2])) * 1.5
            x0, y0 = members[:, 0].min() - pad, members[:, 1].min() - pad
            x1, y1 = members[:, 0].max() + pad, members[:, 1].max() + pad
            box = (float(x0), float(y0), float(x1 - x0), float(y1 - y0))
            if 1 <= count <= 6:
                dice.append(DieReading(box, "d6", count, ReadStatus.READ, confidence=0.5))
            else:
                reason = UnreadableReason.TOUCHING  # more than 6 pips: merged dice
                dice.append(DieReading(box, "d6", None, ReadStatus.UNREADABLE, reason))
    end = time.perf_counter()
    timings = {"pips": (t_pips - start) * 1000, "cluster": (end - t_pips) * 1000}
    return Reading(tuple(dice), w, h, 1.0, timings)


class ClassicReader:
    """:func:`read_frame` as a reader object (no models to load, nothing kept between frames)."""

    def read(
        self, frame: np.ndarray, reference: np.ndarray | None = None, tray: np.ndarray | None = None
    ) -> Reading:
        """Read ``frame`` the classic way; ``reference`` and ``tray`` are accepted and ignored."""
        return read_frame(frame, reference, tray)
