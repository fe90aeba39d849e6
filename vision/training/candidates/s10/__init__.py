"""The reader and detector shipped in sessions 3-17 (see the parent package), for ``--models``."""
