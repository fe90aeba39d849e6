"""``python -m dicetower.firmware.cli``."""

import sys

from . import main

sys.exit(main())
