"""Scoring readers on labelled photos: the eval, its splits, its intervals and its corrections.

- :mod:`.evaluate`: match readings to labels, count outcomes, report per folder;
- :mod:`.splits`: the train/val/test split that keeps near-duplicate photos together;
- :mod:`.intervals`: how far the figures could move on other photos like these;
- :mod:`.errata`: labels a person looked at again and corrected;
- :mod:`.calibrate`: choose the face reader's thresholds on an owner's labelled photos;
- :mod:`.annotate`: draw a reading and its labels on the photo;
- :mod:`.baseline`: the classic pip counter every figure is set beside.
"""
