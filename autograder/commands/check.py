"""`autograder check`: prove the graders before a release.

1. read course.toml, its catalogue of known mistakes, its mutants and its variants
   (mistakes/cases.py says what each case must score);
2. write every case's repository (the references, the stubs, each mutant, each variant) into a
   work folder (--keep DIR, or a temporary one);
3. grade them all with grade-class's machinery (batch/: warm forked harness
   processes, --jobs at a time, visible and hidden tests, the course's pristine graders);
4. judge each case (mistakes/verdicts.py) and print a table, the mutation score, the variants
   line and one paragraph per failure.

Exit status: 0 everything holds (references full marks, stubs zero, every mutant caught in its
own component and named by each of its failing tests, no mutant costing points elsewhere,
every variant full marks); 1 some check failed; 2 the check cannot run (bad course file,
catalogue, mutants or variants file, or option), with one sentence on stderr; 130 interrupted.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from autograder.batch.launch import grade_pending
from autograder.batch.processes import jobs_or_cores
from autograder.config import (
    CourseConfigError,
    OptionError,
    check_timeout,
    load_course_option,
)
from autograder.gradebook.roster import Learner
from autograder.gradebook.settings import JobSettings
from autograder.mistakes.cases import CheckError, Plan, plan_cases, write_case
from autograder.mistakes.catalogue import CatalogueError
from autograder.mistakes.mutants import MutantError
from autograder.mistakes.verdicts import Row, judge, read_outcome

SUBMISSIONS_DIR = "submissions"  # DIR/submissions/<case>/<package_dir>
RESULTS_DIR = "results"  # DIR/results/<case>/results.json, summary.md, record.json, ...

KEEP_NOT_EMPTY = (
    "The folder {path} given to --keep already exists and is not empty; choose a new folder so "
    "that no old result is mixed into this check."
)
INTERRUPTED = "Interrupted: the check did not finish."
MUTATION_SCORE = "Mutation score: {caught}/{total} caught and named ({percent})"
VARIANTS_LINE = "Variants: {kept}/{total} keep full marks"
UNCOVERED_LINE = "Catalogued mistakes without a mutant: {count}"
DURATION_LINE = "{cases} cases graded in {seconds:.0f} s with {jobs} {noun}."
KEPT_LINE = "Each case's repository and reports are kept in {path}."
#: The score columns: the case's own component (mutants and variants), the whole course.
COMPONENT_HEADER = "Own component"
TOTAL_HEADER = "Course total"
_EXIT_OK, _EXIT_FAILED, _EXIT_BAD, _EXIT_INTERRUPTED = 0, 1, 2, 130


def main(
    *,
    course: Path | None,
    jobs: int | None,
    components: Sequence[str] = (),
    keep: Path | None = None,
    test_timeout: float | None = None,
    quiet: bool = False,
) -> int:
    """Run the check; return the exit status of the module docstring."""
    try:
        config = load_course_option(course)
        plan = plan_cases(config, list(components))
    except (CourseConfigError, CatalogueError, MutantError, CheckError) as error:
        return _error(str(error))
    try:
        jobs = jobs_or_cores(jobs)
        check_timeout(test_timeout)
    except OptionError as error:
        return _error(str(error))
    if keep is not None:
        keep = Path(keep).resolve()
        if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
            return _error(KEEP_NOT_EMPTY.format(path=keep))
        keep.mkdir(parents=True, exist_ok=True)
    work = keep or Path(tempfile.mkdtemp(prefix="autograder-check-"))
    err = Console(stderr=True, highlight=False, quiet=quiet)
    start = time.monotonic()
    try:
        rows = run_check(plan, work, jobs=jobs, test_timeout=test_timeout, err=err)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return _EXIT_INTERRUPTED
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    console = Console(highlight=False)
    print_report(plan, rows, console)
    graded = sum(row.case.graded for row in rows)
    seconds = time.monotonic() - start
    noun = "job" if jobs == 1 else "jobs"
    console.print(DURATION_LINE.format(cases=graded, seconds=seconds, jobs=jobs, noun=noun))
    if keep is not None:
        console.print(KEPT_LINE.format(path=keep))
    return _EXIT_OK if all(row.ok for row in rows) else _EXIT_FAILED


def run_check(
    plan: Plan, work: Path, *, jobs: int, test_timeout: float | None, err: Console
) -> list[Row]:
    """Write, grade and judge every case of the plan in work; the rows in plan order."""
    submissions, out = work / SUBMISSIONS_DIR, work / RESULTS_DIR
    out.mkdir(parents=True, exist_ok=True)
    problems: dict[str, str] = {}
    learners = []
    for case in plan.cases:
        if not case.graded:
            continue
        try:
            folder = write_case(plan, case, submissions / case.key)
        except MutantError as error:
            problems[case.key] = str(error)
            continue
        learners.append(Learner(case.key, folder))
    settings = JobSettings(
        course=plan.config.path,
        out=out,
        deadline=None,
        test_timeout=test_timeout,
        seed=0,
        run_id=uuid.uuid4().hex,
        parent_pid=os.getpid(),
    )
    grade_pending(settings, learners, len(learners), jobs, err, label="checking", noun="cases")
    graded = {learner.id for learner in learners}
    return [
        judge(
            plan,
            case,
            read_outcome(out, case.key) if case.key in graded else None,
            problems.get(case.key, ""),
        )
        for case in plan.cases
    ]


def print_report(plan: Plan, rows: list[Row], console: Console) -> None:
    """The table, the mutation score and variants lines, then why each failing case failed."""
    console.print(check_table(plan, rows))
    console.print()
    for line in summary_lines(rows):
        console.print(line)
    failing = [row for row in rows if not row.ok]
    if failing:
        console.print()
    for row in failing:
        prefix = _KIND_PREFIX.get(row.case.kind, "")
        console.print(Text(f"{prefix}{row.case.label}: {' '.join(row.reasons)}"))


def check_table(plan: Plan, rows: list[Row]) -> Table:
    """Case, expected, the score of the case's own component, the course total, named,
    verdict: the reference and the stubs first (expected: full, zero; no own component), then
    one section per component (its name as a heading row) with its mutants (expected: < full,
    less than full marks in their own component), its catalogued mistakes without a mutant
    (expected: a mutant) and its variants (expected: full), each by its slug. Every column
    means one thing on every row; where else a case lost points is said under the table. Fits
    80 columns, also when piped (rich then prints plain text, 80 wide): the case names stay
    whole, the other cells wrap."""
    table = Table(
        title=f"{plan.config.course.name}: autograder check",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("Case", no_wrap=True, overflow="fold")
    table.add_column("Expected", overflow="fold")
    table.add_column(COMPONENT_HEADER, justify="right", overflow="fold")
    table.add_column(TOTAL_HEADER, justify="right", overflow="fold")
    table.add_column("Named", no_wrap=True)
    table.add_column("Verdict", no_wrap=True)
    for row in rows:
        if row.case.kind in ("reference", "stubs"):
            _add_row(table, row, row.case.label)
    for component in plan.config.components:
        own = [row for row in rows if row.case.component == component.name]
        if not own:
            continue
        table.add_section()
        table.add_row(Text(component.name, style="bold"))
        for row in sorted(own, key=lambda r: _ORDER[r.case.kind]):
            _add_row(table, row, "  " + row.case.label.split("/", 1)[1])
    return table


def _add_row(table: Table, row: Row, label: str) -> None:
    named = "" if row.case.kind != "mutant" else _named_cell(row)
    verdict = Text(row.verdict, style="green" if row.ok else "bold red")
    table.add_row(Text(label), row.expected, row.component, row.total, named, verdict)


def _named_cell(row: Row) -> str:
    """yes (every failing test of the mutant's component names it), no (none does), "2/3"
    (some do), or - (not caught: nothing failed)."""
    if row.named is None or row.named_in is None:
        return "-"
    named, failing = row.named_in
    if row.named:
        return "yes"
    return "no" if named == 0 else f"{named}/{failing}"


def summary_lines(rows: list[Row]) -> list[str]:
    """`Mutation score: 34/35 caught and named (97%)`, `Variants: 6/6 keep full marks` and,
    when some catalogued mistake has no mutant, how many."""
    mutants = [row for row in rows if row.case.kind == "mutant"]
    caught = sum(row.caught_and_named for row in mutants)
    percent = f"{math.floor(100 * caught / len(mutants))}%" if mutants else "no mutants"
    variants = [row for row in rows if row.case.kind == "variant"]
    lines = [
        MUTATION_SCORE.format(caught=caught, total=len(mutants), percent=percent),
        VARIANTS_LINE.format(kept=sum(row.ok for row in variants), total=len(variants)),
    ]
    uncovered = sum(row.case.kind == "uncovered" for row in rows)
    if uncovered:
        lines.append(UNCOVERED_LINE.format(count=uncovered))
    return lines


_KIND_PREFIX = {"mutant": "mutant ", "uncovered": "mistake ", "variant": "variant "}
_ORDER = {"mutant": 0, "uncovered": 1, "variant": 2}


def _error(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return _EXIT_BAD
