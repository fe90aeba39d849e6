"""Training and measuring the pip-d6 face reader (``vision/models/d6_reader.onnx``).

:mod:`.train` is the entry point (``python -m dicetower.vision.training.d6.train``); the
data (:mod:`.data`, :mod:`.augment`), networks (:mod:`.nets`), loop (:mod:`.loop`) and
calibration (:mod:`.calibrate`) are its parts; the rest compare and audit readers.
"""
