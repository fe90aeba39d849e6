"""Readers measured but not shipped, kept so the issue's owner can judge them on any machine.

Each folder is a model folder for ``--models`` (``dicetower eval DIR --models
vision/training/candidates/NAME``). They are not the default reader: the shipped one is in
``vision/models``. Why they are here rather than under ``/tmp``: rebuilding one is hours of CPU
training (the trainer's docstring gives each chain), and a card's figures are only worth
something while the card itself can be read again.

- ``r4b`` (session 17, BENCHMARKS.md): R3's last stage run 75 minutes more, seed 176. On the
  test split it reads 700 of the four d6 sets' dice right against the shipped reader's 679, with
  3 wrong against 4 and no d6 face on the d20 photos, but 241 matteop65 dice against the ship
  rule's 243, so by the rule it did not ship.
"""
