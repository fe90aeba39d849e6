"""Reading a located die's face: pips on a d6, numerals on the other kinds.

- :mod:`.pips`: the d6 face reader (a small network over the die's crop) and its crops;
- :mod:`.thresholds`: per-face acceptance thresholds, how sure a face must be to count;
- :mod:`.topface`: where the read face lies, found from its pips;
- :mod:`.numerals`: the kind-and-face network for numeral d6, d10, d10t and d20;
- :mod:`.glyphs`: the upright-numeral reader that turns a numeral die's middle until it reads;
- :mod:`.numeral_centre` and :mod:`.ink`: where a numeral lies, and one grey channel for its ink.

Each module reads crops it is given; finding dice and putting the readings together is
:mod:`dicetower.vision.reader`'s job.
"""
