"""`autograder grade`: grade submissions and write their reports.

For each submission, in order:
1. resolve its package folder (the repository, or the package folder itself);
2. run pytest in this process over the course's visible tests (and hidden ones unless
   visible-only or absent) with a ResultCollector; pytest's console goes to DIR/grader.log;
3. apply the points rule (results.py) and write DIR/results.json, DIR/summary.md and
   DIR/junit.xml, even when every test failed;
4. print its table; with several submissions, a class overview at the end.

The course file comes from --course or the nearest course.toml above the current folder, never
from inside a submission: a learner cannot change their own points.

Exit status: 0 every test of every submission passed; 1 some test failed; 2 the grader could not
run for at least one submission (missing path, bad course file, graders failing to collect),
with one sentence per problem on stderr.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from autograder.commands.options import OptionError, check_timeout
from autograder.config import (
    CourseConfig,
    CourseConfigError,
    SubmissionError,
    find_course_file,
    load_course,
)
from autograder.github.pass_rule import PassRule, PassRuleError
from autograder.github.publish import GITHUB_ONE, GithubRun
from autograder.notebook.submission import NOTEBOOK, add_notebook
from autograder.pytest_plugin import ResultCollector
from autograder.release.manifest import ManifestError, compare_manifest, read_manifest
from autograder.reports import junit, markdown, results_json, terminal
from autograder.reports.terminal import Ungraded
from autograder.results import GradeResult, build_grade_result

LOG_FILE = "grader.log"
DEFAULT_OUT = Path("grades")
REPORT_FILES = (results_json.FILE_NAME, markdown.FILE_NAME, junit.FILE_NAME, LOG_FILE)

NO_SUBMISSIONS = "Name at least one submission folder to grade."
SAME_NAME = (
    "Two submissions are both named {name} ({first} and {second}); their reports would "
    "overwrite each other, so rename one or grade them separately."
)
NO_VISIBLE_TESTS = (
    "The visible tests folder {path} does not exist; check visible_tests in {course}."
)
PYTEST_FAILED = (
    "The graders could not run for {name} (pytest exit status {code}); see {log} for details."
)
NO_TESTS = "No grader tests were collected from {folders}; check the course's test folders."
NOT_GRADED = "{name} was not graded: {reason}"
UNKNOWN_COMPONENT = "--component {name} is not a component of {course}; choose from: {names}."

_EXIT_OK, _EXIT_FAILED, _EXIT_ERROR = 0, 1, 2


@contextmanager
def _own_grader_packages(folders: list[Path], root: Path) -> Iterator[None]:
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


def main(
    *,
    submissions: list[Path],
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
    """Grade each submission; return the exit status described in the module docstring.
    With github (one submission): workflow commands stay off while grading, then annotations,
    job summary, outputs and comment.md are published and the exit status follows pass_rule
    (None: course.toml's [ci] pass_rule).
    With manifest: protected files that differ from it go into results.json."""
    try:
        config = load_course(course if course else find_course_file(Path.cwd()))
    except CourseConfigError as error:
        return _error(str(error))
    if not submissions:
        return _error(NO_SUBMISSIONS)
    try:
        check_timeout(test_timeout)
    except OptionError as error:
        return _error(str(error))
    names = [c.name for c in config.components]
    for component in components:
        if component not in names:
            return _error(
                UNKNOWN_COMPONENT.format(name=component, course=config.path, names=", ".join(names))
            )
    try:
        if manifest is not None:
            read_manifest(manifest)
        rule = config.ci.pass_rule if pass_rule is None else pass_rule
        run = GithubRun(PassRule.parse(rule)) if github else None
    except (ManifestError, PassRuleError) as error:
        return _error(str(error))
    if run is not None and len(submissions) != 1:
        return _error(GITHUB_ONE.format(count=len(submissions)))
    roots = [config.submission_root(Path(s)) for s in submissions]
    seen: dict[str, Path] = {}
    for given, root in zip(submissions, roots, strict=True):
        if root.name in seen:
            return _error(SAME_NAME.format(name=root.name, first=seen[root.name], second=given))
        seen[root.name] = Path(given)

    console = Console(highlight=False)
    outcomes: list[GradeResult | Ungraded] = []
    if run is not None:
        run.start()
    for given, root in zip(submissions, roots, strict=True):
        if len(submissions) == 1:
            folder = out or DEFAULT_OUT / root.name
        else:
            folder = (out or DEFAULT_OUT) / root.name
        outcome = grade_submission(
            config,
            Path(given),
            folder,
            name=root.name,
            visible_only=visible_only,
            test_timeout=test_timeout,
            seed=seed,
            components=components,
            manifest=manifest,
        )
        outcomes.append(outcome)
        if isinstance(outcome, Ungraded):
            print(
                NOT_GRADED.format(name=outcome.submission, reason=outcome.reason), file=sys.stderr
            )
        elif not quiet:
            terminal.print_submission(outcome, console)
    if len(outcomes) > 1 and not quiet:
        terminal.print_class(outcomes, console)
    if run is not None:
        return run.finish(config, outcomes[0], submission=Path(submissions[0]), out_dir=folder)
    if any(isinstance(o, Ungraded) for o in outcomes):
        return _EXIT_ERROR
    return _EXIT_OK if all(o.all_passed for o in outcomes) else _EXIT_FAILED


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
) -> GradeResult | Ungraded:
    """Grade one submission into out_dir under the name `name` (its repository's folder name);
    an Ungraded, with its sentence, when it cannot run. ``components``: run only their tests
    (the others score zero with "no tests ran"); empty: all."""
    for stale in REPORT_FILES:  # never leave last run's grade beside this run's failure
        (out_dir / stale).unlink(missing_ok=True)
    try:
        package_dir = config.package_dir_for(submission)
    except SubmissionError as error:
        package_dir = find_package(submission, config.package)
        if package_dir is None:
            return Ungraded(name, str(error))
    if not config.visible_tests.is_dir():
        return Ungraded(
            name, NO_VISIBLE_TESTS.format(path=config.visible_tests, course=config.path)
        )
    folders = [config.visible_tests]
    hidden = config.hidden_tests
    if not visible_only and hidden is not None and hidden.is_dir():
        folders.append(hidden)

    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / LOG_FILE
    args = [
        *map(str, folders),
        f"--course={config.path}",
        f"--submission={package_dir}",
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
        "-v",
        "-rfE",
    ]
    if test_timeout is not None:
        args.append(f"--test-timeout={test_timeout}")
    if components:
        args += ["-m", " or ".join(components)]
    collector = ResultCollector()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    start = time.monotonic()
    with (
        log.open("w", encoding="utf-8") as stream,
        redirect_stdout(stream),
        redirect_stderr(stream),
        _own_grader_packages(folders, config.root),
    ):
        code = pytest.main(args, plugins=[collector])
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        return Ungraded(name, NO_TESTS.format(folders=", ".join(map(str, folders))))
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or collector.errors:
        reason = collector.errors[0] if collector.errors else None
        return Ungraded(name, reason or PYTEST_FAILED.format(name=name, code=int(code), log=log))

    result = build_grade_result(
        config,
        collector.results,
        submission=name,
        seed=seed,
        hidden_included=len(folders) > 1,
        forbidden=collector.forbidden,
        grader_errors=collector.grader_errors,
        duration=time.monotonic() - start,
        started_at=started_at,
    )
    if not components or NOTEBOOK in components:  # docs/notebook.md
        result = add_notebook(config, submission, result, out_dir)
    if manifest is not None:
        root = config.submission_root(submission)
        result.protected_changes = [
            {**vars(c), "sentence": c.sentence} for c in compare_manifest(manifest, root)
        ]
    results_json.write_results_json(result, out_dir / results_json.FILE_NAME)
    markdown.write_summary(result, out_dir / markdown.FILE_NAME)
    junit.write_junit(result, out_dir / junit.FILE_NAME)
    return result


def find_package(submission: Path, package: str, depth: int = 3) -> Path | None:
    """The one folder named `package` with an __init__.py within `depth` levels of a submission
    laid out differently (e.g. t101/ at the repository root); None if there is none or several."""
    if not submission.is_dir():
        return None
    found = []
    for level in range(depth):
        pattern = "/".join(["*"] * level + [package, "__init__.py"])
        found += [p.parent for p in submission.glob(pattern) if ".git" not in p.parts]
    return found[0].resolve() if len(found) == 1 else None


def _error(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return _EXIT_ERROR
