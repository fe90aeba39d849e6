"""Fixtures every test folder shares: a small teach folder (``tests/teach_folders.py``) and Debian's headless
Chromium under Playwright for the page tests (the server's, the hub's and the Foundry module's)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from teach_folders import TeachFolder, write_teach_folder


@pytest.fixture
def teach_folder(tmp_path: Path) -> TeachFolder:
    """A fresh teach folder, grouped and not yet named."""
    return write_teach_folder(tmp_path / "teach")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's ``chromium`` under Playwright, one a test module (the server's and the hub's pages);
    skips where either is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=chromium,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            yield b
        finally:
            b.close()
