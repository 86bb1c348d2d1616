"""The toy package of the runtime's call tests (test_runtime_calls.py, test_runtime_call_errors.py):
plain functions, modules, errors, output, the environment and forbidden APIs; one session on it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from autograder.runtime import LearnerSession, Limits
from tests.framework.toy_sessions import toy_session

FORBIDDEN = [
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "torch.nn.NoSuchLayerInThisVersion",
]
COURSE_MESSAGE = "The course asks you to build this yourself; {api} is not allowed."
CANARY = "AUTOGRADER_TEST_CANARY"

TOY = {
    # The package's __init__ fails (it imports a broken module); the others still import.
    "__init__.py": "from .broken_syntax import nothing\n",
    "broken_syntax.py": """\
        import numpy as np

        def f(x:
            return x
        """,
    "funcs.py": """\
        import os
        import sys

        import numpy as np


        def scale(x, factor=2.0):
            return x * factor


        def scale_in_place(x):
            x *= 3
            return None


        def todo(x):
            raise NotImplementedError("softmax is part of the assignment")


        def deep_failure(a, b):
            return _inner(a, b)


        def _inner(a, b):
            return a @ b


        def chatty(x):
            print("hello from the learner")
            print("to stderr", file=sys.stderr)
            os.write(1, b"raw fd write\\n")
            sys.stdout = open(os.devnull, "w")  # must not break the next calls
            return x + 1


        def environment():
            flags = (sys.flags.hash_randomization, sys.flags.no_user_site, sys.flags.safe_path)
            return dict(os.environ), os.getcwd(), flags, list(sys.path)


        def limits():
            import resource
            import signal
            return {
                "as": resource.getrlimit(resource.RLIMIT_AS),
                "core": resource.getrlimit(resource.RLIMIT_CORE),
                "fsize": resource.getrlimit(resource.RLIMIT_FSIZE),
                "sigxfsz_ignored": signal.getsignal(signal.SIGXFSZ) == signal.SIG_IGN,
                "session_leader": os.getsid(0) == os.getpid() == os.getpgid(0),
                "stdin": os.read(0, 10),
            }


        def shout():
            raise ValueError("\x1b[31mred alert\x1b[0m " + "x" * 3000)


        def forge_answer():
            import struct
            channel = int(sys.argv[1])
            os.write(channel, struct.pack("!i", 5) + b"hello")
            return 1


        def object_array():
            return np.array([1, "a"], dtype=object)


        def returns_function():
            return scale


        def nested():
            return {"a": [1, (2.5, None)], "b": np.float32(1.5), "c": torch_size()}


        def torch_size():
            import torch
            return torch.zeros(2, 3).shape


        SETTINGS = {"width": 4, "names": ("a", "b")}
        """,
    "composite.py": """\
        from toypkg.layers import uses_mha


        def build(width):
            return uses_mha(width)
        """,
    "layers.py": """\
        import torch
        from torch import nn
        import torch.nn.functional as F


        class Scaler(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.proj = nn.Linear(width, width)
                self.tied = self.proj  # the same parameters under a second name
                self.unused = nn.Linear(width, 1)

            def forward(self, x):
                return self.proj(x) * 2, "extra"


        def uses_sdpa(q, k, v):
            return F.scaled_dot_product_attention(q, k, v)


        def uses_mha(width):
            return nn.MultiheadAttention(width, 1)


        class Stack(nn.Module):
            def __init__(self, depth):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(depth)])


        class Shadowed(nn.Module):
            def __init__(self):
                super().__init__()
                self.eval = lambda: "the instance's own eval"  # hides nn.Module.eval

            @property
            def width(self):
                return 2


        class Detached(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(2, 2)

            def forward(self, x):
                return self.proj(x).detach()
        """,
}


def calls_session(folder: Path) -> Iterator[LearnerSession]:
    """A session on TOY written into folder, with the course's forbidden APIs raising and the
    canary set in the harness's environment (the worker must not see it): a fixture's body."""
    os.environ[CANARY] = "secret-value"
    try:
        yield from toy_session(
            folder,
            TOY,
            limits=Limits(test_timeout=20, import_timeout=20, memory_mb=2048, output_kb=1),
            forbidden_apis=FORBIDDEN,
            forbidden_message=COURSE_MESSAGE,
            display_dir="submission/toypkg",
            forbidden_raises=True,
        )
    finally:
        os.environ.pop(CANARY, None)
