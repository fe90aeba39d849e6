"""Session 17's R4b reader card (see the parent package): a model folder for ``--models``."""
