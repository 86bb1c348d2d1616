"""Several of the learner's calls in one request: LearnerSession.build, chain and set_standins.

A grader often makes a module, loads weights into it and switches it to eval mode: three
requests, each a round trip to the worker. A fused request runs them in the worker in one
(worker/handler.op_chain, op_set_standins) and fails exactly as the separate calls would: the
first call that fails stops the rest and is named (part_labels.py). Steps the worker left
undone (a call label struck out for its time-outs) are made here, one request each, as the
grader's own ``obj.name(...)`` would make them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from autograder.runtime.harness import failures
from autograder.runtime.harness.part_labels import ChainLabels
from autograder.runtime.harness.remote import RemoteCallable, RemoteObject

if TYPE_CHECKING:
    from autograder.runtime.harness.learner_session import LearnerSession

#: A method call on an object: (name, args, kwargs).
Step = tuple[str, tuple, dict[str, Any]]
#: A stand-in to set: (path, kind, config, state dict).
Part = tuple[str, str, dict[str, Any], Any]


def steps_here(obj: Any, steps: Sequence[Step]) -> list:
    """Each step as its own call, from the harness (a plain object, or what the worker left)."""
    return [getattr(obj, name)(*args, **kwargs) for name, args, kwargs in steps]


def build(
    session: LearnerSession,
    factory: RemoteCallable | RemoteObject,
    args: tuple,
    kwargs: dict[str, Any],
    state: Any,
) -> Any:
    """``factory(*args, **kwargs)``, ``.load_state_dict(state)`` (unless None), ``.eval()``."""
    steps: list[Step] = []
    if state is not None:
        steps.append(("load_state_dict", (state,), {}))
    steps.append(("eval", (), {}))
    if not isinstance(factory, (RemoteCallable, RemoteObject)):
        obj = factory(*args, **kwargs)
        steps_here(obj, steps)
        return obj
    label = f"{factory._qualname if isinstance(factory, RemoteCallable) else factory._label}"
    owner = factory if isinstance(factory, RemoteObject) else None
    obj, _ = chain(session, factory._target, f"{label}(...)", (args, kwargs), steps, owner)
    return obj


def chain(
    session: LearnerSession,
    target: list[Any],
    call_label: str | None,
    call: tuple[tuple, dict[str, Any]] | None,
    steps: Sequence[Step],
    owner: RemoteObject | None,
) -> tuple[Any, list[Any]]:
    """handler.op_chain: call ``target`` with ``call`` (or take it as it is), then the steps'
    method calls on the result; the steps the worker left run here."""
    steps = list(steps)
    if call is None and not steps:
        return owner, []
    if session.forbidden_raises:  # each call's own forbidden records decide at once
        if call is None:
            return owner, steps_here(owner, steps)
        fields = {"args": call[0], "kwargs": call[1], "args_back": False}
        head = session._run("call", target, call_label or failures.SOME_CALL, fields, owner)
        obj = session._decode(head["value"], call_label or failures.SOME_CALL)
        return obj, steps_here(obj, steps)
    owner_type = owner._type_name if owner is not None and call is None else None
    first = [call_label] if call_label is not None else []
    labels = ChainLabels(first, [name for name, _, _ in steps], owner_type)
    fields: dict[str, Any] = {
        "steps": [{"name": name, "args": a, "kwargs": k} for name, a, k in steps],
        "stop": session._channel.strikes.labels_out(),
    }
    if call is not None:
        fields["call"] = {"args": call[0], "kwargs": call[1]}
    response = session._run("chain", target, labels.first_label, fields, owner, labels)
    values = session._decode(response["value"], labels.first_label)
    obj = values[0] if call is not None else owner
    done = len(values) - 1
    return obj, values[1:] + steps_here(obj, steps[done:])


def set_standins(
    session: LearnerSession, obj: RemoteObject, parts: Sequence[Part], then: Sequence[Step]
) -> None:
    """Each stand-in of ``parts`` set in order, then the method calls ``then``, in one request."""
    if not parts:
        session.chain(obj, then)
        return
    labels = [f"Setting {obj._short_type}.{path}" for path, *_ in parts]
    fields: dict[str, Any] = {
        "parts": [
            {"path": path, "kind": kind, "config": config, "state": state}
            for path, kind, config, state in parts
        ]
    }
    steps = list(then)
    if steps and session.forbidden_raises:  # each call's own forbidden records decide at once
        set_standins(session, obj, parts, ())
        steps_here(obj, steps)
        return
    if steps:
        fields["steps"] = [{"name": n, "args": a, "kwargs": k} for n, a, k in steps]
        fields["stop"] = session._channel.strikes.labels_out()
    part_labels = ChainLabels(labels, [name for name, _, _ in steps], obj._type_name)
    with session._custody.handing():
        fields.update(session._custody.fields())
        response = session._run("set_standins", obj._target, labels[0], fields, obj, part_labels)
    done = len(session._decode(response["value"], labels[0]) or [])
    steps_here(obj, steps[done:])
