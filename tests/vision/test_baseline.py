"""The classic baseline reader: own DBSCAN, blob pips, pip count per cluster."""

from __future__ import annotations

import numpy as np
from dicetower.vision.eval.baseline import dbscan, detect_pips, read_frame
from dicetower.vision.reading import ReadStatus
from dicetower.vision.synth import SceneStyle, draw_face, render_scene


def test_dbscan_groups_by_reach() -> None:
    pts = np.array([[0, 0], [1, 0], [2, 0], [10, 10], [10.5, 10], [30, 30]], float)
    assert dbscan(pts, eps=1.1).tolist() == [0, 0, 0, 1, 1, 2]
    # with min_samples=2 the lone point is noise and chains need core points
    assert dbscan(pts, eps=1.1, min_samples=2).tolist() == [0, 0, 0, 1, 1, -1]
    assert dbscan(np.empty((0, 2)), eps=1.0).tolist() == []


def test_dbscan_border_point_joins_one_cluster() -> None:
    # 0-1-2 dense; 3 is in reach of 2 only; min_samples=3 makes 3 a border point, not a core
    pts = np.array([[0, 0], [0.5, 0], [1.0, 0], [1.9, 0]], float)
    assert dbscan(pts, eps=1.0, min_samples=3).tolist() == [0, 0, 0, 0]


def test_detect_pips_counts_a_clean_face() -> None:
    for face in range(1, 7):
        img, mask = draw_face(face, 80, (235, 235, 235), (20, 20, 20))
        canvas = np.full((240, 240, 3), 110, np.uint8)
        canvas[80:160, 80:160][mask > 0] = img[mask > 0]
        assert len(detect_pips(canvas)) == face


def test_reads_a_clean_synthetic_tray() -> None:
    style = SceneStyle(
        blur=0.0,
        noise=0.0,
        perspective=0.0,
        light=0.0,
        body="white",
        pip_shape="round",
        grain=0.0,
        die_size=(50.0, 56.0),
    )
    frame, _, labels = render_scene(21, 4, style=style, faces=[1, 4, 5, 6])
    reading = read_frame(frame)
    assert sorted(d.face for d in reading.dice if d.status is ReadStatus.READ) == [1, 4, 5, 6]
    assert reading.width == 640 and set(reading.timings_ms) == {"pips", "cluster"}
    assert len(labels) == 4
