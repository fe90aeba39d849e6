"""Fixtures shared by the vision tests."""

from __future__ import annotations

import pytest
from dicetower.vision.faces.pips import D6Reader, ReaderModelError


@pytest.fixture(scope="session")
def reader() -> D6Reader:
    """The shipped face reader, loaded once (skips where the model files are not built)."""
    try:
        return D6Reader()
    except ReaderModelError as exc:
        pytest.skip(f"face-reader model not built: {exc}")
