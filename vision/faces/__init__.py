"""dicetower.vision.faces."""
