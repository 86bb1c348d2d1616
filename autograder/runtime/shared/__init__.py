"""What both sides of the runtime read (see autograder/runtime/__init__.py)."""
