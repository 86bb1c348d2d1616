"""The trust boundary: learner code runs in a separate, limited worker process.

Graders and the pytest plugin use LearnerSession; everything else here is private. The package
is split by the side each module runs on:

* ``harness/``: the trusted side (LearnerSession and its proxies, starting, confining and
  timing workers, the fork server's client, the failures the harness builds);
* ``worker/``: what runs in the untrusted worker (its request loop, the importer, the
  forbidden-API recorders, its own confinement, the fork server it is forked from); it imports
  nothing from ``harness/`` and only ``worker/`` and ``shared/`` are copied for it;
* ``shared/``: what both sides read (the wire codec, learner-facing sentences, LearnerError,
  the confinement levels, CPU affinity, the registry of a course's stand-ins).

The names below are imported on first use (PEP 562), so that importing a light module of this
package (zygote_client, which a command starts before it imports torch) does not import torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autograder.runtime.harness.failures import MachineBusy
    from autograder.runtime.harness.learner_session import (
        DEFAULT_FORBIDDEN_MESSAGE,
        LearnerSession,
        ParameterInfo,
    )
    from autograder.runtime.harness.limits import Limits
    from autograder.runtime.harness.remote import (
        CallResult,
        RemoteCallable,
        RemoteMethod,
        RemoteModule,
        RemoteObject,
    )
    from autograder.runtime.harness.trace import TestTrace
    from autograder.runtime.shared.errors import KINDS, LearnerError
    from autograder.runtime.shared.wire import WireError

_HOME = {
    "CallResult": "harness.remote",
    "DEFAULT_FORBIDDEN_MESSAGE": "harness.learner_session",
    "KINDS": "shared.errors",
    "LearnerError": "shared.errors",
    "LearnerSession": "harness.learner_session",
    "Limits": "harness.limits",
    "MachineBusy": "harness.failures",
    "ParameterInfo": "harness.learner_session",
    "RemoteCallable": "harness.remote",
    "RemoteMethod": "harness.remote",
    "RemoteModule": "harness.remote",
    "RemoteObject": "harness.remote",
    "TestTrace": "harness.trace",
    "WireError": "shared.wire",
}
__all__ = [
    "CallResult",
    "DEFAULT_FORBIDDEN_MESSAGE",
    "KINDS",
    "LearnerError",
    "LearnerSession",
    "Limits",
    "MachineBusy",
    "ParameterInfo",
    "RemoteCallable",
    "RemoteMethod",
    "RemoteModule",
    "RemoteObject",
    "TestTrace",
    "WireError",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'autograder.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"autograder.runtime.{home}"), name)
    globals()[name] = value
    return value
