"""Checks on a learner module's parameters: names, shapes, independence, gradients.

They read `learner.parameters(module)` ([ParameterInfo(name, shape, dtype, storage)]) and
`learner.parameter_grads(module, *args, cotangent=g)` ({name: tensor or None}); the module
stays in the worker. Messages name parameters and shapes only, never values, so they are safe in
hidden tests too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import torch

from autograder.feedback import GradingFailure, expect, shown_what
from autograder.runtime.shared.errors import LearnerError
from tests.graders.support.inputs import like_state

WRONG_PARAMETERS = "{what} has the wrong parameters: {difference}. Expected exactly: {expected}."
WRONG_ORDER = (
    "{what} creates its parameters in the order {got}; expected {expected}, so that a seeded "
    "run reproduces the class notebook."
)
# The advice is generic: forward_first drops it when a wrong forward pass says more.
NO_GRADIENT_ADVICE = (
    "Every parameter must take part in the forward computation (no .detach(), no "
    "torch.no_grad(), no round trip through numpy, and use every sublayer you create)."
)
NO_GRADIENT = (
    "After a backward pass through {what}, these parameters got no gradient: {names}. "
    + NO_GRADIENT_ADVICE
)
# A LayerNorm's scale and shift, as learners' own classes and tutorials name them: nn.LayerNorm's
# weight/bias, the Annotated Transformer's a_2/b_2, TensorFlow's gamma/beta (beta created first).
NORM_SCALES = ("weight", "a_2", "gamma", "scale", "g")
NORM_SHIFTS = ("bias", "b_2", "beta", "shift", "b")
NORM_MODULES = ("ln", "ln_1", "ln_2", "ln_f")


def is_norm_parameter(name: str) -> bool:
    """Whether a parameter named `name` ("layer_norm.weight", "ln.gamma", "a_2") looks like a
    LayerNorm's: under a module whose name says norm (or ln), or a scale/shift's own name."""
    *modules, last = name.split(".")
    if "norm" in name.lower() or any(part in NORM_MODULES for part in modules):
        return True
    return last in ("a_2", "b_2", "gamma", "beta")


def scale_then_shift(names: Sequence[str]) -> list[str]:
    """Two LayerNorm parameter names as (scale, shift) when their own names tell (gamma/beta,
    a_2/b_2, weight/bias: TensorFlow creates beta first); otherwise in the order given."""
    if len(names) == 2:
        last = [name.rsplit(".", 1)[-1] for name in names]
        if last[0] in NORM_SHIFTS and last[1] in NORM_SCALES:
            return [names[1], names[0]]
    return list(names)


FORWARD_DIFFERS = "Its forward pass already differs, which explains it: {cause}"
FORWARD_RIGHT = (
    "Hint: the forward pass on these inputs gives the right values, so the gradients are lost "
    "or changed on the way back: keep the forward a differentiable torch computation (no "
    ".detach(), no numpy round trip, no in-place edits of inputs)."
)


def linear_parameters(shapes: Mapping[str, tuple[int, int]], bias: bool) -> list[tuple]:
    """[(name, shape)] for nn.Linear layers given as {name: (out_features, in_features)}."""
    expected = []
    for name, (out_features, in_features) in shapes.items():
        expected.append((f"{name}.weight", (out_features, in_features)))
        if bias:
            expected.append((f"{name}.bias", (out_features,)))
    return expected


def _listing(pairs: Iterable[tuple[str, tuple]]) -> str:
    pairs = list(pairs)
    if not pairs:
        return "none"
    return ", ".join(f"{name} {tuple(shape)}" for name, shape in pairs)


#: Catalogue sentences for parameters (name, shape) that are not the expected ones (a mistake
#: the difference shows, such as a LayerNorm inside the feed-forward).
Named = Callable[[list[tuple[str, tuple]], list[tuple[str, tuple]]], list[str]]


def expect_parameters(
    learner,
    module,
    expected: Sequence[tuple[str, tuple]],
    *,
    what: str,
    ordered: bool = False,
    hint: str | None = None,
    named: Named | None = None,
) -> None:
    """Fail unless the module's parameters are exactly `expected` [(name, shape)] (in that order
    when `ordered`: for modules whose creation order the course fixes). named: what the
    difference shows, named after it (the hint is left out when it names a mistake)."""
    what = shown_what(what)  # a hidden test shows no inputs
    got = [(p.name, tuple(p.shape)) for p in learner.parameters(module)]
    wanted = [(name, tuple(shape)) for name, shape in expected]
    sentences = named(got, wanted) if named is not None and sorted(got) != sorted(wanted) else []
    tail = "".join(f" {s}" for s in sentences) or (f" Hint: {hint}." if hint else "")
    expect(
        sorted(got) == sorted(wanted),
        WRONG_PARAMETERS.format(
            what=what, difference=difference(got, wanted), expected=_listing(wanted)
        )
        + tail,
    )
    if ordered:
        expect(
            got == wanted,
            WRONG_ORDER.format(
                what=what,
                got=", ".join(n for n, _ in got),
                expected=", ".join(n for n, _ in wanted),
            )
            + tail,
        )


def expect_names(learner, module, expected: Sequence[str], *, what: str, hint: str | None = None):
    """Fail unless the module's parameter names are exactly `expected` (in any order)."""
    what = shown_what(what)  # a hidden test shows no inputs
    got = [p.name for p in learner.parameters(module)]
    tail = f" Hint: {hint}." if hint else ""
    expect(
        sorted(got) == sorted(expected),
        f"{what} has the wrong parameters: {difference(got, expected)}. Expected exactly: "
        f"{', '.join(expected)}.{tail}",
    )


def difference(got: Sequence, expected: Sequence) -> str:
    """What differs between two parameter listings ([name] or [(name, shape)]), first: a
    whole listing can be cut in a report before the one name that matters (H44)."""
    shapes_got, shapes_wanted = dict(_pairs(got)), dict(_pairs(expected))
    parts = [
        f"{name} is {shapes_got[name]}, expected {shape}"
        for name, shape in shapes_wanted.items()
        if name in shapes_got and shapes_got[name] != shape
    ]
    missing = [name for name in shapes_wanted if name not in shapes_got]
    extra = [name for name in shapes_got if name not in shapes_wanted]
    if missing:
        parts.append("it lacks " + ", ".join(missing))
    if extra:
        parts.append("it also has " + ", ".join(extra) + ", which the contract does not")
    return "; ".join(parts) or "the same names, some of them twice"


def _pairs(listing: Sequence) -> list[tuple[str, object]]:
    return [
        (item, None) if isinstance(item, str) else (item[0], tuple(item[1])) for item in listing
    ]


def seeded_state(
    learner,
    module,
    rng,
    expected: Sequence[tuple[str, tuple]],
    *,
    what: str,
    named: Named | None = None,
) -> dict[str, torch.Tensor]:
    """Fresh weights for the module (inputs.like_state), once its parameters are the
    contract's `expected` [(name, shape)] (else expect_parameters' sentence, with what `named`
    recognises): weights drawn for the learner's own names crashed the trusted side, 'the
    grader itself failed' (H44)."""
    expect_parameters(learner, module, expected, what=what, named=named)
    return like_state(rng, module.state_dict())


def expect_gradients(learner, module, *args, cotangent: torch.Tensor, what: str) -> None:
    """Fail unless a backward pass from `cotangent` gives every parameter a nonzero gradient."""
    what = shown_what(what)  # a hidden test shows no inputs
    grads = learner.parameter_grads(module, *args, cotangent=cotangent)
    missing = [
        name for name, grad in grads.items() if grad is None or not bool(torch.any(grad != 0))
    ]
    shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
    expect(not missing, NO_GRADIENT.format(what=what, names=shown))
    expect(grads, f"{what} has no parameters at all; expected trainable layers (nn.Linear, ...).")


@contextmanager
def forward_first(forward: Callable[[], None] | None) -> Iterator[None]:
    """Explain a gradient failure inside the block by the forward pass, when that is its cause.

    `forward()` checks the module's forward pass on the same inputs (raising GradingFailure,
    naming a known mistake where one matches); it runs only when the block fails: a wrong or
    missing gradient (GradingFailure) or an output that does not depend on the parameters (a
    `bad_return` LearnerError). A wrong forward pass is then given as the cause, in place of the
    gradient check's own hint (and NO_GRADIENT_ADVICE); a right one replaces that hint with
    FORWARD_RIGHT. Any other
    LearnerError (an exception, a time-out) passes through unchanged: its own sentence says
    more. Messages come from the checks, so they are as safe in hidden tests as those are.
    """
    try:
        yield
    except (GradingFailure, LearnerError) as error:
        if forward is None or (isinstance(error, LearnerError) and error.kind != "bad_return"):
            raise
        message = error.message if isinstance(error, GradingFailure) else error.feedback
        try:
            forward()
        except LearnerError:  # the forward pass cannot even run again: the first failure stands
            raise error from None
        except GradingFailure as cause:
            first = message.split(" Hint: ")[0].replace(f" {NO_GRADIENT_ADVICE}", "")
            raise GradingFailure(f"{first} {FORWARD_DIFFERS.format(cause=cause.message)}") from None
        if " Hint: " not in message:
            raise
        raise GradingFailure(f"{message.split(' Hint: ')[0]} {FORWARD_RIGHT}") from None
