"""A table of towers on one machine, for the tests and ``bench/hub_load.py``: a real Mosquitto on
a free loopback port (``broker``) and towers, a hub and an overlay client as real processes
(``table``).

Kept in the repository and out of the wheel (setup.py's ``NOT_INSTALLED``), as the training
code is: both the tests and the benchmarks import it from one place, and neither reaches into
the other's folder.
"""

__all__: list[str] = []
