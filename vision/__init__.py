"""dicetower.vision."""
