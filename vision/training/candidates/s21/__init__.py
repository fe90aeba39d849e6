"""Session 21's O3: trained on rendered oblique dice; best most likely face on val, failed its gate."""
