"""The learner sources of the hostile cases (cases.py): code that detaches, clobbers, harvests,
steals the references, reaches forbidden APIs by other names, patches libraries or the harness."""

from __future__ import annotations

from tests.hostile.corpus import COURSE, EXAMPLE, MARKER, OUT, PACKAGE_DIR


def example_source(component: str) -> bytes:
    """The bytes of the example class's correct `component` file."""
    return (EXAMPLE / PACKAGE_DIR / f"{component}.py").read_bytes()


# A process that leaves its process group and session (double fork + setsid) and sleeps; its
# command line carries the session's marker, so a survivor is found by name after the run.
DETACH = f"""
import os as _os
def _detached(argv):
    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            try:
                _os.execvp(argv[0], argv)
            finally:
                _os._exit(0)
        _os._exit(0)
    _os.wait()
_detached(["sleep", "{MARKER}"])
import subprocess as _sp
_sp.Popen(["sleep", "{MARKER}"], start_new_session=True)
"""

# Overwrite the reports now and, from a detached shell, again and again after the run.
CLOBBER = f"""
import os as _os
for _name in ("results.json", "summary.md", "junit.xml", "grader.log", "planted.txt"):
    try:
        with open(_os.path.join("{OUT}", _name), "w") as _f:
            _f.write('{{"score": 100.0, "max_score": 100.0, "tests": []}}')
    except OSError:
        pass
if _os.fork() == 0:
    _os.setsid()
    if _os.fork() == 0:
        _loop = 'while :; do echo "{{\\\\"score\\\\": 100}}" > "$1/results.json"; sleep 0.2; done'
        try:
            _os.execvp("sh", ["sh", "-c", _loop, "{MARKER}", "{OUT}"])
        finally:
            _os._exit(0)
    _os._exit(0)
_os.wait()
"""

HOSTILE_TEXT = r"""
print("::error file=t101/softmax.py,line=1::forged annotation")
print("\x1b[2J\x1b]0;pwned title\x07\x1b[31m<script>alert(1)</script> **bold** [x](http://e.vil)")
raise ValueError(
    "::error::forged \ud800 lone\n::set-output name=score::100\n\x1b[31mred\x1b[0m "
    "<img src=x onerror=alert(1)> | cell | **b** `tick`"
)
"""

# Read the grader's secrets: its environment, every process's environment, the references and
# the hidden tests. Whatever is found goes into the exception message and the output.
HARVEST = """
import glob, os
found = {"environ": dict(os.environ)}
for path in glob.glob("/proc/[0-9]*/environ"):
    try:
        found[path] = open(path, "rb").read().decode(errors="replace")
    except OSError:
        pass
print(found)
raise RuntimeError("harvested " + repr(found))
"""

STEAL_REFERENCE = f"""
import glob as _glob
_errors = []
for _path in ["{COURSE}/solutions/t101/add_norm.py",
              "{COURSE}/tests/graders/hidden/test_add_norm_hidden.py",
              *_glob.glob("{COURSE}/**/add_norm*.py", recursive=True)]:
    try:
        _source = open(_path).read()
    except OSError as _exc:
        _errors.append(type(_exc).__name__)
        continue
    if "class AddNorm" in _source:
        _space = {{}}
        exec(compile(_source, _path, "exec"), _space)
        AddNorm = _space["AddNorm"]
        break
else:
    class AddNorm:
        def __init__(self, *args, **kwargs):
            raise RuntimeError("no reference found: " + ", ".join(_errors or ["nothing"]))
"""

FORBIDDEN_ALIAS = """
from torch.nn import functional as _Fx
_own = scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    import torch
    q = torch.zeros(1, 2, 4)
    getattr(_Fx, "scaled_dot_" + "product_attention")(q, q, q)
    return _own(Q, K, V, mask)
"""

FORBIDDEN_GETATTR = """
_own_forward = MultiHeadAttention.forward
def _forward(self, *args, **kwargs):
    getattr(nn, "Multihead" + "Attention")(4, 1)
    return _own_forward(self, *args, **kwargs)
MultiHeadAttention.forward = _forward
"""

# Forward compiled under torch's own file name: no frame of the call lies in the package.
FORBIDDEN_DISGUISED = """
import torch as _t
_ns = {"_own": PositionwiseFeedForward.forward, "nn": _t.nn}
_src = "def forward(self, x):\\n    nn.MultiheadAttention(4, 1)\\n    return _own(self, x)\\n"
exec(compile(_src, _t.__file__, "exec"), _ns)
PositionwiseFeedForward.forward = _ns["forward"]
"""

# Forward compiled as a package file no component owns (a helper module's name).
FORBIDDEN_HELPER = """
import os as _os
import torch as _t
_ns = {"_own": AddNorm.forward, "nn": _t.nn}
_src = "def forward(self, *a):\\n    nn.MultiheadAttention(4, 1)\\n    return _own(self, *a)\\n"
exec(compile(_src, _os.path.join(_os.path.dirname(__file__), "_helpers.py"), "exec"), _ns)
AddNorm.forward = _ns["forward"]
"""

# torch's private attention kernel: returns (output, weights), a whole attention.
FORBIDDEN_PRIVATE = """
_own_forward = MultiHeadAttention.forward
def _forward(self, *args, **kwargs):
    import torch
    q = torch.zeros(1, 2, 4)
    torch._scaled_dot_product_attention_math(q, q, q)
    return _own_forward(self, *args, **kwargs)
MultiHeadAttention.forward = _forward
"""

FORBIDDEN_C = """
_own_forward = PositionwiseFeedForward.forward
def _forward(self, x):
    import torch
    q = torch.zeros(1, 2, 4)
    torch._C._nn.scaled_dot_product_attention(q, q, q)
    return _own_forward(self, x)
PositionwiseFeedForward.forward = _forward
"""

PATCH_NUMPY = """
import numpy as _np
import numpy.testing as _npt
_np.allclose = lambda *a, **k: True
_np.array_equal = lambda *a, **k: True
_np.isclose = lambda a, b, *r, **k: _np.ones(_np.broadcast(a, b).shape, bool)
_npt.assert_allclose = lambda *a, **k: None
_npt.assert_array_equal = lambda *a, **k: None
def softmax(x, axis=-1):
    return _np.zeros(_np.shape(x))
"""

PATCH_TORCH = """
import torch as _torch
_torch.allclose = lambda *a, **k: True
_torch.equal = lambda *a, **k: True
_torch.testing.assert_close = lambda *a, **k: None
def _forward(self, x):
    return x * 0
PositionwiseFeedForward.forward = _forward
"""

PATCH_PYTEST = """
import pytest as _pytest
import _pytest.outcomes as _outcomes
_pytest.approx = lambda expected, *a, **k: expected
_pytest.fail = _outcomes.fail = lambda *a, **k: None
_pytest.skip = _outcomes.skip = lambda *a, **k: None
def _forward(self, x, sublayer_output):
    return x * 0
AddNorm.forward = _forward
"""

PATCH_BUILTINS = """
import builtins as _builtins
_builtins.all = lambda *a, **k: True
_builtins.abs = lambda x: 0
_builtins.round = lambda *a, **k: 0
def _forward(self, query, key, value, mask=None):
    return query * 0, None
MultiHeadAttention.forward = _forward
"""

SYNTAX_ERROR_FEED_FORWARD = example_source("feed_forward").replace(
    b"        super().__init__()", b"        super(.__init__()"
)
