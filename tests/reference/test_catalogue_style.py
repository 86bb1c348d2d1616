"""The course's catalogue reads in one style: each explanation says what the learner's code
does, then, after a semicolon, what to fix (docs/author/mistakes.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.mistakes import course_catalogue

ROOT = Path(__file__).resolve().parents[2]
MISTAKES = list(course_catalogue(load_course(ROOT / "course.toml")))


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m.id)
def test_the_cause_then_a_semicolon_then_the_fix(mistake):
    explanation = mistake.explanation
    assert explanation[0].islower(), "lowercase: the sentence capitalises it after [id]"
    assert not explanation.endswith("."), "the sentence adds its full stop"
    depth, top_level = 0, []
    for index, char in enumerate(explanation):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ";" and depth == 0:
            top_level.append(index)
    assert top_level, "no '; ' between what the code does and what to fix"
