"""Which of the learner's modules the current worker imported, and which failed for good.

Each worker imports the learner's package, then each module, on the first call into it. A
module that failed to import is remembered and fails again at once, with the same LearnerError,
for the rest of the session (no worker is started for it). A package ``__init__.py`` that runs
out of time or crashes is skipped by the next workers: a bare package stands in for it, so each
module can still be graded on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograder.runtime.harness import failures
from autograder.runtime.harness.failures import IMPORT_LABEL
from autograder.runtime.harness.worker_channel import WorkerChannel
from autograder.runtime.shared.errors import LearnerError

#: Sends one request to the worker: (request, label=..., phase=...) -> its response.
Request = Callable[..., dict[str, Any]]


class PackageImports:
    """The import state of the learner's package in ``channel``'s worker."""

    def __init__(self, channel: WorkerChannel, display_dir: str, request: Request) -> None:
        self.channel = channel
        self.display_dir = display_dir
        self.request = request
        #: The LearnerError of the package's ``__init__.py``, if executing it failed.
        self.package_init_error: LearnerError | None = None
        self.failures: dict[str, LearnerError] = {}
        self._imported: set[str] = set()
        self._package_ready = False

    def forget_worker(self) -> None:
        """A new worker has imported nothing yet."""
        self._imported = set()
        self._package_ready = False

    def file_of(self, name: str) -> str:
        """The module's file as messages name it: under display_dir, as the learner's
        repository names it."""
        return f"{self.display_dir.rstrip('/')}/{name.replace('.', '/')}.py"

    def ensure_package(self) -> None:
        """Import the package (its ``__init__.py``, or a bare one after it hung) in the worker."""
        while not self._package_ready:
            label = f"{IMPORT_LABEL}{self.file_of('__init__')}"
            try:
                response = self.request({"op": "import_package"}, label=label, phase="import")
            except LearnerError as err:
                if err.kind not in ("timeout", "crash") or self.channel.skip_init:
                    raise
                self.package_init_error = err
                self.channel.skip_init = True  # the next worker uses a bare package instead
                continue
            self._package_ready = True
            if response.get("init_error"):
                self.package_init_error = failures.from_worker(
                    response["init_error"], f"Importing {self.file_of('__init__')}"
                )

    def ensure_module(self, name: str) -> None:
        """Import ``<package>.<name>`` in the worker unless it is; raise its import failure."""
        failure = self.failures.get(name)
        if failure is not None:
            raise failure
        self.ensure_package()
        if name in self._imported:
            return
        request = {"op": "import", "module": name}
        try:
            self.request(request, label=f"{IMPORT_LABEL}{self.file_of(name)}", phase="import")
        except LearnerError as err:
            if err.kind == "forbidden":
                self._imported.add(name)
            else:
                self.failures[name] = err
            raise
        self._imported.add(name)
