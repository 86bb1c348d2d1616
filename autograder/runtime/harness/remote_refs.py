"""What the harness knows of the current worker's objects: their proxies and their methods.

An object the learner's code returns that is not a plain value stays in the worker and comes
back as a reference; ``RemoteRefs`` keeps one RemoteObject per live worker object (so
``m.eval() is m`` and releases are exact), encodes proxies back into references, and keeps the
method names the worker described for each type (a method call is then one request). All of
it is void once the worker stops (``forget_worker``).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from autograder.runtime.harness import failures
from autograder.runtime.harness.limits import Limits
from autograder.runtime.harness.remote import RemoteObject
from autograder.runtime.harness.worker_channel import WorkerChannel
from autograder.runtime.harness.worker_text import defused
from autograder.runtime.shared import wire

if TYPE_CHECKING:
    from autograder.runtime.harness.learner_session import LearnerSession

MAX_TYPES_PER_RESPONSE = 1000  # type descriptions kept from one response (see learn_methods)


class RemoteRefs:
    """The proxies of ``session``'s worker objects, valid while ``channel`` keeps that worker."""

    def __init__(self, session: LearnerSession, channel: WorkerChannel, limits: Limits) -> None:
        self.session = session
        self.channel = channel
        self.limits = limits
        self._remotes: weakref.WeakValueDictionary[int, RemoteObject] = (
            weakref.WeakValueDictionary()
        )
        #: type name -> its method names (worker/handler._method_names), as this worker sent them
        self._methods: dict[str, frozenset[str]] = {}

    def forget_worker(self) -> None:
        """The worker stopped or was replaced: none of its objects or types is known."""
        self._remotes = weakref.WeakValueDictionary()
        self._methods = {}

    def encode(self, value: Any) -> Any:
        """``value`` as a tree for the worker; a RemoteObject becomes its reference."""
        return wire.encode(
            value,
            on_other=self._ref_of,
            max_bytes=self.limits.max_wire_bytes,
            max_depth=self.limits.max_wire_depth,
        )

    def _ref_of(self, obj: Any) -> tuple:
        if not isinstance(obj, RemoteObject):
            raise wire.WireError(f"a {type(obj).__qualname__} cannot be sent to the learner's code")
        self.check_alive(obj)
        return ("ref", obj._ref_id, obj._type_name, obj._label)

    def check_alive(self, obj: RemoteObject) -> None:
        """Raise the learner's "crash" error for a proxy of a worker that has since stopped."""
        channel = self.channel
        if obj._session is not self.session or obj._generation != channel.generation:
            raise failures.stale(obj._type_name)
        if channel.worker is None:
            raise failures.stale(obj._type_name)

    def decode(self, tree: Any, label: str) -> Any:
        """A value the worker sent for the call ``label``; its bad return when it cannot be."""
        generation = self.channel.generation

        def make(ref_id: int, type_name: str, ref_label: str) -> RemoteObject:
            remote = self._remotes.get(ref_id)
            if remote is None:
                type_name, ref_label = defused(type_name), defused(ref_label)
                remote = RemoteObject(self.session, ref_id, type_name, ref_label, generation)
                self._remotes[ref_id] = remote
                if ref_id in self.channel.pending_release:  # its last proxy died; it lives on
                    self.channel.pending_release.remove(ref_id)
            return remote

        try:
            return wire.decode(tree, on_ref=make, max_depth=self.limits.max_wire_depth)
        except (wire.WireError, ValueError, TypeError, OverflowError, RuntimeError) as error:
            # What the worker sent is learner-made (a subclass's shape, say): their mistake,
            # told as one, never the grader's error.
            raise failures.unreadable(label, error) from None

    def release(self, obj: RemoteObject) -> None:
        """The last proxy of a worker object died: the next request lets the worker drop it."""
        if obj._generation == self.channel.generation and self.channel.worker is not None:
            self.channel.pending_release.append(obj._ref_id)

    def has_method(self, obj: RemoteObject, name: str) -> bool:
        """Whether reading ``name`` from ``obj`` gives a bound method of its class's function
        (then obj.name(...) is one request, not a read and a call)."""
        if obj._generation != self.channel.generation:
            return False
        return name in self._methods.get(obj._type_name, ())

    def learn_methods(self, methods: Any) -> None:
        """Keep the method names the worker sent for types it described for the first time.
        They only decide whether a call takes one request or two, so anything malformed is
        ignored."""
        if not isinstance(methods, dict):
            return
        for type_name, names in list(methods.items())[:MAX_TYPES_PER_RESPONSE]:
            if isinstance(type_name, str) and isinstance(names, list):
                own = frozenset(n for n in names if isinstance(n, str))
                self._methods[defused(type_name)] = own
