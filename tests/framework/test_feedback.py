"""The expect_* helpers: exact learner-facing sentences, and no values in hidden tests."""

import re

import numpy as np
import pytest
import torch

from autograder import feedback as fb
from autograder.feedback import (
    GradingFailure,
    expect,
    expect_close,
    expect_dtype,
    expect_finite,
    expect_raises,
    expect_shape,
    expect_type,
    hidden_context,
    is_hidden,
)
from autograder.runtime.shared.errors import LearnerError


def failure(fn, *args, **kwargs) -> str:
    with pytest.raises(GradingFailure) as caught:
        fn(*args, **kwargs)
    assert isinstance(caught.value, AssertionError)
    assert str(caught.value) == caught.value.message
    return caught.value.message


def test_expect_passes_or_fails_with_the_graders_sentence():
    expect(True, "never shown")
    assert failure(expect, 0, "rows must sum to 1") == "rows must sum to 1."
    assert failure(expect, False, "Rows must sum to 1!") == "Rows must sum to 1!"


def test_expect_type():
    expect_type((1, 2), tuple, what="f(x)")
    expect_type([1], (tuple, list), what="f(x)")
    assert failure(expect_type, np.zeros((2, 3)), tuple, what="f(x)") == fb.WRONG_TYPE.format(
        what="f(x)", got="a numpy.ndarray of shape (2, 3)", expected="a tuple"
    )
    assert failure(expect_type, None, (tuple, list), what="f(x)") == (
        "f(x) returned None; expected a tuple or a list."
    )


def test_expect_shape_mismatch_is_its_own_sentence():
    expect_shape(np.zeros((2, 4, 8)), (2, 4, 8), what="attend(q)")
    expect_shape(torch.zeros(2, 4, 8), (2, 4, 8), what="attend(q)")
    message = failure(expect_shape, np.zeros((2, 3)), (2, 3, 4), what="attend(q)")
    assert message == "attend(q) returned shape (2, 3); expected (2, 3, 4)."
    message = failure(expect_shape, torch.zeros(2, 8, 4), (2, 4, 8), what="attend(q)", hint="h")
    assert message == " ".join(
        [
            fb.WRONG_SHAPE.format(what="attend(q)", got="(2, 8, 4)", expected="(2, 4, 8)"),
            fb.SAME_SIZES_OTHER_ORDER,
            "Hint: h.",
        ]
    )
    assert failure(expect_shape, (1, 2), (2,), what="attend(q)") == fb.NOT_AN_ARRAY.format(
        what="attend(q)", got="a tuple of 2 items"
    )


def test_expect_dtype_numpy_and_torch():
    expect_dtype(np.zeros(2, np.float32), np.float32, what="f(x)")
    expect_dtype(torch.zeros(2), torch.float32, what="f(x)")
    expect_dtype(np.zeros(2), ("float32", "float64"), what="f(x)")
    assert failure(expect_dtype, np.zeros(2), np.float32, what="f(x)") == fb.WRONG_DTYPE.format(
        what="f(x)", has="has", got="float64", expected="float32"
    )
    assert failure(
        expect_dtype, torch.zeros(2, dtype=torch.float64), torch.float32, what="m(x)"
    ) == ("m(x) has dtype float64; expected float32.")
    assert failure(expect_dtype, [1.0], np.float32, what="f(x)") == (
        "f(x) returned a list of 1 item; expected an array of numbers."
    )


def test_expect_finite_counts():
    expect_finite(np.ones(3), what="f(x)")
    values = np.array([1.0, np.nan, np.inf, -np.inf])
    assert failure(expect_finite, values, what="f(x)") == fb.NOT_FINITE.format(
        what="f(x)", contains="contains", count="1 NaN and 2 infinite entries", total=4
    )


def test_expect_close_passes_within_tolerance():
    x = np.linspace(0, 1, 6).reshape(2, 3)
    expect_close(x + 1e-9, x, what="f(x)", atol=1e-6)
    expect_close(torch.tensor(x * 1.001), x, what="f(x)", atol=0.0, rtol=1e-2)


def test_expect_close_reports_count_max_error_and_first_difference():
    expected = np.zeros((2, 3))
    got = expected.copy()
    got[1, 2] = 0.5
    got[0, 1] = -0.25
    assert failure(expect_close, got, expected, what="f(x)", atol=1e-6) == " ".join(
        [
            fb.NOT_CLOSE.format(
                what="f(x)", differs="differs", differ="2 of 6 entries differ", atol=1e-6, rtol=0
            ),
            fb.MAX_ERROR.format(max_err=0.5),
            fb.FIRST_DIFFERENCE.format(index=(0, 1), got=-0.25, expected=0.0),
        ]
    )


def test_expect_close_shape_first():
    message = failure(expect_close, np.zeros((2, 8, 4)), np.zeros((2, 4, 8)), what="f", atol=1)
    assert message.startswith("f returned shape (2, 8, 4); expected (2, 4, 8). ")
    assert "entries differ" not in message


def test_expect_close_counts_new_nan_and_inf():
    got = np.array([np.nan, np.inf, 1.0])
    message = failure(expect_close, got, np.ones(3), what="f(x)", atol=1e-6)
    assert message.startswith(
        fb.NEW_NON_FINITE.format(
            what="f(x)", contains="contains", count="1 NaN and 1 infinite entries"
        )
    )


def test_expect_close_names_a_known_mistake():
    x = np.arange(6.0).reshape(2, 3)
    mistakes = {"You forgot to transpose": x.T, "You added instead of multiplied": x + 2}
    message = failure(expect_close, x + 2, 2 * x, what="f(x)", atol=1e-6, mistakes=mistakes)
    assert message.startswith(
        fb.KNOWN_MISTAKE.format(what="f(x)", mistake="You added instead of multiplied.")
    )
    # a shape mismatch that a mistake explains
    message = failure(expect_close, x.T, x, what="f(x)", atol=1e-6, mistakes=mistakes)
    assert fb.KNOWN_MISTAKE.format(what="f(x)", mistake="You forgot to transpose.") in message
    # a wrong answer no mistake explains names none
    message = failure(expect_close, x * 7, 2 * x, what="f(x)", atol=1e-6, mistakes=mistakes)
    assert "known mistake" not in message


def test_lazy_mistakes_are_computed_only_when_a_comparison_fails():
    x = np.arange(6.0).reshape(2, 3)
    calls = []

    def compute():
        calls.append(1)
        return {"You added instead of multiplied": x + 2}

    mistakes = fb.Lazy(compute)
    expect_close(2 * x, 2 * x, what="f(x)", atol=1e-6, mistakes=mistakes)
    assert calls == []  # a right result never computes them
    message = failure(expect_close, x + 2, 2 * x, what="f(x)", atol=1e-6, mistakes=mistakes)
    eager = failure(expect_close, x + 2, 2 * x, what="f(x)", atol=1e-6, mistakes=dict(compute()))
    assert message == eager  # the same sentence as the plain mapping
    assert message.startswith(
        fb.KNOWN_MISTAKE.format(what="f(x)", mistake="You added instead of multiplied.")
    )
    failure(expect_close, x + 2, 2 * x, what="f(x)", atol=1e-6, mistakes=mistakes)
    assert len(calls) == 2  # once for the Lazy (kept), once for the eager dict above


def test_lazy_pair_shares_one_computation():
    calls = []

    def compute():
        calls.append(1)
        return {"a": np.zeros(2)}, {"b": np.ones(2)}

    first, second = fb.Lazy.pair(compute)
    assert calls == []
    assert list(second.items())[0][0] == "b" and list(first) == ["a"]
    assert len(calls) == 1


def test_expect_close_scalar_and_hint():
    message = failure(expect_close, 0.5, 0.75, what="cos(a, b)", atol=1e-9, hint="use the norms")
    assert message.endswith(
        fb.SCALAR_DIFFERENCE.format(got=0.5, expected=0.75) + " Hint: use the norms."
    )
    assert "its value differs" in message


def test_expect_close_refuses_non_numbers():
    assert failure(expect_close, None, np.ones(2), what="f(x)", atol=1) == (
        "f(x) returned None; expected an array of numbers."
    )
    assert failure(expect_close, ("a", 1), np.ones(2), what="f(x)", atol=1) == (
        "f(x) returned a tuple of 2 items; expected an array of numbers."
    )


def test_hidden_messages_carry_no_values_or_indices():
    rng = np.random.default_rng(7)
    expected = rng.normal(size=(3, 4))
    got = expected.copy()
    got[2, 1] += 0.125
    got[0, 0] = np.nan
    assert not is_hidden()
    with hidden_context(True):
        assert is_hidden()
        message = failure(expect_close, got, expected, what="f(x)", atol=1e-6, hint="check it")
        shape_message = failure(expect_shape, got, (4, 3), what="f(x)")
    assert not is_hidden()
    assert "index" not in message and "(2, 1)" not in message
    numbers = set(re.findall(r"-?\d+\.\d+", message))
    values = np.concatenate([expected.ravel(), got.ravel()])
    for text in numbers:
        assert not np.isclose(values, float(text), atol=5e-3).any(), text
    assert shape_message.startswith("f(x) returned shape (3, 4); expected (4, 3).")


def remote_raising(error: LearnerError):
    def call(*args, **kwargs):
        raise error

    return call


def value_error(kind="exception", exc_type="ValueError"):
    mro = (exc_type, "Exception", "BaseException") if exc_type else ()
    return LearnerError(
        kind=kind,
        feedback=f"{kind} feedback.",
        exc_type=exc_type,
        exc_mro=mro,
        location="pkg/m.py:3 in f",
    )


def test_expect_raises_passes_and_returns_the_error():
    error = value_error()
    assert expect_raises("ValueError", remote_raising(error), 1, what="f(1)") is error
    assert expect_raises("Exception", remote_raising(error), what="f()") is error


def test_expect_raises_fails_when_it_returns_normally():
    def returns(*args, **kwargs):
        return 3

    assert failure(expect_raises, "ValueError", returns, 1, what="f(1)", key=2) == (
        fb.SHOULD_RAISE.format(what="f(1)", exc_name="ValueError")
    )
    assert "should raise ValueError" in fb.SHOULD_RAISE.format(what="f", exc_name="ValueError")


def test_expect_raises_fails_on_another_exception():
    message = failure(
        expect_raises, "ValueError", remote_raising(value_error(exc_type="TypeError")), what="f(1)"
    )
    assert (
        message
        == "f(1) should raise ValueError, but it raised TypeError instead at pkg/m.py:3 in f."
    )


def test_expect_raises_in_a_hidden_test_names_an_own_class_by_its_builtin_base():
    made = value_error(exc_type="D12H5")  # a class whose name learner code built from inputs
    with hidden_context(True):
        message = failure(expect_raises, "ValueError", remote_raising(made), what="f(1)")
        builtin = failure(
            expect_raises, "ValueError", remote_raising(value_error(exc_type="TypeError")), what="f"
        )
    assert "D12H5" not in message
    assert "it raised an exception of a class of your own derived from Exception instead" in (
        message
    )
    assert "it raised TypeError instead" in builtin


@pytest.mark.parametrize("kind", ["not_implemented", "timeout", "crash"])
def test_expect_raises_passes_other_learner_errors_through(kind):
    error = value_error(kind=kind, exc_type="")
    with pytest.raises(LearnerError) as caught:
        expect_raises("ValueError", remote_raising(error), what="f(1)")
    assert caught.value is error


def test_any_of_names_a_mistake_that_has_several_results():
    expected = np.array([1.0, 2.0])
    relu_twice, relu_moved = np.array([0.0, 2.0]), np.array([5.0, 5.0])
    sentence = "You moved the ReLU."
    for got in (relu_twice, relu_moved):
        with pytest.raises(fb.GradingFailure) as caught:
            fb.expect_close(
                got,
                expected,
                what="f(x)",
                atol=1e-9,
                mistakes={sentence: fb.AnyOf(relu_twice, relu_moved)},
            )
        assert caught.value.message == fb.KNOWN_MISTAKE.format(what="f(x)", mistake=sentence)


def test_hidden_messages_name_what_differs_without_inputs_or_error_sizes():
    expected = np.arange(12.0).reshape(3, 4)
    got = expected + 1.5
    what = "the gradient of W after a backward pass through M(12, 3)(query (2, 4, 12), mask (2, 4))"
    with hidden_context(True):
        hidden = failure(expect_close, got, expected, what=what, atol=1e-6)
        some = failure(expect_close, expected + np.eye(3, 4), expected, what="f(x)", atol=1e-6)
    assert hidden == (
        "The gradient of W after a backward pass through M(...)(query, mask) differs from the "
        "expected values: all of its entries differ by more than the tolerance (atol=1e-06, "
        "rtol=0)."
    )
    assert some.startswith("f(x) differs from the expected values: some of its entries differ")
    visible = failure(expect_close, got, expected, what=what, atol=1e-6)
    assert visible.startswith("The gradient of W after a backward pass through M(12, 3)(query")
    assert "12 of 12 entries differ" in visible and "The largest absolute error is 1.5." in visible


def test_the_verb_agrees_with_a_plural_subject():
    """ "The weights of ... differs" read wrong: a plural subject takes a plural verb, and its
    entries are "their" entries."""
    what = "the weights of MultiHeadAttention(16, 4)(x, x, x)"
    got, expected = np.ones((2, 3)), np.zeros((2, 3))
    assert failure(expect_close, got, expected, what=what, atol=1e-6).startswith(
        "The weights of MultiHeadAttention(16, 4)(x, x, x) differ from the expected values: "
        "6 of 6 entries differ by more than the tolerance"
    )
    with hidden_context(True):
        assert failure(expect_close, got, expected, what=what, atol=1e-6).startswith(
            "The weights of MultiHeadAttention(...)(x, x, x) differ from the expected values: "
            "all of their entries differ by more than"
        )
    assert failure(expect_dtype, np.zeros(2), np.float32, what="the outputs of f") == (
        "The outputs of f have dtype float64; expected float32."
    )
    assert failure(expect_finite, np.array([np.nan]), what="the weights of f") == (
        "The weights of f contain 1 NaN entry out of 1; expected finite numbers."
    )
    for singular in ("the output of f(x)", "weights.sum(axis=-1) of f(x)", "x after f(x)"):
        message = failure(expect_close, got, expected, what=singular, atol=1e-6)
        assert " differs from the expected values" in message, singular


NAMED = (
    "Known mistake in f(x): [toy/no-scale] Your scores are not scaled; divide them. "
    "Read: course notes, Class 1."
)


def test_a_named_mistake_gets_the_place_the_course_locates():
    """The course's locator gives the learner's line; it goes after the explanation, before the
    "Read:" sentence (so summary.md, which groups by mistake, keeps it)."""
    asked = []

    def locate(mistake_id, message):
        asked.append(mistake_id)
        return "Look at pkg/f.py:7, the line that scales."

    with fb.locating(locate):
        message = GradingFailure(NAMED).message
        assert GradingFailure(message).message == message  # placed once
    assert message == (
        "Known mistake in f(x): [toy/no-scale] Your scores are not scaled; divide them. "
        "Look at pkg/f.py:7, the line that scales. Read: course notes, Class 1."
    )
    assert asked[0] == "toy/no-scale"
    assert GradingFailure(NAMED).message == NAMED  # no locator: no place


def test_no_place_when_the_locator_finds_none_or_fails():
    def broken(mistake_id, message):
        raise RuntimeError("a bug in a course's locator")

    for locate in (lambda mistake_id, message: None, broken):
        with fb.locating(locate):
            assert GradingFailure(NAMED).message == NAMED


def test_two_mistakes_with_the_same_result_are_both_named():
    """Inputs that cannot tell two mistakes apart: both are named, in the mapping's order; one
    whose ids nest with an earlier match's (a combined mistake listed before its part) is not."""
    x = np.arange(6.0).reshape(2, 3)
    a = "[toy/no-scale] Your scores are not scaled. Read: course notes, Class 1."
    b = "[toy/scale-by-d-k] You divide by d_k. Read: course notes, Class 1."
    mistakes = {a: x + 1, b: x + 1, "unrelated": x * 5}
    message = failure(expect_close, x + 1, x, what="f(x)", atol=1e-6, mistakes=mistakes)
    assert message == fb.KNOWN_MISTAKES.format(what="f(x)", mistakes=f"{a} {b}")
    combined = {f"{a} {b}": x + 1, a: x + 1, "[toy/other] Another. Read: x.": x * 5}
    message = failure(expect_close, x + 1, x, what="f(x)", atol=1e-6, mistakes=combined)
    assert message == fb.KNOWN_MISTAKE.format(what="f(x)", mistake=f"{a} {b}")
