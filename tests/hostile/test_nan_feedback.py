"""A learner output full of NaN or inf gets readable sentences: the count of non-finite entries,
then the comparison as a sentence of its own (it read '... are finite. the output of ...')."""

from __future__ import annotations

import re

import pytest
import torch

from autograder.feedback import GradingFailure, expect_close


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_every_sentence_of_a_non_finite_failure_starts_with_a_capital(bad):
    expected = torch.arange(6.0).reshape(2, 3)
    got = expected.clone()
    got[0, 1] = bad
    with pytest.raises(GradingFailure) as info:
        expect_close(got, expected, what="the output of f(x)", atol=1e-5)
    message = info.value.message
    assert message.startswith("The output of f(x) contains 1 ")
    assert "The output of f(x) differs from the expected values: 1 of 6 entries" in message
    assert not re.search(r"\. [a-z]", message), message


def test_a_tuple_of_tensors_that_need_gradients_is_named_not_a_grader_error():
    """np.asarray of such a tuple raises RuntimeError ("Can't call numpy() on Tensor that
    requires grad"): a learner's forward returning (out, out) made it a grader error."""
    out = torch.ones(2, 3, requires_grad=True) * 2
    with pytest.raises(GradingFailure) as info:
        expect_close((out, out), torch.ones(2, 3), what="the output of f(x)", atol=1e-5)
    assert info.value.message == (
        "The output of f(x) returned a tuple of 2 items; expected an array of numbers."
    )
