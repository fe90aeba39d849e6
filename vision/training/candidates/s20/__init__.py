"""Session 20's nearest miss, S7: the shipped reader souped with one run trained on from it."""
