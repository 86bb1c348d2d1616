"""What the worker fork server and its client both name.

What the worker fork server (worker/zygote.py) and its client (harness/zygote_client.py)
both name: the folder layout the command creates and the zygote marks ready."""

from __future__ import annotations

#: FOLDER's subfolder only the harness's user may enter: the socket, the log, READY_FILE.
CONTROL_DIR = "control"
#: Made in FOLDER/control once the imports are done, before the first fork: a zygote without it
#: has no worker and cannot read its lifeline yet, so the command stops it at once.
READY_FILE = "ready"
#: The module a command starts as the fork server (``python -m``).
MODULE = "autograder.runtime.worker.zygote"
