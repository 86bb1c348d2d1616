"""Graders that never ship: other sizes, seeds and masks; may also use the reference."""
