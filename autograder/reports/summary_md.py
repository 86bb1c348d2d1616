"""summary.md: the learner's total, components and what to fix.

summary.md: the total, a per-component table, then what to fix: each problem once per
component (what_to_fix.py), with the tests that found it. Hidden tests are counted, never named.

The file is read both rendered (GitHub) and raw (a terminal, an editor). Everything that came
from learner code or a grader message goes through learner_text.markdown_inline, which escapes only
what Markdown would misread in that place (a pipe in a table cell, a tag, emphasis, a leading
`#`...), so the raw text stays readable; escape sequences are gone, and printed output sits in a
fence it cannot close.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autograder.atomic_files import atomic_write_text
from autograder.learner_text import OUTPUT_LIMIT as INLINE_LIMIT
from autograder.learner_text import (
    markdown_block,
    markdown_inline,
    neutralise_workflow_commands,
)
from autograder.reports.what_to_fix import problems
from autograder.results import GradeResult, TestResult, points
from autograder.results.same_problem import stopped_call

FILE_NAME = "summary.md"
#: Characters of one message or one test's output shown in summary.md.
MESSAGE_LIMIT = 1500
OUTPUT_LIMIT = 2000

TITLE = "# {course}: grade for {submission}"
TOTAL = "**Total: {score} / {max_score}**"
RUN_LINE = (
    "{tests} tests (hidden tests {hidden}) on the random inputs of `--seed {seed}`; "
    "started {started_at}."
)
#: Under the score table: a score is weighted, not "tests passed / tests x points".
WEIGHTED = (
    "Tests are weighted, so a component's score is not its share of tests passed: each test's "
    "points are in results.json."
)
ALL_PASSED = "Every test passed. Well done."
#: After a message several tests share; the tests follow as a nested list, one a line (a test
#: name may hold any separator: a parametrized id, "; ", a comma).
SEEN_IN = "Found by {count} {tests}:"
#: After SEEN_IN of a time-out's (or crash's) problem: how many of its tests only repeated it.
NOT_RUN_AGAIN = "{count} of them not run again after it"
#: After a forbidden use's sentence in "What to fix": its tests failed for the use, not for
#: what they check, so they are not listed.
ZEROED_ONE = "1 test of this component scores zero for it."
ZEROED = "{count} tests of this component score zero for it."
TO_FIX = "## What to fix"
#: Under TO_FIX: a test's name says what it checks, not one more thing that is wrong.
TO_FIX_NOTE = (
    "Each problem is told once, followed by the tests that found it; a test is named by what it "
    "checks, not by what went wrong."
)
FORBIDDEN_HEADING = "## Forbidden library calls"
REVIEW_HEADING = "## Flagged for your instructor's review"
GRADER_ERRORS_HEADING = "## Grader errors (not your fault)"


def render_summary(result: GradeResult) -> str:
    """The Markdown text of summary.md."""
    hidden = "included" if result.hidden_included else "not run"
    lines = [
        TITLE.format(
            course=markdown_inline(result.course, table=False),
            submission=markdown_inline(result.submission, table=False),
        ),
        "",
        TOTAL.format(score=points(result.score), max_score=points(result.max_score)),
        "",
        RUN_LINE.format(
            seed=result.seed,
            tests=len(result.tests),
            hidden=hidden,
            started_at=result.started_at or "-",
        ),
        "",
        *([markdown_inline(result.graded.sentence(), table=False), ""] if result.graded else []),
        "| Component | Score | Tests passed | First problem |",
        "| --- | ---: | ---: | --- |",
    ]
    for c in result.components:
        lines.append(
            f"| {markdown_inline(c.title)} | {points(c.score)} / {points(c.max_score)} "
            f"| {c.passed} / {c.total} | {markdown_inline(c.problem, MESSAGE_LIMIT)} |"
        )
    lines += ["", WEIGHTED, ""]
    for note in result.notes:
        lines += [markdown_inline(note, MESSAGE_LIMIT, table=False), ""]
    failing = [t for t in result.tests if not t.passed]
    if not failing and not result.grader_errors and result.all_passed:
        lines += [ALL_PASSED, ""]
    if failing:
        lines += [TO_FIX, "", TO_FIX_NOTE, "", *_failure_lines(result, failing), ""]
    told = {(t.component, t.message.strip()) for t in failing}
    untold = [use.sentence for use in result.forbidden if (use.component, use.sentence) not in told]
    lines += _listed(FORBIDDEN_HEADING, untold)
    lines += _listed(REVIEW_HEADING, [flag.sentence for flag in result.review])
    lines += _listed(GRADER_ERRORS_HEADING, result.grader_errors, MESSAGE_LIMIT)
    return "\n".join(lines).rstrip("\n") + "\n"


def _failure_lines(result: GradeResult, failing: list[TestResult]) -> list[str]:
    """What to fix: one item per problem of a component (what_to_fix.problems), headed by the
    component, with the tests that found it and the output of a visible one; a forbidden use
    (which zeroes every test of its component) without them."""
    lines = []
    titles = {c.name: c.title for c in result.components}
    forbidden = {(use.component, use.sentence) for use in result.forbidden}
    for problem in problems(failing):
        title = markdown_inline(titles.get(problem.component, problem.component), table=False)
        text = markdown_inline(problem.sentence, MESSAGE_LIMIT, table=False)
        if not text.endswith((".", "!", "?", "…", ":")):  # an exception's own text, unended
            text += "."
        count = len(problem.tests)
        if (problem.component, problem.sentence.strip()) in forbidden:
            zeroed = ZEROED.format(count=count) if count > 1 else ZEROED_ONE
            lines.append(f"- **{title}**: {text} {zeroed}")
            continue
        seen_in = SEEN_IN.format(count=count, tests="test" if count == 1 else "tests")
        again = sum(1 for t in problem.tests if _not_run_again(t))
        if again and again < count:  # a time-out (or crash) joined by the calls not run again
            seen_in = f"{seen_in[:-1]} ({NOT_RUN_AGAIN.format(count=again)}):"
        lines.append(f"- **{title}**: {text} {seen_in}")
        lines += [f"  - {name}" for name in _found_by(problem.tests)]
        shown = next((t for t in problem.tests if t.output and t.visibility == "visible"), None)
        if shown is not None:
            output = neutralise_workflow_commands(shown.output)  # summaries reach logs
            lines += ["", _indent(markdown_block(output, OUTPUT_LIMIT)), ""]
    return lines


def _not_run_again(test: TestResult) -> bool:
    """Whether the harness did not run the test's call again after it stopped in earlier
    tests (its error kind and sentence both say so, never its words alone)."""
    found = stopped_call(test.message, test.error_kind)
    return found is not None and found[2]


def _listed(heading: str, sentences: Sequence[str], limit: int = INLINE_LIMIT) -> list[str]:
    """A section of one bullet per sentence (none when there is no sentence); ``limit``: the
    characters kept of each (default: markdown_inline's)."""
    if not sentences:
        return []
    return [heading, "", *(f"- {markdown_inline(s, limit, table=False)}" for s in sentences), ""]


def _found_by(tests: list[TestResult]) -> list[str]:
    """The visible tests' names, then how many hidden tests (never named)."""
    names = [markdown_inline(t.name, table=False) for t in tests if t.visibility == "visible"]
    hidden = len(tests) - len(names)
    if hidden:
        names.append(f"{hidden} hidden test{'s' if hidden != 1 else ''}")
    return names


def write_summary(result: GradeResult, path: Path) -> Path:
    """Write summary.md atomically."""
    return atomic_write_text(path, render_summary(result))


def _indent(text: str) -> str:
    """Indent a block under its list item."""
    return "\n".join(f"  {line}" if line else line for line in text.split("\n"))
