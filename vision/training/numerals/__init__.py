"""dicetower.vision.training.numerals."""
