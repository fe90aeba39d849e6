"""dicetower.rules."""
