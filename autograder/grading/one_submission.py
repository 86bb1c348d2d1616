"""One submission through pytest into its report files (used by `grade`, `grade-class`, `check`).

1. resolve the submission's package folder (grader_package);
2. run pytest over the course's grader folders with a ResultCollector, its console in
   DIR/grader.log (pytest_args, pytest_console, own_grader_packages);
3. apply the points rule (results/points_rule.py), add the notebook component and the protected-file
   changes, and write DIR/results.json, DIR/summary.md and DIR/junit.xml, even when every test
   failed (write_grade).

`grade_submission` does all three in this process. A batch (batch/session.py) runs step 2
once up to collection, then forks harness children that run the collected tests and step 3 for
one learner after another.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from datetime import UTC, datetime
from pathlib import Path

import pytest

from autograder.config import CourseConfig, SubmissionError, SubmissionLink
from autograder.gradebook.late import penalised
from autograder.learner_files import find_folders
from autograder.notebook.submission import NOTEBOOK, add_notebook
from autograder.pytest_plugin import LOG_WIDTH, ResultCollector
from autograder.release.manifest import compare_manifest
from autograder.reports import junit, markdown, results_json
from autograder.results import GradedCommit, GradeResult, Ungraded

LOG_FILE = "grader.log"
REPORT_FILES = (results_json.FILE_NAME, markdown.FILE_NAME, junit.FILE_NAME, LOG_FILE)
NO_VISIBLE_TESTS = (
    "The visible tests folder {path} does not exist; check visible_tests in {course}."
)
PYTEST_FAILED = (
    "The graders could not run for {name} (pytest exit status {code}); see {log} for details."
)
NO_TESTS = "No grader tests were collected from {folders}; check the course's test folders."


def grade_submission(
    config: CourseConfig,
    submission: Path,
    out_dir: Path,
    *,
    name: str,
    visible_only: bool,
    test_timeout: float | None,
    seed: int,
    components: Sequence[str] = (),
    manifest: Path | None = None,
    plugins: Sequence[object] = (),
) -> GradeResult | Ungraded:
    """Grade one submission into out_dir under the name `name` (its repository's folder name);
    an Ungraded, with its sentence, when it cannot run. ``components``: run only their tests
    (the others score zero with "no tests ran"); empty: all. ``plugins``: more pytest plugins
    for the run (the terminal's progress line)."""
    clear_reports(out_dir)
    package_dir = grader_package(config, submission, name)
    if isinstance(package_dir, Ungraded):
        return package_dir
    folders = grader_folders(config, visible_only)
    if isinstance(folders, Ungraded):
        return Ungraded(name, folders.reason)
    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / LOG_FILE
    args = pytest_args(
        config,
        folders,
        submission=package_dir,
        seed=seed,
        test_timeout=test_timeout,
        components=components,
        hide=[out_dir],
    )
    collector = ResultCollector()
    interrupted = _Interrupted()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as stream, pytest_console(stream):
        with own_grader_packages(folders, config.root):
            code = pytest.main(args, plugins=[collector, interrupted, *plugins])
    if interrupted.hit:  # Ctrl-C: pytest swallowed it; the command reports an interruption
        raise KeyboardInterrupt
    notebook_only = bool(components) and set(components) <= {NOTEBOOK}
    if code == pytest.ExitCode.NO_TESTS_COLLECTED and not notebook_only:
        return Ungraded(name, NO_TESTS.format(folders=", ".join(map(str, folders))))
    finished = (
        pytest.ExitCode.OK,
        pytest.ExitCode.TESTS_FAILED,
        pytest.ExitCode.NO_TESTS_COLLECTED,
    )
    if code not in finished or collector.errors:
        reason = collector.errors[0] if collector.errors else None
        return Ungraded(name, reason or PYTEST_FAILED.format(name=name, code=int(code), log=log))
    return write_grade(
        config,
        collector,
        submission=submission,
        name=name,
        out_dir=out_dir,
        seed=seed,
        hidden_included=len(folders) > 1,
        duration=time.monotonic() - start,
        started_at=started_at,
        components=components,
        manifest=manifest,
        hide=[out_dir],
        test_timeout=test_timeout,
    )


class _Interrupted:
    """pytest plugin: whether the run was stopped by Ctrl-C (pytest then returns the exit
    status of a collection error, INTERRUPTED, and the grade would read as a grader fault)."""

    hit = False

    def pytest_keyboard_interrupt(self, excinfo) -> None:
        # pytest stops on collection errors with a subclass of KeyboardInterrupt too
        self.hit = excinfo.type is KeyboardInterrupt


def clear_reports(out_dir: Path) -> None:
    """Never leave last run's grade beside this run's failure."""
    for stale in REPORT_FILES:
        (out_dir / stale).unlink(missing_ok=True)


def grader_package(config: CourseConfig, submission: Path, name: str) -> Path | Ungraded:
    """The submission's package folder (course.toml's place, else the one folder of that name
    within a few levels), or an Ungraded saying why there is none."""
    try:
        return config.package_dir_for(submission)
    except SubmissionLink as error:  # never another folder instead of the one that is a link
        return Ungraded(name, str(error))
    except SubmissionError as error:
        package_dir = find_package(submission, config.package)
        return Ungraded(name, str(error)) if package_dir is None else package_dir


def grader_folders(config: CourseConfig, visible_only: bool) -> list[Path] | Ungraded:
    """The visible tests folder, then the hidden one (unless visible_only or absent)."""
    if not config.visible_tests.is_dir():
        reason = NO_VISIBLE_TESTS.format(path=config.visible_tests, course=config.path)
        return Ungraded("", reason)
    folders = [config.visible_tests]
    hidden = config.hidden_tests
    if not visible_only and hidden is not None and hidden.is_dir():
        folders.append(hidden)
    return folders


def pytest_args(
    config: CourseConfig,
    folders: Sequence[Path],
    *,
    submission: Path,
    seed: int,
    test_timeout: float | None,
    components: Sequence[str] = (),
    hide: Sequence[Path] = (),
) -> list[str]:
    """pytest's command line for grading `submission` (its package folder). ``hide``: folders
    learner code must not see besides the course (where reports and caches are written)."""
    args = [
        *map(str, folders),
        f"--course={config.path}",
        f"--submission={submission}",
        f"--seed={seed}",
        f"--rootdir={config.root}",
        "--strict-markers",
        # Only pytest's own plugins and ours: a plugin that happens to be installed beside the
        # grader (pytest-randomly, pytest-xdist, ...) must not change a grade or slow it down.
        "--disable-plugin-autoload",
        "-p",
        "autograder.pytest_plugin",
        "-p",
        "no:cacheprovider",
        # Learner code logs in the worker, never here; pytest's log capture would add and
        # remove its handlers around every test phase (a tenth of a warm learner's time).
        "-p",
        "no:logging",
        "--color=no",
        # Very verbose: the short summary (-rfE) shows each failure's whole message. At -v it
        # cut them to the terminal's width (to nothing at 80 columns) except on a CI machine,
        # so a learner's grader.log differed between their CI and their own machine.
        "-vv",
        "-rfE",
        f"--console-width={LOG_WIDTH}",  # the same log on every machine
    ]
    if test_timeout is not None:
        args.append(f"--test-timeout={test_timeout}")
    modules = [c for c in components if c != NOTEBOOK]  # the notebook is no pytest marker
    if modules:
        args += ["-m", " or ".join(modules)]
    elif components:  # the notebook alone: every module test deselected
        args += ["-m", "not (" + " or ".join(c.name for c in config.components) + ")"]
    args += [f"--hide-path={path}" for path in hide]
    return args


@contextmanager
def pytest_console(stream) -> Iterator[None]:
    """pytest's console output (and anything else printed meanwhile) into `stream`."""
    with redirect_stdout(stream), redirect_stderr(stream):
        yield


def write_grade(
    config: CourseConfig,
    collector: ResultCollector,
    *,
    submission: Path,
    name: str,
    out_dir: Path,
    seed: int,
    hidden_included: bool,
    duration: float,
    started_at: str,
    components: Sequence[str] = (),
    manifest: Path | None = None,
    graded: GradedCommit | None = None,
    hide: Sequence[Path] = (),
    test_timeout: float | None = None,
) -> GradeResult:
    """The points rule over what pytest saw, the notebook component and the protected-file
    changes; then results.json, summary.md and junit.xml in out_dir. ``graded``: the commit a
    batch graded, which the reports name. ``hide``: folders the notebook's kernel must not
    see, as pytest_args' for module code (the reports' folder; a batch's DIR and scratch)."""
    result = collector.grade_result(
        config,
        submission=name,
        seed=seed,
        hidden_included=hidden_included,
        duration=duration,
        started_at=started_at,
    )
    if not components or NOTEBOOK in components:  # docs/notebook.md
        result = add_notebook(config, submission, result, out_dir, hide=hide)
    if manifest is not None:
        root = config.submission_root(submission)
        result.protected_changes = [
            {**vars(c), "sentence": c.sentence} for c in compare_manifest(manifest, root)
        ]
    result.graded = graded
    result = penalised(result)  # the late policy's penalty, when the commit was late
    result.test_timeout = test_timeout or config.limits.test_timeout  # --timeout, else the course's
    results_json.write_results_json(result, out_dir / results_json.FILE_NAME)
    markdown.write_summary(result, out_dir / markdown.FILE_NAME)
    junit.write_junit(result, out_dir / junit.FILE_NAME)
    return result


@contextmanager
def own_grader_packages(folders: list[Path], root: Path) -> Iterator[None]:
    """Run pytest with this course's grader packages, not another course's that this process
    imported earlier under the same top-level name (both may call theirs `tests`): pytest would
    otherwise look for this course's grader files inside the other package and fail to find
    them. The other course's modules are put back afterwards."""
    tops = set()
    for folder in folders:
        top = Path(folder).resolve()
        while (top.parent / "__init__.py").is_file():
            top = top.parent
        if (top / "__init__.py").is_file():
            tops.add(top.name)
    root = Path(root).resolve()

    def ours(name: str) -> bool:
        file = getattr(sys.modules[name], "__file__", None)
        return file is not None and Path(file).resolve().is_relative_to(root)

    names = [n for n in sys.modules if n.split(".", 1)[0] in tops]
    if all(map(ours, names)):
        yield
        return
    before = {name: sys.modules[name] for name in names}
    for name in names:
        if not ours(name):
            del sys.modules[name]
    try:
        yield
    finally:
        for name in [n for n in sys.modules if n.split(".", 1)[0] in tops]:
            del sys.modules[name]
        sys.modules.update(before)


def find_package(submission: Path, package: str, depth: int = 3) -> Path | None:
    """The one folder named `package` with an __init__.py within `depth` levels of a submission
    laid out differently (e.g. t101/ at the repository root); None if there is none or several.
    No link is followed on the way (learner_files.find_folders)."""
    if not submission.is_dir():
        return None
    found = find_folders(submission.resolve(), package, depth)
    return found[0] if len(found) == 1 else None
