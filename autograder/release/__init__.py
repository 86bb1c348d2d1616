"""Building the learner release: an ordered pipeline of small steps (pipeline.py), the
manifest of protected files (manifest.py) and the leak checks (leaks.py)."""
