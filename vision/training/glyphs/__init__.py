"""Training and measuring the upright-numeral reader (``vision/models/glyph_reader.onnx``).

:mod:`.data` draws upright numerals, :mod:`.real` and :mod:`.renders` cut upright crops of real
and rendered dice, :mod:`.train` trains and exports, :mod:`.evaluate` and :mod:`.folds` measure.
"""
