"""The softmax's share in the attention tests: who pays for a softmax mistake.

Course rule: a learner pays once for one mistake. The attention tests call a known-good softmax
where the learner's attention calls its own (use_known_good_softmax), and an attention whose only
fault is the NaN its softmax gives on fully masked queries is not charged again for it
(charged_to_softmax), when the softmax's own tests of this run charged it.
"""

from __future__ import annotations

import numpy as np

from autograder.pytest_plugin import earlier_results
from autograder.results.mistake_tags import named_mistakes
from autograder.runtime.shared.errors import LearnerError
from tests.graders.support.mistakes import masked_attention

#: The id a softmax test names when the learner's softmax gives NaN for an all -inf slice.
NAN_ALL_INF_ID = "softmax/nan-all-inf"


def use_known_good_softmax(learner, request=None) -> bool:
    """Make the learner's attention module call a known-good softmax where it calls the
    learner's own, imported by name (`from .softmax import softmax`): the softmax graders
    charge a softmax mistake; the attention graders grade the attention (course rule: a learner
    pays once for one mistake; H44: a softmax summing without keepdims also cost 12 attention
    points). Call it in each test: a new worker (after a time-out) starts without it. Returns
    whether it did, and tells the report (request: the test's) that this test's softmax is
    not the learner's; False where the course supplies no stand-ins (a learner's own
    repository), so the attention tests use the learner's softmax."""
    if learner.standins is None:
        return False
    replaced = learner.stand_in_function("attention", "softmax", source="softmax", kind="softmax")
    if replaced and request is not None:
        request.node.user_properties.append(("replaced", "softmax"))
    return replaced


def charged_to_softmax(learner, got: object, Q, K, V, mask, *, atol: float) -> bool:
    """True when `got` (output, weights) is right except for NaN on the queries whose keys are
    all masked, and the learner's own softmax (t101/softmax.py) gives NaN for an all -inf slice.

    That NaN is the softmax's mistake (softmax/nan-all-inf), which the softmax graders charge; an
    attention that passes its scores to that softmax is not charged for it a second time (course
    rule: a learner pays once for one mistake). The learner's softmax is called only then.
    """
    if mask is None:
        return False
    mask = np.asarray(mask, dtype=bool)
    if mask.any(axis=-1).all() or not _pair_close(got, masked_attention(Q, K, V, mask), atol):
        return False
    paid = _softmax_paid_for_nan()
    if paid is not None:
        return paid
    try:
        probe = learner.module("softmax").softmax(np.full((2, 3), -np.inf))
        return bool(np.isnan(np.asarray(probe, dtype=np.float64)).all())
    except (LearnerError, TypeError, ValueError):
        return False


def _softmax_paid_for_nan() -> bool | None:
    """Whether a softmax test of this run charged softmax/nan-all-inf; None when no softmax
    test ran (a run of some components only: then the learner's softmax is asked).

    Asking the learner's softmax inside an attention test (a (2, 3) all -inf probe) let learner
    code answer the probe alone with NaN, right in every softmax test: an attention giving NaN
    on fully masked queries then passed, paid for nowhere (tests/hostile/test_softmax_probe.py).
    The softmax's own tests, which run first, decide instead. A softmax that gives NaN in only
    some of them still pays there, at least the cheapest one."""
    own = [r for r in earlier_results() if r.component == "softmax"]
    if not own:
        return None
    return any(
        not r.passed and any(tag == NAN_ALL_INF_ID for tag, _ in named_mistakes(r.message))
        for r in own
    )


def _pair_close(got: object, expected: tuple, atol: float) -> bool:
    """got is an (output, weights) pair equal to expected, NaN matching NaN."""
    if not isinstance(got, tuple) or len(got) != 2:
        return False
    for have, want in zip(got, expected, strict=True):
        if hasattr(have, "detach"):
            have = have.detach().double().numpy()
        try:
            have = np.asarray(have, dtype=np.float64)
        except (TypeError, ValueError):
            return False
        if have.shape != want.shape or not np.allclose(have, want, atol=atol, equal_nan=True):
            return False
    return True
