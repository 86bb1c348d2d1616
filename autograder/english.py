"""The grammar of the framework's learner-facing sentences: a capital first letter where the
first word is plain English, a verb that agrees with its subject, "1 entry" and "2 entries"."""

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
