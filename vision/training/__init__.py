"""Offline training and measuring tools for the vision models.

Nothing here is imported at runtime on the tower: torch is imported only inside the
training modules, so the Pi needs just numpy and OpenCV.
"""

__all__: list[str] = []
