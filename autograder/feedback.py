"""GradingFailure and the expect_* helpers graders use to explain a failure to the learner.

Every failure is one or more full sentences: what was checked (`what`, e.g.
"softmax(x, axis=1)"), what was expected and what came. Arrays may be numpy arrays, torch
tensors or anything numpy can read. Symbols: `shape` a tuple of ints such as (2, 3, 4).

Hidden tests: while `hidden_context(True)` is active (the pytest plugin sets it for tests under
the course's hidden test folder), messages never carry array values, indices, error sizes or
inputs: `what` loses its input shapes and its constructor and call arguments
(`MultiHeadAttention(12, 3)(query (2, 4, 12))` -> `MultiHeadAttention(...)(query)`), a value
mismatch says whether all or some entries differ (not how many of how many), and there is no
largest error. The result's own shape and dtype are still given (WRONG_SHAPE, WRONG_DTYPE).

Every failure starts with a capital letter: a message whose first word is a lowercase article
or determiner ("the gradient of ...") gets it capitalised; one that starts with code keeps its
spelling.

A named mistake gets its place in the learner's code while a course's `locating` is active
(learner_lines.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import numpy as np

from autograder.english import (
    agreeing,
    article,
    capitalised,
    describe,
    non_finite_count,
    shape_text,
    type_name,
)
from autograder.learner_lines import locating as locating  # graders import it from here
from autograder.learner_lines import placed
from autograder.mistake_match import AnyOf as AnyOf  # graders import them from here
from autograder.mistake_match import Satisfies as Satisfies
from autograder.mistake_match import matching

if TYPE_CHECKING:  # imported when needed: importing autograder.runtime may import torch
    from autograder.runtime.shared.errors import LearnerError

# Learner-facing sentence templates. Tests reuse these names.
FAILED_CHECK = "{message}"
WRONG_TYPE = "{what} returned {got}; expected {expected}."
NOT_AN_ARRAY = "{what} returned {got}; expected an array of numbers."
WRONG_SHAPE = "{what} returned shape {got}; expected {expected}."
SAME_SIZES_OTHER_ORDER = (
    "The sizes are right but in another order; check the order of your axes (a transpose, "
    "permute or reshape)."
)
WRONG_DTYPE = "{what} {has} dtype {got}; expected {expected}."
NOT_FINITE = "{what} {contains} {count} out of {total}; expected finite numbers."
NEW_NON_FINITE = "{what} {contains} {count} where the expected values are finite."
NOT_CLOSE = (
    "{what} {differs} from the expected values: {differ} by more than the tolerance "
    "(atol={atol:g}, rtol={rtol:g})."
)
MAX_ERROR = "The largest absolute error is {max_err:.3g}."
FIRST_DIFFERENCE = (
    "The first differing entry is at index {index}: got {got:.6g}, expected {expected:.6g}."
)
SCALAR_DIFFERENCE = "It returned {got:.6g}; expected {expected:.6g}."
KNOWN_MISTAKE = "Known mistake in {what}: {mistake}"
# Two or more mistakes that give this same result: each is named, none chosen.
KNOWN_MISTAKES = (
    "Known mistakes in {what}, which these inputs cannot tell apart (each gives this result): "
    "{mistakes}"
)
HINT = "Hint: {hint}"
SHOULD_RAISE = "{what} should raise {exc_name} but returned normally."
RAISED_OTHER = "{what} should raise {exc_name}, but it raised {got} instead{where}."

_HIDDEN: ContextVar[bool] = ContextVar("autograder_hidden_test", default=False)


class Lazy(Mapping):
    """Known-mistake outputs computed only when read: `Lazy(compute)` is the mapping that the
    zero-argument `compute()` returns, called on first use and kept. expect_close reads its
    `mistakes` only when the comparison fails, so a passing learner never pays for them:
    `expect_close(..., mistakes=Lazy(lambda: {sentence: array}))`. `Lazy.pair(compute)` gives
    two (compute() returns a pair of mappings, e.g. ({sentence: output}, {sentence: weights}))
    that share one call."""

    def __init__(self, compute: Callable[[], Mapping[str, object]]) -> None:
        self._mapping = functools.cache(compute)

    @classmethod
    def pair(cls, compute: Callable[[], tuple[Mapping, Mapping]]) -> tuple[Lazy, Lazy]:
        """(Lazy(first), Lazy(second)) of compute()'s pair, computed once for both."""
        both = functools.cache(compute)
        return cls(lambda: both()[0]), cls(lambda: both()[1])

    def __getitem__(self, key: str) -> object:
        return self._mapping()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self._mapping())


class GradingFailure(AssertionError):
    """A check failed; `.message` is the learner-facing explanation, in full sentences."""

    def __init__(self, message: str) -> None:
        message = placed(capitalised(message))
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def is_hidden() -> bool:
    """True while a hidden test runs: messages must not reveal values, indices or inputs."""
    return _HIDDEN.get()


@contextmanager
def hidden_context(hidden: bool) -> Iterator[None]:
    """Mark the code inside as running a hidden (True) or visible (False) test."""
    token = _HIDDEN.set(hidden)
    try:
        yield
    finally:
        _HIDDEN.reset(token)


def expect(condition: object, message: str) -> None:
    """Fail with message (a full sentence the grader wrote) unless condition holds."""
    if not condition:
        raise GradingFailure(FAILED_CHECK.format(message=_sentence(message)))


def expect_type(value: object, types: type | tuple[type, ...], *, what: str) -> None:
    """Fail unless value is an instance of types, e.g. expect_type(out, tuple, what=...)."""
    what = shown_what(what)
    wanted = types if isinstance(types, tuple) else (types,)
    if not isinstance(value, wanted):
        expected = " or ".join(article(type_name(t)) for t in wanted)
        raise GradingFailure(WRONG_TYPE.format(what=what, got=describe(value), expected=expected))


def expect_shape(
    value: object, shape: tuple[int, ...], *, what: str, hint: str | None = None
) -> None:
    """Fail unless value (an array or tensor) has exactly this shape."""
    what = shown_what(what)
    got = _shape_of(value, what)
    expected = tuple(int(n) for n in shape)
    if got != expected:
        raise GradingFailure(_with_hint(_shape_sentences(what, got, expected), hint))


def expect_dtype(value: object, dtype: Any, *, what: str) -> None:
    """Fail unless value's dtype is dtype (numpy or torch; a tuple allows several)."""
    what = shown_what(what)
    wanted = dtype if isinstance(dtype, tuple) else (dtype,)
    names = [_dtype_name(d) for d in wanted]
    got = getattr(value, "dtype", None)
    if got is None:
        raise GradingFailure(NOT_AN_ARRAY.format(what=what, got=describe(value)))
    if _dtype_name(got) not in names:
        expected = " or ".join(names)
        raise GradingFailure(_said(WRONG_DTYPE, what, got=_dtype_name(got), expected=expected))


def expect_finite(value: object, *, what: str) -> None:
    """Fail when value contains NaN or infinite entries (counts only, never positions)."""
    what = shown_what(what)
    array = _as_float_array(value, what)
    nan, inf = int(np.isnan(array).sum()), int(np.isinf(array).sum())
    if nan or inf:
        count = non_finite_count(nan, inf)
        raise GradingFailure(_said(NOT_FINITE, what, count=count, total=array.size))


def expect_close(
    got: object,
    expected: object,
    *,
    what: str,
    atol: float,
    rtol: float = 0.0,
    hint: str | None = None,
    mistakes: Mapping[str, object] | None = None,
) -> None:
    """Fail unless got matches expected within |got - expected| <= atol + rtol * |expected|.

    mistakes: {sentence describing a known mistake: the array that mistake produces, an AnyOf of
    the arrays it can produce, or a Satisfies of a property its results have}; when got is wrong
    but matches one of them, the failure names that mistake. They are read only then: pass a
    `Lazy` to compute them only for a learner whose result is wrong (the usual way; the arrays
    cost more than the comparison).
    """
    what = shown_what(what)
    want = _as_float_array(expected, "the expected value")
    have = _as_float_array(got, what)
    if have.shape != want.shape:
        sentences = _shape_sentences(what, have.shape, want.shape)
        raise GradingFailure(
            _with_hint(sentences + _mistake(what, have, mistakes, atol, rtol), hint)
        )
    if _close(have, want, atol, rtol).all():
        return
    sentences = _mistake(what, have, mistakes, atol, rtol)
    if sentences:  # a recognised mistake says more than any count of differing entries
        raise GradingFailure(" ".join(sentences))
    new_nan = int((np.isnan(have) & np.isfinite(want)).sum())
    new_inf = int((np.isinf(have) & np.isfinite(want)).sum())
    if new_nan or new_inf:
        count = non_finite_count(new_nan, new_inf)
        sentences.append(_said(NEW_NON_FINITE, what, count=count))
    bad = ~_close(have, want, atol, rtol)
    n_bad = int(bad.sum())
    its = agreeing(what, "its")
    if have.size == 1:
        differ = f"{its} value differs"
    elif not is_hidden():
        differ = f"{n_bad} of {have.size} entries differ{'s' if n_bad == 1 else ''}"
    else:
        differ = f"{'all' if n_bad == have.size else 'some'} of {its} entries differ"
    # after a NaN count it is a second sentence: 'The output ...', not '... finite. the output'
    sentences.append(capitalised(_said(NOT_CLOSE, what, differ=differ, atol=atol, rtol=rtol)))
    with np.errstate(invalid="ignore"):
        errors = np.abs(have - want)[bad & np.isfinite(have) & np.isfinite(want)]
    if errors.size and not is_hidden():
        sentences.append(MAX_ERROR.format(max_err=float(errors.max())))
    if not is_hidden():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        values = {"got": float(have[index]), "expected": float(want[index])}
        if have.ndim == 0:
            sentences.append(SCALAR_DIFFERENCE.format(**values))
        else:
            shown = index if have.ndim > 1 else index[0]
            sentences.append(FIRST_DIFFERENCE.format(index=shown, **values))
    raise GradingFailure(_with_hint(sentences, hint))


def expect_raises(
    exc_name: str, fn: Callable[..., Any], *args: Any, what: str, **kwargs: Any
) -> LearnerError:
    """Call fn(*args, **kwargs) (a remote callable) and pass when it raises exc_name.

    Returns the LearnerError so a grader can look at its message. A not_implemented, timeout,
    crash (or any non-exception) LearnerError is re-raised unchanged: its own sentence says more.
    """
    what = shown_what(what)
    from autograder.runtime.shared.errors import LearnerError

    try:
        fn(*args, **kwargs)
    except LearnerError as error:
        if error.kind != "exception":
            raise
        if error.is_instance(exc_name):
            return error
        where = f" at {error.location}" if error.location else ""
        got = error.exc_type or "an exception"
        if is_hidden() and error.exc_type:  # a name learner code can build from the inputs
            from autograder.runtime.shared.messages import hidden_class_name

            got = hidden_class_name(error.exc_type, error.exc_mro)
        raise GradingFailure(
            RAISED_OTHER.format(what=what, exc_name=exc_name, got=got, where=where)
        ) from None
    raise GradingFailure(SHOULD_RAISE.format(what=what, exc_name=exc_name))


# Helpers -----------------------------------------------------------------------------------

# A shape after a space ("query (2, 4, 12)", "x of shape (3, 4)"), and a call's arguments when
# they hold a number ("MultiHeadAttention(12, 3)", "softmax(x, axis=1)").
_SHOWN_SHAPE = re.compile(r"(?:\s+of shape)?\s+\(\s*\d+\s*(?:,\s*\d+\s*)*,?\s*\)")
_SHOWN_ARGS = re.compile(r"(?<=\w)\([^()]*\d[^()]*\)")


def shown_what(what: str) -> str:
    """`what` as a hidden test may show it: without input shapes and arguments (see the
    module docstring); unchanged in a visible test."""
    if not is_hidden():
        return what
    return _SHOWN_ARGS.sub("(...)", _SHOWN_SHAPE.sub("", what))


def _said(template: str, what: str, **values: Any) -> str:
    """template filled in, its verbs ({has}, {contains}, {differs}) agreeing with `what`."""
    verbs = {verb: agreeing(what, verb) for verb in ("has", "contains", "differs")}
    return template.format(what=what, **verbs, **values)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _with_hint(sentences: list[str], hint: str | None) -> str:
    if hint:
        sentences = [*sentences, HINT.format(hint=_sentence(hint))]
    return " ".join(sentences)


def _shape_of(value: object, what: str) -> tuple[int, ...]:
    shape = getattr(value, "shape", None)
    if shape is None or isinstance(value, (int, float, complex)):
        raise GradingFailure(NOT_AN_ARRAY.format(what=what, got=describe(value)))
    return tuple(int(n) for n in shape)


def _shape_sentences(what: str, got: tuple[int, ...], expected: tuple[int, ...]) -> list[str]:
    sentences = [WRONG_SHAPE.format(what=what, got=shape_text(got), expected=shape_text(expected))]
    if sorted(got) == sorted(expected):
        sentences.append(SAME_SIZES_OTHER_ORDER)
    return sentences


def _dtype_name(dtype: Any) -> str:
    text = str(dtype)
    if text.startswith("torch."):
        return text.removeprefix("torch.")
    try:
        return np.dtype(dtype).name
    except TypeError:
        return text


def _as_float_array(value: object, what: str) -> np.ndarray:
    """value as a float64 numpy array; GradingFailure (a type sentence) when it is not numbers."""
    if hasattr(value, "detach") and hasattr(
        value, "cpu"
    ):  # a torch tensor, without importing torch
        value = value.detach().cpu().double().numpy()
    try:
        array = np.asarray(value)
        if array.dtype == object or array.dtype.kind not in "biuf":
            raise TypeError
        return array.astype(np.float64)
    except (TypeError, ValueError, RuntimeError):  # RuntimeError: a tuple of tensors with grad
        raise GradingFailure(NOT_AN_ARRAY.format(what=what, got=describe(value))) from None


def _close(have: np.ndarray, want: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    return np.isclose(have, want, atol=atol, rtol=rtol, equal_nan=True)


def _mistake(
    what: str, have: np.ndarray, mistakes: Mapping[str, object] | None, atol: float, rtol: float
) -> list[str]:
    """The sentence naming every known mistake `have` matches (mistake_match), or none."""
    if mistakes is None:  # not `or {}`: the truth of a Lazy would compute it
        return []
    found = [_sentence(description) for description in matching(have, mistakes, atol, rtol)]
    if len(found) == 1:
        return [KNOWN_MISTAKE.format(what=what, mistake=found[0])]
    return [KNOWN_MISTAKES.format(what=what, mistakes=" ".join(found))] if found else []
