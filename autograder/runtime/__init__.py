"""The trust boundary: learner code runs in a separate, limited worker process.

Graders and the pytest plugin use LearnerSession; everything else here is private.

The names below are imported on first use (PEP 562), so that importing a light module of this
package (zygote_client, which a command starts before it imports torch) does not import torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autograder.runtime.client import DEFAULT_FORBIDDEN_MESSAGE, LearnerSession, ParameterInfo
    from autograder.runtime.errors import KINDS, LearnerError
    from autograder.runtime.limits import Limits
    from autograder.runtime.remote import (
        CallResult,
        RemoteCallable,
        RemoteMethod,
        RemoteModule,
        RemoteObject,
    )
    from autograder.runtime.trace import TestTrace
    from autograder.runtime.wire import WireError

_HOME = {
    "CallResult": "remote",
    "DEFAULT_FORBIDDEN_MESSAGE": "client",
    "KINDS": "errors",
    "LearnerError": "errors",
    "LearnerSession": "client",
    "Limits": "limits",
    "ParameterInfo": "client",
    "RemoteCallable": "remote",
    "RemoteMethod": "remote",
    "RemoteModule": "remote",
    "RemoteObject": "remote",
    "TestTrace": "trace",
    "WireError": "wire",
}
__all__ = [
    "CallResult",
    "DEFAULT_FORBIDDEN_MESSAGE",
    "KINDS",
    "LearnerError",
    "LearnerSession",
    "Limits",
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
