"""Fixtures every test folder shares: a small teach folder (``tests/teach_folders.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from teach_folders import TeachFolder, write_teach_folder


@pytest.fixture
def teach_folder(tmp_path: Path) -> TeachFolder:
    """A fresh teach folder, grouped and not yet named."""
    return write_teach_folder(tmp_path / "teach")
