"""bench/vision.py still runs: synthetic photos, the baseline standing in for our reader."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "vision.py"


def test_bench_prints_table_and_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location("bench_vision", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_vision", bench)  # dataclasses look their module up
    spec.loader.exec_module(bench)
    argv = ["--synth", "--photos", "1", "--repeat", "1", "--json"]
    argv += ["--reader", "dicetower.vision.baseline:read_frame"]
    assert bench.main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("photos: synthetic scenes (timing only")
    data = json.loads(lines[-1])
    assert set(data["buckets"]) == {"1", "10", "25"}
    for n, cells in data["buckets"].items():
        assert cells["ours"]["dice"] == cells["classic"]["dice"] == int(n)
        assert cells["classic"]["median_ms"] > 0


def test_reader_net_bench_times_the_shipped_network(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("bench_reader_net", BENCH.parent / "reader_net.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--crops", "3", "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert "3 crops a batch, 2 interleaved rounds" in out and "1.00x" in out
    with pytest.raises(SystemExit):
        bench.main(["--rounds", "0"])
