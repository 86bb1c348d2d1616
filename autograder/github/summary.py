"""The job summary and the pull-request comment body.

Both start from trusted text (course titles, numbers, our own sentences); every piece of learner
text goes through learner_text.markdown_github (one line, HTML and Markdown escaped, no @mentions,
no workflow commands, capped). The comment begins with a hidden marker so the workflow can find
and edit the same comment on later pushes instead of adding a new one.
"""

from __future__ import annotations

from collections.abc import Sequence

from autograder.github.commit_status import context_for
from autograder.learner_text import markdown_github
from autograder.release.manifest import ProtectedChange
from autograder.reports.summary_md import render_summary
from autograder.reports.terminal import shortened
from autograder.results import GradeResult, points
from autograder.results.pass_rule import PassRule

COMMENT_MARKER = "<!-- t101-autograder:score -->"
#: GitHub refuses comments over 65536 characters; stay well below.
COMMENT_LIMIT = 60000
PROBLEM_LIMIT = 300

HEADING = "## {course}: {score} / {max_score}"
HIDDEN_RAN = "The hidden tests ran too."
HIDDEN_NOT_RUN = (
    "Only the visible tests ran here: the hidden tests are run by your instructor, not by this "
    "workflow. After your instructor's next grading run, your score with the hidden tests "
    "appears on the commit they graded, as the commit status **{context}**, and in a comment "
    "on your pull request when your instructor posts one."
)
FEEDBACK_ONLY = (
    "This score is feedback. Your instructor's grade comes from their own run with the "
    "original tests."
)
PROTECTED_HEADING = "### Protected files changed"
PROTECTED_NOTE = (
    "These files came with the assignment and should not be edited. Your instructor's grade "
    "runs the original copies, so these edits cannot change it, and your instructor sees them."
)
COMMIT = "Commit `{sha}`."
DETAILS = "What to fix, test by test: [the job summary of this run]({url})."
DETAILS_NO_URL = "What to fix, test by test: the job summary of this workflow run."
#: Where a problem cut short in the table continues (terminal.shortened).
DETAILS_PLACE = "the job summary of this run"
NOT_GRADED_HEADING = "## Not graded"
CUT = "\n\n(The rest of this comment was cut: it was too long.)\n"


def hidden_not_run(course: str) -> str:
    """HIDDEN_NOT_RUN for a course: the commit status that shows the hidden-test score."""
    return HIDDEN_NOT_RUN.format(context=markdown_github(context_for(course)))


def verdict_lines(
    result: GradeResult, rule: PassRule, changes: Sequence[ProtectedChange]
) -> list[str]:
    """The heading, the pass rule's verdict, the hidden-tests note and any tampering."""
    icon = "✅" if rule.passed(result) else "❌"
    lines = [
        HEADING.format(
            course=markdown_github(result.course),
            score=points(result.score),
            max_score=points(result.max_score),
        ),
        "",
        f"{icon} {rule.verdict(result)}",
        "",
        f"{HIDDEN_RAN if result.hidden_included else hidden_not_run(result.course)} "
        f"{FEEDBACK_ONLY}",
        "",
    ]
    if changes:
        lines += [PROTECTED_HEADING, "", PROTECTED_NOTE, ""]
        lines += [f"- {markdown_github(change.sentence)}" for change in changes]
        lines.append("")
    return lines


def step_summary(result: GradeResult, rule: PassRule, changes: Sequence[ProtectedChange]) -> str:
    """The job summary: the verdict, then summary.md (table and what to fix)."""
    return "\n".join(verdict_lines(result, rule, changes)) + "\n" + render_summary(result)


def score_table(result: GradeResult) -> list[str]:
    lines = [
        "| Component | Score | Tests passed | First problem |",
        "| --- | ---: | ---: | --- |",
    ]
    for c in result.components:
        problem = (
            markdown_github(shortened(c.problem, PROBLEM_LIMIT, rest=DETAILS_PLACE))
            if c.problem
            else ""
        )
        lines.append(
            f"| {markdown_github(c.title)} | {points(c.score)} / {points(c.max_score)} "
            f"| {c.passed} / {c.total} | {problem} |"
        )
    return lines


def comment_body(
    result: GradeResult,
    rule: PassRule,
    changes: Sequence[ProtectedChange],
    *,
    sha: str = "",
    run_url: str = "",
) -> str:
    """The pull-request comment: marker, verdict, commit, score table, where the details are."""
    lines = [COMMENT_MARKER, *verdict_lines(result, rule, changes)]
    if sha:
        lines += [COMMIT.format(sha=markdown_github(sha[:12])), ""]
    lines += [*score_table(result), ""]
    lines.append(DETAILS.format(url=run_url) if run_url else DETAILS_NO_URL)
    return _capped("\n".join(lines) + "\n")


def not_graded_summary(sentence: str) -> str:
    return f"{NOT_GRADED_HEADING}\n\n{markdown_github(sentence)}\n"


def not_graded_comment(sentence: str) -> str:
    return f"{COMMENT_MARKER}\n{not_graded_summary(sentence)}"


def _capped(text: str) -> str:
    if len(text) <= COMMENT_LIMIT:
        return text
    return text[: COMMENT_LIMIT - len(CUT)] + CUT
