"""The pytest plugin's results and sentences: one run of the mini course's graders, in this
process, read by every test here (the mini course never calls learner code, so it stays fast)."""

import pytest

from autograder import pytest_plugin as plugin
from autograder.config import load_course
from autograder.results import build_grade
from tests.framework.mini_course import by_name, make_course, run


@pytest.fixture(scope="module")
def shared_mini(tmp_path_factory):
    """One course and one run of all its graders, shared by the tests that only read it."""
    folder = tmp_path_factory.mktemp("mini")
    make_course(folder)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        yield folder, run(folder, "graders", "--seed=5")


@pytest.fixture
def mini_run(shared_mini):
    return shared_mini[1]


def test_results_are_collected_with_component_weight_and_visibility(mini_run):
    code, collector, _ = mini_run
    assert code == pytest.ExitCode.TESTS_FAILED
    results = by_name(collector)
    assert "test_skipped" not in results  # a skipped test did not run and carries no points
    assert results["test_passes"].status == "passed"
    assert (results["test_passes"].component, results["test_passes"].weight) == ("alpha", 2.0)
    assert results["test_passes"].name == "Alpha passes"  # the docstring's first line
    assert results["test_seeded[1]"].name == "test_seeded [1]"
    assert results["test_seeded[1]"].status == results["test_seeded[2]"].status == "passed"
    assert results["test_hidden_flag"].visibility == "hidden"
    assert results["test_hidden_flag"].status == "passed"
    assert results["test_sentence"].visibility == "visible"
    assert all(r.duration >= 0 for r in collector.results)


def test_a_failure_shows_its_sentence_and_no_traceback(shared_mini):
    """The sentence pytest shows is the one the grade tells, capitalised alike."""
    folder, (_, collector, output) = shared_mini
    message = by_name(collector)["test_sentence"].message
    assert message.startswith("The call f(x) differs from the expected values: 1 of 2 entries")
    assert f"::test_sentence - {message}" in output  # the -rf short summary line
    config = load_course(folder / "course.toml")
    grade = build_grade(config, collector.results, submission="m", seed=5, hidden_included=True)
    assert [
        t.message
        for t in grade.tests
        if t.nodeid == "graders/visible/test_mini_visible.py::test_sentence"
    ] == [message]
    assert "Traceback" not in output
    assert "expect_close([1.0, 2.0]" not in output  # no grader source in the report


def test_an_unexpected_exception_is_an_internal_grader_error(mini_run):
    _, collector, output = mini_run
    result = by_name(collector)["test_grader_bug"]
    assert result.error_kind == "grader_error"
    assert result.message == plugin.GRADER_ERROR.format(
        test="test_grader_bug", type="KeyError", message="'missing key'"
    )
    assert sorted(collector.grader_errors) == [
        "graders/hidden/test_mini_hidden.py::test_hidden_grader_bug: KeyError: 0.123456",
        "graders/visible/test_mini_visible.py::test_grader_bug: KeyError: 'missing key'",
    ]
    assert "this is not your fault" in output
    hidden = by_name(collector)["test_hidden_grader_bug"]
    assert hidden.message == plugin.GRADER_ERROR.format(
        test="test_hidden_grader_bug", type="KeyError", message=plugin.GRADER_ERROR_HIDDEN_DETAIL
    )


def test_plain_asserts_show_their_first_sentence_only_when_visible(mini_run):
    _, collector, _ = mini_run
    results = by_name(collector)
    assert results["test_plain_assert"].message == "The two must agree."
    assert results["test_hidden_assert"].message == plugin.PLAIN_ASSERT_HIDDEN.format(
        test="test_hidden_assert"
    )


def test_hidden_failures_show_no_values(mini_run):
    _, collector, _ = mini_run
    message = by_name(collector)["test_hidden_values"].message
    assert "entries differ" in message
    for value in ("1.25", "2.5", "index", "got"):
        assert value not in message


def test_header_and_points_summary(shared_mini):
    folder, (_, _, output) = shared_mini
    folder = folder.resolve()
    header = plugin.HEADER.format(
        course="Mini", path=folder / "course.toml", submission=folder, seed=5
    )
    assert header in output
    assert "autograder points" in output
    assert "Alpha: " in output and "Beta: " in output


def test_every_visible_test_runs_before_every_hidden_one(mini_run):
    """A hidden input kept in memory by learner code must not reach a later visible test's
    message (the mini course's hidden file sorts before its visible one)."""
    _, collector, _ = mini_run
    order = [r.visibility for r in collector.results]
    assert "hidden" in order and "visible" in order
    assert order == sorted(order, key=lambda visibility: visibility == "hidden")


def test_a_plain_runs_points_are_the_grade_of_its_results(shared_mini):
    """grader.log's points (pytest_terminal_summary) come from the one grade builder applied to
    what the run's tests found: the summary's lines are the grade's own components."""
    folder, (_, collector, output) = shared_mini
    config = load_course(folder / "course.toml")
    grade = build_grade(
        config,
        collector.results,
        submission="mini",
        seed=5,
        hidden_included=True,
        forbidden=collector.forbidden,
        grader_errors=collector.grader_errors,
    )
    summary = output.split("autograder points", 1)[1]
    for c in grade.components:
        line = f"{c.title}: {c.score:.2f} / {c.max_score:.2f} ({c.passed}/{c.total})"
        assert line in summary
