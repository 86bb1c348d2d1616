"""The grammar of the framework's learner-facing sentences.

A capital first letter where the first word is plain English, a verb that agrees with its
subject, "1 entry" and "2 entries", what a value is ("a tuple of 2 items", "a numpy.ndarray of
shape (2, 3)")."""

from __future__ import annotations

import re

# The words a `what` in plain English starts with ("the gradient of ..."); any other first word
# may be code (a learner's function `f`), which keeps its spelling.
_PLAIN_FIRST_WORD = re.compile(r"(?:the|its|a|an|each|every|some|all|no|one|your) ")
_PLURAL_SUBJECT = re.compile(
    r"^(?:the\s+)?(?:weights|outputs|gradients|entries|values|rows|columns|scores|parameters)(?:\s|$)",
    re.IGNORECASE,
)
_PLURAL_FORMS = {"has": "have", "contains": "contain", "differs": "differ", "its": "their"}


def capitalised(message: str) -> str:
    """The message with its first word capitalised when it is a plain English word."""
    if _PLAIN_FIRST_WORD.match(message):
        return message[0].upper() + message[1:]
    return message


def agreeing(what: str, singular: str) -> str:
    """`singular` ("differs", "has", "contains", "its") agreeing with the subject `what`: the
    plural form when `what` names plural things ("the weights of ...", "outputs ...")."""
    return _PLURAL_FORMS[singular] if _PLURAL_SUBJECT.match(what.strip()) else singular


def non_finite_count(nan: int, inf: int) -> str:
    """ "1 NaN entry", "2 NaN and 1 infinite entries", "3 infinite entries"."""
    parts = [f"{n} {label}" for n, label in ((nan, "NaN"), (inf, "infinite")) if n]
    return f"{' and '.join(parts)} entr{'y' if nan + inf == 1 else 'ies'}"


def type_name(kind: type) -> str:
    """ "float", "numpy.ndarray", "torch.Tensor": a type as a learner reads it."""
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__.split('.')[0]}.{kind.__qualname__}"


def article(name: str) -> str:
    """ "a float", "an int", and None for NoneType."""
    if name == "NoneType":
        return "None"
    return ("an " if name[0].lower() in "aeiou" else "a ") + name


def describe(value: object) -> str:
    """What a value is, without its contents: "None", "a tuple of 2 items", "a float"."""
    if value is None:
        return "None"
    name = article(type_name(type(value)))
    if isinstance(value, (tuple, list)):
        return f"{name} of {len(value)} item{'s' if len(value) != 1 else ''}"
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, (int, float)):
        return f"{name} of shape {shape_text(tuple(shape))}"
    return name


def shape_text(shape: tuple[int, ...]) -> str:
    """(2, 3) as the learner reads it, plain ints."""
    return str(tuple(int(n) for n in shape))
