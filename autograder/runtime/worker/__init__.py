"""The untrusted worker side of the runtime.

It imports nothing from harness/ (see autograder/runtime/__init__.py); ``python -m
autograder.runtime.worker`` starts a worker."""
