"""The confinement levels and the plan the harness sends the worker (both sides read them).

A plan is ``{"level", "hide": [paths], "writable": private base, "uid_ok": bool}``: the
harness computes it (harness/isolation.confinement_plan), the worker applies it to itself
before any learner code runs (worker/confine.confine). The levels, strongest first, are
described in harness/isolation.py.
"""

from __future__ import annotations

NAMESPACES = "namespaces"
USER_NAMESPACES = "user-namespaces"
PROCESS_GROUP = "process-group"
#: Files (and folders) per MiB of the disk quota ``[limits] disk_mb``: a tmpfs's inodes where
#: the worker has a root of its own, the harness's count elsewhere (a package holds 2000 at most).
FILES_PER_MB = 64
#: The uid the worker becomes where it may (namespaces level, a Python installation others read).
NOBODY = 65534
