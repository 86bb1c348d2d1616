"""A module that fails to import costs its own file, not every file that imports it
(runtime/harness/package_imports.py, runtime/worker/unavailable_modules.py), end to end through
`autograder grade` on submissions made from the reference:

* `mha_syntax`: multi_head_attention.py has a syntax error. encoder.py imports it at its top,
  so before, the encoder failed to import too and scored 0 / 25. Now it is imported with a
  placeholder MultiHeadAttention, its wiring is graded on the course's stand-ins, and only the
  tests that read its attention's parameters fail, each saying to fix Multi-head attention
  first.
* `mha_missing_library`: the same, with an import of a library the grader lacks.
* `own_import_error`: encoder.py calls a function of add_norm.py at import time that raises.
  add_norm.py imports fine on its own, so the failure is the encoder's own and stays.
"""

from __future__ import annotations

import pytest

from tests.examples.edited import edited_reference, grade

FIX_MHA_FIRST = "Fix Multi-head attention first: this part builds on it, and its own tests fail."
#: The encoder tests that read its self_attn's own parameters (the structure tests).
READS_ATTENTION_PARAMETERS = 4
HEAD = "from torch import nn\n"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("imports")
    check = "from .add_norm import AddNorm\n"
    edits = {
        "mha_syntax": {"multi_head_attention.py": [(HEAD, f"{HEAD}def broken(:\n")]},
        "mha_missing_library": {
            "multi_head_attention.py": [(HEAD, f"{HEAD}import library_the_grader_lacks\n")]
        },
        "own_import_error": {
            "add_norm.py": [(HEAD, f"{HEAD}\n\ndef check():\n    1 / 0\n")],
            "encoder.py": [(check, f"{check}from .add_norm import check\n\ncheck()\n")],
        },
    }
    subs = [edited_reference(base / name, edit) for name, edit in edits.items()]
    return grade(subs, base / "grades")


def component_tests(document, component: str) -> list[dict]:
    return [t for t in document["tests"] if t["tags"] == [component]]


@pytest.mark.parametrize("name", ["mha_syntax", "mha_missing_library"])
def test_an_encoder_that_imports_a_broken_attention_keeps_its_wiring_points(graded, name):
    document = graded[name]
    attention = component_tests(document, "multi_head_attention")
    assert attention and all(t["score"] == 0 for t in attention)
    encoder = component_tests(document, "encoder")
    failed = [t for t in encoder if t["status"] != "passed"]
    assert (len(encoder), len(failed)) == (15, READS_ATTENTION_PARAMETERS)
    assert all(t["output"].endswith(FIX_MHA_FIRST) for t in failed)
    assert all("self_attn.W_q.weight" in t["output"] for t in failed)
    # the four structure tests weigh 2 of the encoder's 12 (tests/graders: weight markers)
    assert sum(t["score"] for t in encoder) == pytest.approx(25.0 * 10 / 12)


def test_an_import_failure_of_the_encoders_own_stays_its_own(graded):
    document = graded["own_import_error"]
    assert all(t["status"] == "passed" for t in component_tests(document, "add_norm"))
    encoder = component_tests(document, "encoder")
    assert encoder and all(t["score"] == 0 for t in encoder)
    assert all("ZeroDivisionError" in t["output"] for t in encoder)
    assert not any("first:" in t["output"] for t in encoder)
