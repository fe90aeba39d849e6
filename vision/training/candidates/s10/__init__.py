"""The reader shipped in sessions 3-17 (see the parent package): a model folder for ``--models``."""
