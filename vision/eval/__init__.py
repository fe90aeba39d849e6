"""dicetower.vision.eval."""
