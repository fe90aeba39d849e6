"""dicetower.vision.training.detector.train."""
