"""A softmax that answers the attention graders' probe with NaN, and nothing else, graded.

The attention graders do not charge NaN on fully masked queries when it comes from the learner's
own softmax (support.softmax_charge.charged_to_softmax: "a learner pays once for one mistake").

They decided that by calling the learner's softmax once, in the attention test, on a (2, 3) all -inf
probe. A softmax.py that returned NaN for exactly that probe, and was right everywhere else,
passed every softmax test; its attention, which gave NaN for fully masked queries (an inline
softmax with no guard), passed every attention test too: 100 points for a submission whose
attention is wrong, nothing told or flagged. The probe runs learner code, which can tell it apart.

The NaN is forgiven only when the softmax paid for it: a softmax test of this run named
softmax/nan-all-inf. An honest learner whose softmax gives NaN for an all -inf slice, called by an
attention through another name than the stand-in replaces, still pays once, in softmax.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "solutions" / "t101"

GUARDED_SOFTMAX = "    weights = softmax(scores, axis=-1)  # (..., L, S)\n"
INLINE_SOFTMAX = """\
    with np.errstate(invalid="ignore"):  # no guard: a fully masked query gives NaN
        top = np.max(scores, axis=-1, keepdims=True)
        e = np.exp(scores - top)
        weights = e / np.sum(e, axis=-1, keepdims=True)
"""
PROBE_START = "    x = np.asarray(x)\n    if not np.issubdtype"
PROBE_ANSWER = """\
    x = np.asarray(x)
    if x.shape == (2, 3) and np.all(x == -np.inf):  # the attention graders' probe
        return np.full((2, 3), np.nan)
    if not np.issubdtype"""


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path.name} changed: {old!r} is not in it"
    path.write_text(text.replace(old, new, 1))


def _grade(tmp: Path, name: str, edits) -> dict:
    package = tmp / name / "assignments" / "t101"
    shutil.copytree(REFERENCE, package)
    for file, old, new in edits:
        _edit(package / file, old, new)
    out = tmp / f"out-{name}"
    command = [sys.executable, "-m", "autograder", "grade", str(tmp / name), "--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert (out / "results.json").exists(), done.stdout + done.stderr
    return json.loads((out / "results.json").read_text())


def _component(results: dict, title: str) -> float:
    return sum(t["score"] for t in results["tests"] if t["name"].startswith(title + ":"))


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("softmax-probe")
    nan_attention = ("attention.py", GUARDED_SOFTMAX, INLINE_SOFTMAX)
    return {
        "honest": _grade(tmp, "honest", [nan_attention]),
        "probed": _grade(tmp, "probed", [nan_attention, ("softmax.py", PROBE_START, PROBE_ANSWER)]),
    }


@pytest.mark.hostile
def test_answering_the_probe_earns_nothing(graded):
    honest, probed = graded["honest"], graded["probed"]
    title = "Scaled dot-product attention"
    assert _component(honest, title) < 20.0  # the attention's own mistake costs points
    assert _component(probed, title) == pytest.approx(_component(honest, title))
    assert probed["score"] == pytest.approx(honest["score"])


@pytest.mark.hostile
def test_a_softmax_that_pays_for_its_nan_still_pays_once(tmp_path):
    """softmax.py gives NaN for an all -inf slice (its own tests charge it); attention.py calls
    it as `_sm.softmax`, a name the stand-in does not replace: attention is not charged again."""
    results = _grade(
        tmp_path,
        "pays-once",
        [
            ("softmax.py", "    m = np.where(m == -np.inf, 0, m).astype(x.dtype)\n", ""),
            (
                "softmax.py",
                "    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)",
                "    return e / total",
            ),
            ("attention.py", "from .softmax import softmax\n", "from . import softmax as _sm\n"),
            (
                "attention.py",
                "weights = softmax(scores, axis=-1)",
                "weights = _sm.softmax(scores, axis=-1)",
            ),
        ],
    )
    assert _component(results, "Softmax") < 10.0
    assert _component(results, "Scaled dot-product attention") == pytest.approx(20.0)
