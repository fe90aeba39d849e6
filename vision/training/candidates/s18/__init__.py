"""The reader shipped in session 18 (session 17's R4b; see the parent package), for ``--models``."""
