"""support.params.forward_first: a failing gradient check is explained by the forward pass when
that already differs (naming its known mistake), and otherwise keeps or sharpens its own hint."""

from __future__ import annotations

import pytest

from autograder.feedback import GradingFailure
from autograder.runtime.shared.errors import LearnerError
from tests.graders.support.params import (
    FORWARD_RIGHT,
    NO_GRADIENT,
    NO_GRADIENT_ADVICE,
    forward_first,
)

GRADIENT = (
    "The gradient of W_q.weight differs from the expected values: all of its entries differ. "
    "Hint: gradients follow from the forward pass, so fix any forward mismatch first."
)
MISSING = NO_GRADIENT.format(what="MultiHeadAttention(16, 4)(x, x, x)", names="W_o.weight")
NAMED = "Known mistake in the output: [multi_head_attention/no-output-projection] Apply W_o."


def failing_forward() -> None:
    raise GradingFailure(NAMED)


def right_forward() -> None:
    return None


def learner_error(kind: str) -> LearnerError:
    return LearnerError(kind=kind, feedback=f"The call went wrong ({kind}).")


def test_a_wrong_forward_pass_is_given_as_the_cause_in_place_of_the_hint():
    with pytest.raises(GradingFailure) as caught, forward_first(failing_forward):
        raise GradingFailure(GRADIENT)
    message = caught.value.message
    assert message.startswith("The gradient of W_q.weight differs")
    assert message.endswith(f"Its forward pass already differs, which explains it: {NAMED}")
    assert "Hint:" not in message


def test_a_missing_gradient_is_explained_by_the_forward_pass_without_the_generic_advice():
    with pytest.raises(GradingFailure) as caught, forward_first(failing_forward):
        raise GradingFailure(MISSING)
    fact = MISSING.replace(f" {NO_GRADIENT_ADVICE}", "")
    assert fact.endswith("got no gradient: W_o.weight.")
    assert caught.value.message == (
        f"{fact} Its forward pass already differs, which explains it: {NAMED}"
    )


def test_a_right_forward_pass_turns_the_hint_to_the_backward_pass():
    with pytest.raises(GradingFailure) as caught, forward_first(right_forward):
        raise GradingFailure(GRADIENT)
    first = GRADIENT.split(" Hint: ")[0]
    assert caught.value.message == f"{first} {FORWARD_RIGHT}"


def test_a_right_forward_pass_leaves_a_message_without_hint_unchanged():
    with pytest.raises(GradingFailure) as caught, forward_first(right_forward):
        raise GradingFailure(MISSING)
    assert caught.value.message == MISSING


def test_an_output_without_parameters_is_explained_by_the_forward_pass():
    error = learner_error("bad_return")
    with pytest.raises(GradingFailure) as caught, forward_first(failing_forward):
        raise error
    assert caught.value.message == (
        f"{error.feedback} Its forward pass already differs, which explains it: {NAMED}"
    )


@pytest.mark.parametrize("kind", ["exception", "timeout", "not_implemented"])
def test_other_learner_errors_pass_through_without_running_the_forward_pass(kind):
    ran = []
    error = learner_error(kind)
    with pytest.raises(LearnerError) as caught, forward_first(lambda: ran.append(1)):
        raise error
    assert caught.value is error and not ran


def test_a_forward_pass_that_cannot_run_leaves_the_first_failure():
    def crashing_forward() -> None:
        raise learner_error("exception")

    with pytest.raises(GradingFailure) as caught, forward_first(crashing_forward):
        raise GradingFailure(GRADIENT)
    assert caught.value.message == GRADIENT


def test_a_passing_block_never_runs_the_forward_pass():
    ran = []
    with forward_first(lambda: ran.append(1)):
        pass
    assert not ran


def test_without_a_forward_pass_the_failure_is_unchanged():
    with pytest.raises(GradingFailure) as caught, forward_first(None):
        raise GradingFailure(GRADIENT)
    assert caught.value.message == GRADIENT
