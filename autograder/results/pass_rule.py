"""The pass rule of the learner workflow: when the grade job passes.

Written `all` (every test passed, nothing zeroed) or `min_score:N` (a total of at least N
points). course.toml sets it (`[ci] pass_rule`, default "all"); the release bakes it into
grade.yml and `autograder grade --github` applies it; `--pass-rule` overrides it in both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autograder.results.model import GradeResult, points

PASS_RULE_FORMS = (
    "'all' (every test must pass) or 'min_score:N' (a total of at least N points, "
    "e.g. 'min_score:70')"
)
BAD_RULE = "The pass rule {value!r} is not one the grader knows; expected " + PASS_RULE_FORMS + "."
PASSED_ALL = "Passed: every test passed."
FAILED_ALL = "Not passed yet: the pass rule asks for every test to pass."
PASSED_MIN = "Passed: {score} points reach the minimum of {minimum}."
FAILED_MIN = "Not passed yet: {score} points, below the minimum of {minimum}."
_MIN = re.compile(r"^min_score:(\d+(?:\.\d+)?)$")


class PassRuleError(ValueError):
    """A pass rule that cannot be read; the message is one sentence."""


@dataclass(frozen=True)
class PassRule:
    """`all`, or a minimum total score."""

    min_score: float | None = None

    @classmethod
    def parse(cls, text: str) -> PassRule:
        text = text.strip()
        if text == "all":
            return cls()
        match = _MIN.match(text)
        if not match:
            raise PassRuleError(BAD_RULE.format(value=text))
        return cls(min_score=float(match.group(1)))

    def __str__(self) -> str:
        return "all" if self.min_score is None else f"min_score:{self.min_score:g}"

    def passed(self, result: GradeResult) -> bool:
        if self.min_score is None:
            return result.all_passed
        return result.score + 1e-9 >= self.min_score

    def verdict(self, result: GradeResult) -> str:
        """One sentence saying whether the job passes and why."""
        ok = self.passed(result)
        if self.min_score is None:
            return PASSED_ALL if ok else FAILED_ALL
        template = PASSED_MIN if ok else FAILED_MIN
        return template.format(score=points(result.score), minimum=points(self.min_score))
