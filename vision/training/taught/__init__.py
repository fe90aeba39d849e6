"""Measuring taught readers on real photos (repository only): the teach-then-read protocol."""
