"""dicetower.vision.training.glyphs."""
