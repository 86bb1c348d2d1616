"""The trusted side of the runtime: what the harness runs (see autograder/runtime/__init__.py)."""
