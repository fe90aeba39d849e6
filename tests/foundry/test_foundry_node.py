"""The Foundry module's own tests (``node --test foundry/``) run under Node's test runner, against the fake of
Foundry's documented API in ``foundry/test/``; no npm package is installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_node_suite_passes() -> None:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("no node on PATH (Debian: apt-get install nodejs)")
    run = subprocess.run(
        [node, "--test", "foundry/"], cwd=REPO, capture_output=True, text=True, timeout=300, check=False
    )
    summary = [line for line in run.stdout.splitlines() if line.startswith(("# pass", "# fail"))]
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert summary and summary[-1] == "# fail 0", summary
    assert int(summary[0].split()[-1]) >= 20, summary
