"""Training and measuring the numeral kind-and-face reader (``vision/models/numeral_reader.onnx``).

:mod:`.scenes` renders one training crop, :mod:`.data` builds the cached crops, :mod:`.model`
and :mod:`.train` train and export; :mod:`.evaluate` prints every figure BENCHMARKS.md quotes.
"""
