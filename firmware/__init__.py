"""dicetower.firmware."""
