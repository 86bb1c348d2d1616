"""Fix-first notes: a failing component whose parts also fail says to fix those first.

When a component has failing tests and so does a component it builds on (course.toml
`depends_on`), FIX_FIRST follows its first problem and ends the messages of its failing tests
that involve those parts. The component's own problem always comes first.

* A test involves the parts its `uses` marker names, less those a stand-in replaced, and any
  part whose module file its failure's location names; a test without the marker involves
  every part.
* No note for a test that failed on the component's own NotImplementedError, nor for a
  component zeroed for its own forbidden call. A test that names a known mistake of the
  component itself gets it only for the parts of the learner's own it says it ran (`uses`): in
  the learner's repository, where no stand-in replaces them, a wrong softmax makes a correct
  attention look like `[attention/softmax-over-queries]`.

Design: docs/internals/gradebook.md#fix-first-notes.
"""

from __future__ import annotations

import re
from dataclasses import replace

from autograder.config import CourseConfig
from autograder.config.sections import Component
from autograder.results.mistake_tags import named_mistakes
from autograder.results.model import ComponentResult, TestResult

FIX_FIRST = "Fix {parts} first: this part builds on {them}, and {their} own tests fail."


def fix_first_sentence(titles: list[str]) -> str:
    """FIX_FIRST for the titles of the failing components a component builds on."""
    if len(titles) == 1:
        return FIX_FIRST.format(parts=titles[0], them="it", their="its")
    parts = f"{', '.join(titles[:-1])} and {titles[-1]}"
    return FIX_FIRST.format(parts=parts, them="them", their="their")


def note_dependencies(
    config: CourseConfig, components: list[ComponentResult], tests: list[TestResult]
) -> tuple[list[ComponentResult], list[TestResult]]:
    """The components with FIX_FIRST after the problem of each failing one whose dependencies
    also fail (see the module docstring), and the tests with the note added to the failing
    ones' messages that may involve those dependencies."""
    by_name = {c.name: c for c in components}
    files = {c.name: c.module_file for c in config.components}
    failing = {c.name for c in components if c.total and c.passed < c.total}
    noted: dict[str, dict[str, str]] = {}  # component -> {part: its file}
    for component in config.components:
        result = by_name[component.name]
        parts = _failing_parts(component, files, failing)
        blocked = list(parts)
        if component.name not in failing or result.forbidden or not blocked:
            continue
        own = [t for t in tests if t.component == component.name and not t.passed]
        involved = {p for t in own for p in _involved(t, parts)}
        if not involved:
            continue  # its own code is not implemented yet: that comes first, alone
        fix_first = [d for d in blocked if d in involved]
        note = fix_first_sentence([by_name[d].title for d in fix_first])
        problem = f"{result.problem} {note}".strip()
        noted[component.name] = parts
        by_name[component.name] = replace(
            result, fix_first=tuple(fix_first), note=note, problem=problem
        )
    out = []
    for t in tests:
        involved = _involved(t, noted[t.component]) if t.component in noted else []
        if involved and not t.passed:
            note = fix_first_sentence([by_name[d].title for d in involved])
            t = replace(t, message=f"{t.message} {note}".strip())
        out.append(t)
    return [by_name[c.name] for c in components], out


def _failing_parts(
    component: Component, files: dict[str, str], failing: set[str]
) -> dict[str, str]:
    """{part: its module file} of the parts ``component`` builds on (depends_on order) that
    have failing tests (``failing``)."""
    return {d: files[d] for d in component.depends_on if d in failing and d != component.name}


def _involved(test: TestResult, parts: dict[str, str]) -> list[str]:
    """The parts a failing test may have failed because of, of those its component builds on
    (parts: {component: its module file}, in depends_on order): when the message names a
    known mistake of the component itself (`[attention/no-scale]`: the graders matched the
    result to that mistake made on top of correct parts), only the parts of the learner's own
    that the test says it ran (`uses`: no stand-in replaced them); when the code raised
    NotImplementedError, only those whose file the error's location names (`softmax.py`, not
    `attention.py`: a stub runs none of its parts); for a test that says which parts it runs
    (`uses`), those it runs and any whose file its failure's location names; otherwise all."""
    named = named_mistakes(test.message)
    if named and named[0][0].startswith(f"{test.component}/"):
        # Matched on top of correct parts; a part of the learner's own that the test ran and
        # that fails its own tests may explain the result as well: say both.
        return [p for p in parts if test.uses is not None and p in test.uses]
    located = [p for p, file in parts.items() if _names_file(test.message, file)]
    if test.error_kind == "not_implemented":
        return located
    if test.uses is not None:
        return [p for p in parts if p in test.uses or p in located]
    return list(parts)


def _names_file(message: str, file: str) -> bool:
    """Whether ``message`` names the module file ``file`` as a location: "...attention.py:36"
    in a visible test, "...attention.py." in a hidden one (the file alone), never the
    "/attention.py" inside "/multi_head_attention.py"."""
    return re.search(rf"/{re.escape(file)}(?![\w/])", message) is not None


def note_for_test(config: CourseConfig, test: TestResult, failing: set[str]) -> str:
    """FIX_FIRST for one failing test, from the components with failing tests so far
    (``failing``): what pytest shows under the test as it fails (the grade notes every test
    once all have run)."""
    component = next((c for c in config.components if c.name == test.component), None)
    if component is None:
        return ""
    parts = _failing_parts(component, {c.name: c.module_file for c in config.components}, failing)
    titles = {c.name: c.title for c in config.components}
    involved = _involved(test, parts) if parts else []
    return fix_first_sentence([titles[d] for d in involved]) if involved else ""
