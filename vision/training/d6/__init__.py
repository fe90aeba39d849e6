"""dicetower.vision.training.d6."""
