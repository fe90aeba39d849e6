"""Teaching the tower its owner's dice: a teach folder's crops, grouped, named and fitted (docs/teach.md).

- :mod:`.naming`: ``teach.json`` read and written, the steps that name a die's groups, the labels
  file, and the labelled ``manifest.jsonl`` that ``dicetower eval`` reads.
"""
