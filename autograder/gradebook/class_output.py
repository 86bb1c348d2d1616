"""What a class command (grade-class, merge) writes and says at its end.

`finish` rebuilds DIR/gradebook.csv and the class report from the learners' records, prints a
per-component table, a line per problem row (stderr) and where the files are. The components
are course.toml's, then the course's notebook assignments (`notebook`, optional: a learner
whose repository has no notebook has an empty cell there).
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from autograder.config import CourseConfig
from autograder.gradebook import report, report_build, report_model, store
from autograder.notebook import notebook_components
from autograder.notebook.hand_grades import ABSENT, hand_graded_columns, hand_grades
from autograder.results import points

WRITTEN = (
    "Gradebook: {gradebook}; class report: {markdown} and {html}; each learner's reports in "
    "{learner}/"
)
EXIT_OK, EXIT_ERRORS = 0, 1  # every row graded; some rows carry an error


def finish(
    config: CourseConfig,
    out: Path,
    learners: list[str] | None,
    *,
    quiet: bool,
    shown: Path | None = None,
    ungraded: store.Ungraded = "",
) -> int:
    """Rebuild the gradebook and the report from out; print the table and where the files
    are (``shown``: out as the user typed it); the exit status. ``ungraded``: as rebuild's."""
    records = rebuild(config, out, learners, ungraded=ungraded)
    console = None if quiet else Console(highlight=False)
    if console is not None:
        console.print(component_table(config, records))
    for line in problem_lines(records):
        print(line, file=sys.stderr)
    if console is not None:
        console.print(where_line(shown or out), markup=False, soft_wrap=True)
    return EXIT_ERRORS if any(r.failed for r in records) else EXIT_OK


ERRORS_SHOWN = 20  # error rows printed one by one; then how many more
MORE_ERRORS = "... and {count} more rows with an error: see the class report ({report})."
NOTHING_LINE = (
    "{count} learner{s} gave nothing to grade (an empty repository, no commit, or none before "
    "the deadline): {who}; their rows say why."
)
NOT_YET_LINE = "{count} learner{s} not graded yet: {who}; their rows say why."


def problem_lines(records: list[store.LearnerRecord]) -> list[str]:
    """What the command says on stderr of the rows without a grade: each error row (at most
    ERRORS_SHOWN), then one line for the learners who gave nothing to grade and one for those
    not graded yet (H49: a line each, in the present tense, repeated on every rerun and one per
    learner of a missing shard)."""
    errors = [r for r in records if r.grading_error]
    lines = [f"{r.learner}: {r.error}" for r in errors[:ERRORS_SHOWN]]
    if len(errors) > ERRORS_SHOWN:
        lines.append(
            MORE_ERRORS.format(count=len(errors) - ERRORS_SHOWN, report=report.MARKDOWN_FILE)
        )
    for template, chosen in (
        (NOTHING_LINE, [r.learner for r in records if r.nothing_submitted and not r.pending]),
        (NOT_YET_LINE, [r.learner for r in records if r.pending]),
    ):
        if chosen:
            s = "" if len(chosen) == 1 else "s"
            lines.append(
                template.format(count=len(chosen), s=s, who=report_model.who_text(tuple(chosen)))
            )
    return lines


def rebuild(
    config: CourseConfig,
    out: Path,
    learners: list[str] | None,
    *,
    note: str = "",
    ungraded: store.Ungraded = "",
) -> list[store.LearnerRecord]:
    """gradebook.csv and the class report from the records in out (those of ``learners`` when
    given; ``note``: the report's first sentence); the records they show. ``ungraded``: the
    error (store.Ungraded) of the row given to each of ``learners`` without a record (an
    interrupted run's gradebook still has a row for every learner)."""
    store.clear_partial(out)
    parts = class_components(config)
    by_hand = hand_grades(config, out, learners)  # the notebook's, from DIR/nbgrader
    for sentence in by_hand.notes:
        print(sentence, file=sys.stderr)
    names = [c.name for c in parts]
    records = store.write_gradebook(out, names, learners, ungraded=ungraded, adjust=by_hand.adjust)
    note = " ".join(filter(None, [note, *by_hand.notes]))
    report.write_report(out, records, parts, config.course.name, note=note)
    return records


def where_line(out: Path) -> str:
    """The command's last line: where the gradebook, the class report and the learners' own
    reports are."""
    return WRITTEN.format(
        gradebook=out / store.GRADEBOOK_FILE,
        markdown=out / report.MARKDOWN_FILE,
        html=report.HTML_FILE,
        learner=out / "<learner>",
    )


def class_components(config: CourseConfig) -> list[report.Component]:
    """The gradebook's components: course.toml's, then the notebook assignments (optional:
    graded only for learners whose repository holds the notebook)."""
    parts = [report.Component(c.name, c.title, float(c.points)) for c in config.components]
    for name, title, value in notebook_components(config.root):
        parts.append(report.Component(name, title, float(value), optional=True))
    for name, title, value in hand_graded_columns(config):  # once graded in formgrader
        parts.append(report.Component(name, title, float(value), optional=True, absent=ABSENT))
    return parts


def component_table(config: CourseConfig, records: list[store.LearnerRecord]) -> Table:
    """Per component: mean score and learners with full marks (of those graded for it); the
    total as the footer."""
    graded = [r for r in records if not r.failed]
    parts = report_build.submitted_components(graded, class_components(config))
    table = Table(
        title=f"{config.course.name}: {len(graded)} of {len(records)} graded",
        title_justify="left",
        show_footer=True,
    )
    table.add_column("Component", footer="Total")
    mean_total = sum(r.total or 0.0 for r in graded) / len(graded) if graded else 0.0
    max_total = sum(c.points for c in parts)
    footer = f"{points(mean_total)} / {points(max_total)}" if graded else report_model.NO_LEARNER
    table.add_column("Mean", justify="right", footer=footer)
    table.add_column("Full marks", justify="right")
    for c in parts:
        scores = report_build.component_scores(graded, c)
        mean = sum(scores) / len(scores) if scores else 0.0
        full = sum(1 for s in scores if s >= c.points - 1e-9)
        shown = f"{points(mean)} / {points(c.points)}" if scores else report_model.NO_LEARNER
        table.add_row(c.title, shown, f"{full} / {len(scores)}")
    return table
