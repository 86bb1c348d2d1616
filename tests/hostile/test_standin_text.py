"""Reading the course's stand-ins out through a learner's own reports (hostile tester's finding).

The request that sets a stand-in carries the stand-ins file's text; learner code that hooked
`io.BytesIO` kept it and printed it in a later visible encoder test: the course's known-good
multi-head attention, Add & Norm and softmax reached the learner's results.json. Now a request
setting a function stand-in (attention's softmax) carries the file without its classes, and from
the request that carries the whole file until that worker is replaced, no text of the worker's
reaches the learner: its output is withheld and its errors are told as in a hidden test
(runtime/harness/standin_custody.py).
"""

from __future__ import annotations

import json

from autograder.runtime.shared.messages import OUTPUT_WITHHELD

from ..examples.edited import grade_one_edit

SPY = """import io as _io

_FRAMES = []
_Bytes = _io.BytesIO


class _Spy(_Bytes):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if args and isinstance(args[0], bytes) and b"KINDS" in args[0]:
            _FRAMES.append(args[0])


_io.BytesIO = _Spy


def seen():
    return b"".join(_FRAMES).decode("utf-8", errors="replace")
"""

DOC = (
    '    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, ' + "with an optional boolean mask."
)
ATTENTION_EDITS = [
    ("import numpy as np\n", SPY + "import numpy as np\n"),
    (
        DOC,
        DOC
        + '''"""
    if "def softmax_like" in seen():
        print("FUNCTION-TEXT-SEEN")
    if "StandIn(nn.Module)" in seen():
        print("CLASS-TEXT-SEEN")
    """The function's docstring, as the reference has it.''',
    ),
]
ENCODER_EDITS = [
    (
        '''        """x (B, L, d_model), mask None or bool broadcastable to (B, h, L, L) (True = may
        attend) -> (B, L, d_model)."""''',
        '''        """x (B, L, d_model), mask None or bool broadcastable to (B, h, L, L) (True = may
        attend) -> (B, L, d_model)."""
        from .attention import seen

        if "StandIn(nn.Module)" in seen():
            print("CLASS-TEXT-SEEN", seen())
            raise ValueError("CLASS-TEXT-SEEN " + seen()[:3000])''',
    ),
]


def test_the_stand_ins_never_reach_the_learners_reports(tmp_path):
    results = grade_one_edit(
        tmp_path,
        "spy",
        {"attention.py": ATTENTION_EDITS, "encoder.py": ENCODER_EDITS},
    )
    text = json.dumps(results)
    # What any test showed: no class of the file, its text or its marker
    for secret in ("CLASS-TEXT-SEEN", "StandIn", "W_o(concat)", "masked_fill"):
        assert secret not in text, secret
    outputs = [test["output"] for test in results["tests"]]
    # The attention tests ran beside the softmax stand-in alone, and show the learner's output
    assert any("FUNCTION-TEXT-SEEN" in output for output in outputs)
    # The encoder tests that ran beside the module stand-ins say their output is withheld
    encoder = [t for t in results["tests"] if "encoder" in t["tags"]]
    assert any(OUTPUT_WITHHELD.strip() in t["output"] for t in encoder)
    assert any(t["score"] < t["max_score"] for t in encoder)  # its ValueError failed them
