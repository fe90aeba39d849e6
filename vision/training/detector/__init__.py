"""Training and measuring the die detector (``vision/models/detector.onnx``).

:mod:`.train` is the entry point (``python -m dicetower.vision.training.detector.train``);
:mod:`.data` loads and augments the labelled photos, :mod:`.model` holds the network and its
ONNX export, :mod:`.scenes` renders mixed-dice scenes and :mod:`.evaluate` measures recall.
"""
