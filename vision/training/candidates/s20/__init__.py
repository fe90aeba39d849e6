"""Session 20's nearest miss, S7 (a soup of the shipped reader and one run trained on from it; see the parent package)."""
