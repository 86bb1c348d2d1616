"""Several submissions graded in one pytest session (grading/in_process.py, one_submission.py).

The graders are collected once; each submission's run then starts from what collection left.
A run that leaves something of itself in the session (pytest's captured output, which pytest
keeps on the test for every later run of it) ends the session: the next submission is graded
in a fresh one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.grading.graders_session import GradersSession, pytest_args, run_graders
from autograder.grading.in_process import grade_in_process
from autograder.grading.one_submission import Options, Submission, grade_in_session
from autograder.grading.package_dir import grader_folders
from tests.framework.mini_course import make_course

GRADERS = {
    "graders/visible/test_quiet.py": """
        import pytest

        @pytest.mark.alpha
        def test_fails_quietly():
            assert 1 == 2, "One is not two."

        @pytest.mark.beta
        def test_passes():
            pass
    """,
}
NOISY = {
    "graders/visible/test_noisy.py": """
        import pytest

        @pytest.mark.alpha
        def test_prints_then_fails():
            print("said by the grader")
            assert 1 == 2, "One is not two."
    """,
}


def _setup(folder: Path, graders: dict[str, str]) -> tuple[Options, list[Path], list[Submission]]:
    """The mini course with ``graders``, named after the test (pytest imports a grader file
    by its name, once per process), and three submissions of its package."""
    tag = folder.name.replace("-", "_")
    graders = {name.replace(".py", f"_{tag}.py"): text for name, text in graders.items()}
    config = load_course(make_course(folder, graders))
    folders = grader_folders(config, visible_only=True)
    options = Options(config, seed=0, test_timeout=None, hidden_included=False)
    submissions = [
        Submission(folder / "minipkg", name, folder / "out" / name, hide=(folder / "out",))
        for name in ("first", "second", "third")
    ]
    return options, folders, submissions


def test_each_submission_of_a_session_gets_the_reports_of_one_graded_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options, folders, submissions = _setup(tmp_path, GRADERS)
    graded = []
    grade_in_process(options, folders, submissions, graded=lambda s, o: graded.append(o))
    assert [o.submission for o in graded] == ["first", "second", "third"]
    assert [o.score for o in graded] == [4.0, 4.0, 4.0]  # beta's 4 points, alpha's 6 lost
    logs = [(tmp_path / "out" / name / "grader.log").read_text() for name in ("first", "third")]
    for log in logs:
        assert log.count("collected 2 items") == 1
        assert log.count("::test_fails_quietly FAILED") == 1
        assert "1 failed, 1 passed" in log.splitlines()[-1]
    # the same but for the header's submission line and the duration on the last line
    assert logs[0].splitlines()[3:-1] == logs[1].splitlines()[3:-1]


def test_a_run_that_leaves_captured_output_is_followed_by_a_fresh_session(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options, folders, submissions = _setup(tmp_path, NOISY)
    reusable = []

    def grade_all(session: pytest.Session) -> None:
        for submission in submissions[:2]:
            done = grade_in_session(session, options, submission, plugin.events)
            reusable.append(done.reusable)

    plugin = GradersSession(grade_all)
    args = pytest_args(
        options.config, folders, submission=tmp_path / "minipkg", seed=0, test_timeout=None
    )
    run_graders(options.config, folders, args, plugin, console=open(tmp_path / "session.log", "w"))
    assert reusable == [False, False]  # each run kept the grader's print on its test
    graded = []
    grade_in_process(options, folders, submissions, graded=lambda s, o: graded.append(o))
    for name in ("first", "second", "third"):
        log = (tmp_path / "out" / name / "grader.log").read_text()
        assert log.count("said by the grader") == 1, name  # never the run before's too
    assert [o.score for o in graded] == [0.0, 0.0, 0.0]


def test_a_first_failure_reaches_pytest_as_its_sentence_without_a_traceback(tmp_path, monkeypatch):
    """pytest formats a failure's traceback (reading the source of every frame) before the
    plugin would replace it with the learner's sentence: the plugin raises the sentence
    instead, with pytrace=False, so pytest has nothing to format."""
    monkeypatch.chdir(tmp_path)
    options, folders, submissions = _setup(tmp_path, GRADERS)
    seen = []

    class Peek:
        @pytest.hookimpl(wrapper=True, tryfirst=True)
        def pytest_runtest_makereport(self, item, call):
            if call.excinfo is not None:
                seen.append((type(call.excinfo.value), call.excinfo.value.pytrace))
            return (yield)

    graded = []
    grade_in_process(
        options,
        folders,
        submissions[:1],
        graded=lambda s, o: graded.append(o),
        status=lambda s: _Yield(Peek()),
    )
    assert seen == [(pytest.fail.Exception, False)]
    (failed,) = [t for t in graded[0].tests if not t.passed]
    assert failed.message == "One is not two."


class _Yield:
    """A context manager giving ``value`` (a per-submission plugin, as the terminal's status)."""

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        return self.value

    def __exit__(self, *exc):
        return False
