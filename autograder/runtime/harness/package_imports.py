"""Which of the learner's modules the current worker imported, and which failed for good.

Each worker imports the learner's package, then each module, on the first call into it. A
module that failed to import is remembered and fails again at once, with the same LearnerError,
for the rest of the session (no worker is started for it). A package ``__init__.py`` that runs
out of time or crashes is skipped by the next workers: a bare package stands in for it, so each
module can still be graded on its own.

A module whose import failed inside another course module that fails to import on its own
(``encoder.py`` importing a ``multi_head_attention.py`` with a syntax error) is imported again
with that one unavailable (worker/unavailable_modules.py): a mistake costs its own file, not
every file that imports it. The evidence is the harness's: the failure's file is checked
against the course's files, and the other module's own import fails in the harness's eyes.
Tampering seen in that import fails the running test as tampering, as anywhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from autograder.runtime.harness import failures
from autograder.runtime.harness.failures import IMPORT_LABEL
from autograder.runtime.harness.worker_channel import WorkerChannel
from autograder.runtime.shared.errors import LearnerError

#: Sends one request to the worker: (request, label=..., phase=...) -> its response.
Request = Callable[..., dict[str, Any]]


class PackageImports:
    """The import state of the learner's package in ``channel``'s worker."""

    def __init__(
        self,
        channel: WorkerChannel,
        display_dir: str,
        request: Request,
        modules: Sequence[str] = (),
    ) -> None:
        self.channel = channel
        self.display_dir = display_dir
        self.request = request
        self.modules = tuple(modules)  # the course's modules, which may stand unavailable
        #: module -> the course modules that failed on their own and are unavailable to it.
        self.unavailable: dict[str, list[str]] = {}
        self._importing: set[str] = set()
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
        self._importing.add(name)
        try:
            self._import(name)
        finally:
            self._importing.discard(name)
        self._imported.add(name)

    def _import(self, name: str) -> None:
        """Import ``name``, again with each course module it failed in unavailable while that
        module fails on its own too; record and raise the failure that remains."""
        while True:
            self.ensure_package()  # again in a new worker (the other module's import ended one)
            request = {
                "op": "import",
                "module": name,
                "unavailable": self.unavailable.get(name, []),
            }
            try:
                self.request(request, label=f"{IMPORT_LABEL}{self.file_of(name)}", phase="import")
                return
            except LearnerError as err:
                if err.kind == "forbidden":
                    self._imported.add(name)
                    raise
                failed = self._failed_on_its_own(err, name)
                if failed is None:
                    self.failures[name] = err
                    raise
                self.unavailable.setdefault(name, []).append(failed)

    def _failed_on_its_own(self, err: LearnerError, name: str) -> str | None:
        """The course module, other than ``name``, whose file ``err`` was raised in, when it
        fails to import on its own; else None (``name``'s failure is then its own)."""
        others = [m for m in self.modules if m != name and self.file_of(m) == err.file]
        if (
            not others
            or others[0] in self._importing
            or others[0] in self.unavailable.get(name, [])
        ):
            return None
        try:
            self.ensure_module(others[0])
        except LearnerError as own:
            if own.kind == "tampered":
                raise  # seen during this test: its own tampering, never a reason to retry
            return others[0] if own.kind != "forbidden" else None
        return None
