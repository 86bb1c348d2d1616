"""`autograder grade`: grade submissions and write their reports.

For each submission, in order: grade it in this process (grading/in_process.py: pytest over
the course's visible tests, and hidden ones unless visible-only or absent; pytest's console in
DIR/grader.log; DIR/results.json, DIR/summary.md and DIR/junit.xml, even when every test
failed); print its table. With several submissions, a class overview at the end.

The course file comes from --course or the nearest course.toml above the current folder, never
from inside a submission: a learner cannot change their own points.

Exit status: 0 every test of every submission passed; 1 some test failed; 2 the grader could not
run for at least one submission (missing path, bad course file, graders failing to collect),
with one sentence per problem on stderr; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from autograder.config import (
    CourseConfig,
    CourseConfigError,
    OptionError,
    check_timeout,
    load_course_option,
)
from autograder.github.actions_run import GITHUB_ONE, GithubRun
from autograder.grading.bytecode import bytecode_cache
from autograder.grading.in_process import Interrupted, grade_in_process
from autograder.grading.one_submission import (
    REPORT_FILES,
    Options,
    Submission,
    cannot_grade,
)
from autograder.grading.package_dir import grader_folders
from autograder.notebook import notebook_components
from autograder.notebook.submission import notebook_reports
from autograder.release.manifest import ManifestError, read_manifest
from autograder.reports import terminal
from autograder.results import GradeResult, Ungraded
from autograder.results.pass_rule import PassRule, PassRuleError

DEFAULT_OUT = Path("grades")

NO_SUBMISSIONS = "Name at least one submission folder to grade."
SAME_NAME = (
    "Two submissions are both named {name} ({first} and {second}); their reports would "
    "overwrite each other, so rename one or grade them separately."
)
NOT_GRADED = "{name} was not graded: {reason}"
UNKNOWN_COMPONENT = "--component {name} is not a component of {course}; choose from: {names}."

INTERRUPTED = "Interrupted: {name} was not graded; its reports in {out} are incomplete."
REPORTS_ONE = "Reports: {folder} ({files})"
REPORTS_MANY = "Reports: one folder per submission in {out}, e.g. {folder} ({files} in each)"
_EXIT_OK, _EXIT_FAILED, _EXIT_ERROR, _EXIT_INTERRUPTED = 0, 1, 2, 130


def main(
    *,
    submissions: Sequence[Path],
    out: Path | None,
    course: Path | None,
    visible_only: bool,
    test_timeout: float | None,
    seed: int,
    quiet: bool,
    components: Sequence[str] = (),
    github: bool = False,
    pass_rule: str | None = None,
    manifest: Path | None = None,
) -> int:
    """Grade each submission; the exit status of the module docstring. ``github`` (one
    submission): workflow commands off while grading, then annotations, job summary, outputs
    and comment.md, and the exit status by ``pass_rule`` (None: course.toml's). ``manifest``:
    protected files that differ from it go into results.json."""
    checked = _checked(submissions, course, test_timeout, components, manifest, github, pass_rule)
    if isinstance(checked, str):
        return _error(checked)
    config, run, roots = checked
    console = None if quiet else terminal.new_console()
    if run is not None:
        run.start()
    _import_grader_libraries()
    jobs = [
        _job(given, root, out, many=len(submissions) > 1)
        for given, root in zip(submissions, roots, strict=True)
    ]
    outcomes: list[GradeResult | Ungraded] = []

    def graded(submission: Submission, outcome: GradeResult | Ungraded) -> None:
        outcomes.append(outcome)
        if isinstance(outcome, Ungraded):
            print(
                NOT_GRADED.format(name=outcome.submission, reason=outcome.reason), file=sys.stderr
            )
        elif console is not None:
            terminal.print_submission(outcome, console)

    shown = console is not None and run is None  # not in a learner's CI job
    try:
        with bytecode_cache([config.root, *roots]):
            _grade(
                config, jobs, visible_only, test_timeout, seed, components, manifest, graded, shown
            )
    except Interrupted as stop:
        name, folder = stop.submission.name, stop.submission.out_dir
        print(INTERRUPTED.format(name=name, out=folder), file=sys.stderr)
        return _EXIT_INTERRUPTED
    if console is not None:
        if len(outcomes) > 1:
            terminal.print_class(outcomes, console)
        _print_where(outcomes, submissions, out, console)
    if run is not None:
        return run.finish(config, outcomes[0], submission=jobs[0].folder, out_dir=jobs[0].out_dir)
    if any(isinstance(o, Ungraded) for o in outcomes):
        return _EXIT_ERROR
    return _EXIT_OK if all(chosen_passed(o, components) for o in outcomes) else _EXIT_FAILED


def chosen_passed(result: GradeResult, components: Sequence[str]) -> bool:
    """Full marks on what was graded: every component (all_passed), or with --component only
    the chosen ones; the others score zero because they were not run, not because they fail."""
    if not components:
        return result.all_passed
    chosen = [c for c in result.components if c.name in components]
    return (
        all(t.passed for t in result.tests if t.component in components)
        and all(c.passed == c.total > 0 for c in chosen)
        and not result.grader_errors
    )


def _checked(
    submissions: Sequence[Path],
    course: Path | None,
    test_timeout: float | None,
    components: Sequence[str],
    manifest: Path | None,
    github: bool,
    pass_rule: str | None,
) -> tuple[CourseConfig, GithubRun | None, list[Path]] | str:
    """The course, the GitHub run (with --github) and each submission's repository, once the
    options are checked; else the one sentence saying what is wrong."""
    try:
        config = load_course_option(course)
        if not submissions:
            return NO_SUBMISSIONS
        check_timeout(test_timeout)
        names = [c.name for c in config.components]
        names += [n for n, _, _ in notebook_components(config.root)]
        for component in components:
            if component not in names:
                joined = ", ".join(names)
                return UNKNOWN_COMPONENT.format(name=component, course=config.path, names=joined)
        if manifest is not None:
            read_manifest(manifest)
        rule = config.ci.pass_rule if pass_rule is None else pass_rule
        run = GithubRun(PassRule.parse(rule)) if github else None
    except (CourseConfigError, OptionError, ManifestError, PassRuleError) as error:
        return str(error)
    if run is not None and len(submissions) != 1:
        return GITHUB_ONE.format(count=len(submissions))
    roots = [config.submission_root(Path(s)) for s in submissions]
    seen: dict[str, Path] = {}
    for given, root in zip(submissions, roots, strict=True):
        if root.name in seen:
            return SAME_NAME.format(name=root.name, first=seen[root.name], second=given)
        seen[root.name] = Path(given)
    return config, run, roots


def _job(given: Path, root: Path, out: Path | None, *, many: bool) -> Submission:
    """A submission as given on the command line, its reports in out (or grades/NAME), or in
    out/NAME when there are several."""
    folder = (out or DEFAULT_OUT) / root.name if many else out or DEFAULT_OUT / root.name
    return Submission(Path(given), root.name, folder, hide=(folder,))


def _grade(
    config: CourseConfig,
    jobs: list[Submission],
    visible_only: bool,
    test_timeout: float | None,
    seed: int,
    components: Sequence[str],
    manifest: Path | None,
    graded: Callable[[Submission, GradeResult | Ungraded], None],
    shown: bool,
) -> None:
    """Grade the submissions in this process, each reported to ``graded`` once done; ``shown``:
    with a spinner on the terminal while each is graded."""
    folders = grader_folders(config, visible_only)
    if isinstance(folders, Ungraded):
        for job in jobs:
            graded(job, cannot_grade(config, job, folders.reason))
        return
    options = Options(
        config,
        seed=seed,
        test_timeout=test_timeout,
        hidden_included=len(folders) > 1,
        components=tuple(components),
        manifest=manifest,
    )
    status = (lambda job: terminal.grading_status(job.name)) if shown else None
    grade_in_process(options, folders, jobs, graded=graded, status=status)


def _print_where(
    outcomes: list[GradeResult | Ungraded], submissions: Sequence[Path], out: Path | None, console
) -> None:
    """The last line: where the graded submissions' reports are (none: no line)."""
    graded = [o for o in outcomes if not isinstance(o, Ungraded)]
    if not graded:
        return
    one = len(submissions) == 1
    parent = out or DEFAULT_OUT
    folder = (out or DEFAULT_OUT / graded[0].submission) if one else parent / graded[0].submission
    files = ", ".join([*REPORT_FILES, *notebook_reports(folder)])  # the graded notebook too
    if one:
        line = REPORTS_ONE.format(folder=folder, files=files)
    else:
        line = REPORTS_MANY.format(out=parent, folder=folder, files=files)
    console.print(line, markup=False, soft_wrap=True)


def _import_grader_libraries() -> None:
    """Import torch here, as the pytest plugin would at its start (the graders compute with it),
    so that it loads before the bytecode cache moves where Python reads bytecode from; then
    freeze the heap: what is imported by now is never garbage, and the full collections at the
    end of pytest's run skip it (0.2 s of a single grade, benchmarks/README.md)."""
    import torch  # noqa: F401

    gc.freeze()


def _error(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return _EXIT_ERROR
