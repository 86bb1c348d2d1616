"""The trust boundary: learner code runs in a separate, limited worker process.

Graders and the pytest plugin use LearnerSession; everything else here is private.
"""

from autograder.runtime.client import DEFAULT_FORBIDDEN_MESSAGE, LearnerSession, ParameterInfo
from autograder.runtime.errors import KINDS, LearnerError
from autograder.runtime.limits import Limits
from autograder.runtime.remote import CallResult, RemoteCallable, RemoteModule, RemoteObject
from autograder.runtime.trace import TestTrace
from autograder.runtime.wire import WireError

__all__ = [
    "CallResult",
    "DEFAULT_FORBIDDEN_MESSAGE",
    "KINDS",
    "LearnerError",
    "LearnerSession",
    "Limits",
    "ParameterInfo",
    "RemoteCallable",
    "RemoteModule",
    "RemoteObject",
    "TestTrace",
    "WireError",
]
