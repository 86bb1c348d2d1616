"""The release's own leak check: a release that would ship a reference body, a hidden test's
name, the course's stand-ins or any complete, numerically stable softmax is refused."""

import re

import pytest

from autograder.release import steps
from autograder.release.leaks import HIDDEN_NAME, PRIVATE_FILE, REFERENCE_BODY, STABLE_SOFTMAX
from autograder.release.pipeline import STEPS, ReleaseError, build_release
from autograder.release.stable_softmax import stable_softmaxes
from autograder.results.pass_rule import PassRule

from .conftest import ROOT


def _plant(monkeypatch, path, data, *, protected=True):
    """Add `path` to the release after its last content step (before the leak check)."""
    original = steps.add_gitignore

    def plant(release):
        original(release)
        release.add(path, data, protected=protected)

    monkeypatch.setattr(
        "autograder.release.pipeline.STEPS",
        tuple(plant if s is original else s for s in STEPS),
    )


def test_leak_check_refuses_a_reference_body(course, monkeypatch):
    _plant(monkeypatch, "autograder/planted.py", (ROOT / "solutions/t101/softmax.py").read_bytes())
    with pytest.raises(ReleaseError) as error:
        build_release(course, pass_rule=PassRule())
    assert REFERENCE_BODY.split("{")[0] in str(error.value)
    assert "autograder/planted.py" in str(error.value)


def test_leak_check_refuses_a_hidden_test_name(course, monkeypatch):
    hidden = (ROOT / "tests/graders/hidden/test_softmax_hidden.py").read_text()
    visible = (ROOT / "tests/graders/visible/test_softmax.py").read_text()
    name = next(n for n in re.findall(r"def (test_\w+)", hidden) if n not in visible)
    _plant(monkeypatch, "NOTES.md", f"See {name} for details.\n".encode(), protected=False)
    with pytest.raises(ReleaseError) as error:
        build_release(course, pass_rule=PassRule())
    assert str(error.value) == HIDDEN_NAME.format(name=name, path="NOTES.md")


def test_leak_check_refuses_the_stand_ins(course, monkeypatch):
    _plant(monkeypatch, "autograder/helpers.py", (ROOT / "solutions/standins.py").read_bytes())
    with pytest.raises(ReleaseError) as error:
        build_release(course, pass_rule=PassRule())
    assert "the body of the stand-in " in str(error.value)
    assert "(from standins.py) in autograder/helpers.py" in str(error.value)


def test_leak_check_refuses_the_stand_ins_file_by_its_path(course, monkeypatch):
    _plant(monkeypatch, "solutions/standins.py", b"KINDS = {}\nFUNCTIONS = {}\n")
    with pytest.raises(ReleaseError) as error:
        build_release(course, pass_rule=PassRule())
    assert str(error.value) == PRIVATE_FILE.format(path="solutions/standins.py")


STABLE = """\
import torch


def normalise(scores, dim=-1):
    shifted = scores - scores.amax(dim=dim, keepdim=True)
    e = torch.exp(shifted)
    return e / e.sum(dim, keepdim=True)


def _probabilities(z):
    m = np.max(z, axis=-1, keepdims=True)
    return np.exp(z - m) / np.sum(np.exp(z - m), axis=-1, keepdims=True)
"""


def test_leak_check_refuses_a_stable_softmax_written_anew(course, monkeypatch):
    """Not a copy of any reference: a softmax is the first component's answer, however
    written (torch or NumPy, the maximum inline or in a name)."""
    _plant(monkeypatch, "tests/graders/support/numerics.py", STABLE.encode())
    with pytest.raises(ReleaseError) as error:
        build_release(course, pass_rule=PassRule())
    path = "tests/graders/support/numerics.py"
    assert str(error.value) == " ".join(
        STABLE_SOFTMAX.format(name=name, path=path) for name in ("normalise", "_probabilities")
    )


@pytest.mark.parametrize(
    "source",
    [
        "def softmax(x, axis=-1):\n    raise NotImplementedError\n",  # the stub
        "def f(x):\n    return np.exp(x) / np.exp(x).sum(-1, keepdims=True)\n",  # unshifted
        "def f(x):\n    return x - x.max(-1, keepdims=True)\n",  # a shift, no exp
        "def f(x, m):\n    return np.exp(x - m) / np.exp(x - m).sum()\n",  # m given, no max
        "def lse(x):\n    m = x.max(-1, keepdims=True)\n"
        "    return m + np.log(np.exp(x - m).sum(-1))\n",
    ],
    ids=["stub", "unshifted", "no-exp", "no-max", "logsumexp"],
)
def test_what_is_not_a_stable_softmax(source):
    assert stable_softmaxes(source) == []


#: The stand-in softmax as the course wrote it before it became torch's (its text reaches a
#: worker: runtime/harness/standin_custody.py).
NUMPY_STANDIN = """
def softmax(x, axis=-1):
    x = np.asarray(x)
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(m == -np.inf, 0, m).astype(x.dtype))
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total != 0)
"""


def test_the_reference_and_a_numpy_stand_in_softmax_are_caught():
    """Both compute the shift through names (`m = np.where(m == -inf, 0, m)`) and divide with
    `np.divide(e, total, where=...)`."""
    reference = (ROOT / "solutions/t101/softmax.py").read_text()
    for source in (reference, NUMPY_STANDIN):
        assert "softmax" in stable_softmaxes(source)
