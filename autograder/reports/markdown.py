"""summary.md: the total, a per-component table, then what to fix: each catalogued mistake
once (with the tests that found it), then the other failures test by test.

Everything that came from learner code or a grader message is escaped with sanitize.py: table
cells cannot be split by a pipe, HTML does not render, escape sequences are gone, and printed
output sits in a fence it cannot close.
"""

from __future__ import annotations

from pathlib import Path

from autograder.mistakes.catalogue import named_mistake_in_full
from autograder.reports.files import atomic_write_text
from autograder.reports.sanitize import (
    markdown_block,
    markdown_inline,
    neutralise_workflow_commands,
)
from autograder.results import GradeResult, TestResult, points

FILE_NAME = "summary.md"
#: Characters of one message or one test's output shown in summary.md.
MESSAGE_LIMIT = 1500
OUTPUT_LIMIT = 2000

TITLE = "# {course}: grade for {submission}"
TOTAL = "**Total: {score} / {max_score}**"
RUN_LINE = "Seed {seed}; {tests} tests; hidden tests {hidden}; started {started_at}."
ALL_PASSED = "Every test passed. Well done."
SEEN_IN = "(found by {count} test{s}: {tests}.)"
TO_FIX = "## What to fix"
FORBIDDEN_HEADING = "## Forbidden library calls"
GRADER_ERRORS_HEADING = "## Grader errors (not your fault)"


def render_summary(result: GradeResult) -> str:
    """The Markdown text of summary.md."""
    hidden = "included" if result.hidden_included else "not run"
    lines = [
        TITLE.format(
            course=markdown_inline(result.course), submission=markdown_inline(result.submission)
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
        "| Component | Score | Tests passed | First problem |",
        "| --- | ---: | ---: | --- |",
    ]
    for c in result.components:
        lines.append(
            f"| {markdown_inline(c.title)} | {points(c.score)} / {points(c.max_score)} "
            f"| {c.passed} / {c.total} | {markdown_inline(c.problem, MESSAGE_LIMIT)} |"
        )
    lines.append("")
    failing = [t for t in result.tests if not t.passed]
    if not failing and not result.grader_errors and result.all_passed:
        lines += [ALL_PASSED, ""]
    if failing:
        lines += [TO_FIX, ""]
        titles = {c.name: c.title for c in result.components}
        named, others = _group_named_mistakes(failing)
        for (component, _), (sentence, names) in named.items():
            title = markdown_inline(titles.get(component, component))
            tests = "; ".join(markdown_inline(n) for n in names)
            lines.append(
                f"- **{title}**: {markdown_inline(sentence, MESSAGE_LIMIT)} "
                + SEEN_IN.format(count=len(names), s="" if len(names) == 1 else "s", tests=tests)
            )
        for test in others:
            title = titles.get(test.component, test.component)
            lines.append(
                f"- **{markdown_inline(title)}: {markdown_inline(test.name)}**: "
                f"{markdown_inline(test.message, MESSAGE_LIMIT)}"
            )
            if test.output and test.visibility == "visible":
                shown = neutralise_workflow_commands(test.output)  # summaries get printed to logs
                lines += ["", _indent(markdown_block(shown, OUTPUT_LIMIT)), ""]
        lines.append("")
    if result.forbidden:
        lines += [FORBIDDEN_HEADING, ""]
        lines += [f"- {markdown_inline(use.sentence)}" for use in result.forbidden]
        lines.append("")
    if result.grader_errors:
        lines += [GRADER_ERRORS_HEADING, ""]
        lines += [f"- {markdown_inline(e, MESSAGE_LIMIT)}" for e in result.grader_errors]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _group_named_mistakes(
    failing: list[TestResult],
) -> tuple[dict[tuple[str, str], tuple[str, list[str]]], list[TestResult]]:
    """Failing tests whose message names a catalogued mistake, grouped per (component, id) as
    (the mistake's sentence, the tests' names), in order of first appearance; and the others,
    which are listed test by test."""
    named: dict[tuple[str, str], tuple[str, list[str]]] = {}
    others = []
    for test in failing:
        found = named_mistake_in_full(test.message)
        if found is None:
            others.append(test)
            continue
        mistake_id, sentence = found
        named.setdefault((test.component, mistake_id), (sentence, []))[1].append(test.name)
    return named, others


def write_summary(result: GradeResult, path: Path) -> Path:
    """Write summary.md atomically."""
    return atomic_write_text(path, render_summary(result))


def _indent(text: str) -> str:
    """Indent a block under its list item."""
    return "\n".join(f"  {line}" if line else line for line in text.split("\n"))
