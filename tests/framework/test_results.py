"""The points rule and the Gradescope document, on the toy course's configuration."""

import dataclasses
from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.results import (
    FORBIDDEN_AT,
    NO_TESTS_RAN,
    TestResult,
    build_grade,
    capitalised,
    forbidden_uses,
)

TOY = Path(__file__).parent / "toy_course"


@pytest.fixture(scope="module")
def config():
    return load_course(TOY / "course.toml")


def run(
    component, status="passed", weight=1.0, visibility="visible", message="", name="t", output=""
):
    return TestResult(
        name=name,
        output=output,
        nodeid=f"x::{name}",
        component=component,
        weight=weight,
        status=status,
        message=message,
        visibility=visibility,
    )


def grade(config, tests, **kwargs):
    return build_grade(config, tests, submission="alice", seed=3, hidden_included=True, **kwargs)


def test_points_split_by_weight_over_the_tests_that_ran(config):
    tests = [
        run("scale", weight=1, name="a"),
        run("scale", weight=3, status="failed", message="Wrong. More.", name="b"),
        run("normalize", name="c"),
    ]
    result = grade(config, tests)
    scale, normalize = result.components
    assert [t.max_score for t in result.tests] == [2.5, 7.5, 5.0]
    assert [t.score for t in result.tests] == [2.5, 0.0, 5.0]
    assert (scale.score, scale.max_score, scale.passed, scale.total) == (2.5, 10.0, 1, 2)
    assert scale.problem == "Wrong."
    assert (normalize.score, normalize.max_score, normalize.problem) == (5.0, 5.0, "")
    assert (result.score, result.max_score) == (7.5, 15.0)
    assert not result.all_passed


def test_totals_are_exact_sums(config):
    tests = [run("scale", name=str(i)) for i in range(3)]
    tests += [run("normalize", name=str(i)) for i in range(7)]
    result = grade(config, tests)
    assert result.components[0].score == 10.0  # 3 x 10/3, not 9.999999999999998
    assert result.components[1].score == 5.0
    assert result.score == result.max_score == 15.0
    assert result.all_passed


def test_a_component_whose_tests_did_not_run_scores_zero(config):
    result = grade(config, [run("scale")])
    normalize = result.components[1]
    assert (normalize.score, normalize.max_score, normalize.total) == (0.0, 5.0, 0)
    assert normalize.problem == NO_TESTS_RAN
    assert result.max_score == 15.0
    assert not result.all_passed


def test_forbidden_call_in_a_components_own_file_zeroes_it(config):
    tests = [run("scale"), run("normalize", name="a"), run("normalize", name="b")]
    records = [("numpy.linalg.norm", "normalize.py", 7), ("numpy.linalg.norm", "normalize.py", 7)]
    result = grade(config, tests, forbidden=records)
    sentence = FORBIDDEN_AT.format(
        sentence=config.forbidden.sentence("numpy.linalg.norm"), file="toypkg/normalize.py", line=7
    )
    normalize = result.components[1]
    assert (normalize.score, normalize.passed, normalize.forbidden) == (0.0, 0, (sentence,))
    assert normalize.problem == sentence
    zeroed = [t for t in result.tests if t.component == "normalize"]
    assert all(t.score == 0 and t.status == "failed" and t.message == sentence for t in zeroed)
    assert all(t.error_kind == "forbidden" for t in zeroed)
    assert result.components[0].score == 10.0
    assert result.score == 10.0
    assert [u.component for u in result.forbidden] == ["normalize"]  # deduplicated


def test_a_failure_keeps_its_own_sentence_after_the_forbidden_one(config):
    tests = [run("normalize", status="failed", message="normalize(v) is wrong.")]
    result = grade(config, tests, forbidden=[("numpy.linalg.norm", "toypkg/normalize.py", 3)])
    assert result.tests[0].message.endswith(" normalize(v) is wrong.")
    assert result.tests[0].message.startswith("Write the norm yourself;")


def test_forbidden_call_outside_component_files_is_reported_but_zeroes_nothing(config):
    tests = [run("scale"), run("normalize")]
    result = grade(config, tests, forbidden=[("numpy.linalg.norm", "helpers.py", 2)])
    assert result.score == 15.0
    assert [(u.file, u.component) for u in result.forbidden] == [("helpers.py", "")]


def test_forbidden_call_from_a_helper_file_costs_the_component_whose_test_made_it(config):
    # The plugin adds (api, file, line, component) for a call from a file no component owns
    # made during a test of that component, next to the worker's (api, file, line).
    tests = [run("scale"), run("normalize")]
    records = [
        ("numpy.linalg.norm", "helpers.py", 2),
        ("numpy.linalg.norm", "helpers.py", 2, "normalize"),
    ]
    result = grade(config, tests, forbidden=records)
    assert (result.components[0].score, result.components[1].score) == (10.0, 0.0)
    assert [(u.file, u.line, u.component) for u in result.forbidden] == [
        ("helpers.py", 2, "normalize")
    ]
    assert result.components[1].problem.endswith("It was called in toypkg/helpers.py at line 2.")


def test_forbidden_uses_map_files_to_components(config):
    uses = forbidden_uses(config, [("a.b", "toypkg/scale.py", 4), ("a.b", "__init__.py", 1)])
    assert [(u.component, u.line) for u in uses] == [("", 1), ("scale", 4)]


def test_gradescope_document(config):
    tests = [
        run("scale", name="values"),
        run(
            "scale",
            status="failed",
            message="scale(x) is off.",
            visibility="hidden",
            name="h",
            output="hidden output",
        ),
        run(
            "normalize",
            status="failed",
            message="\x1b[31mred\x1b[0m text",
            name="n",
            output="printed by the learner",
        ),
    ]
    result = grade(config, tests, grader_errors=["x::h: KeyError: 'k'"], duration=1.23456)
    document = result.to_gradescope()
    assert set(document) == {"score", "max_score", "output", "tests", "extra_data"}
    assert (document["score"], document["max_score"]) == (5.0, 15.0)
    assert document["output"].startswith("Total: 5.00 / 15.00.")
    first, hidden, third = document["tests"]
    assert set(first) == {
        "name",
        "score",
        "max_score",
        "status",
        "output",
        "visibility",
        "tags",
        "number",
    }
    assert first == {
        "name": "Scaling: values",
        "score": 5.0,
        "max_score": 5.0,
        "status": "passed",
        "output": "",
        "visibility": "visible",
        "tags": ["scale"],
        "number": "1.1",
    }
    assert hidden["visibility"] == "after_published"  # the course's hidden_visibility
    assert hidden["output"] == "The call scale(x) is off."  # hidden tests never show learner output
    assert hidden["number"] == "1.2"
    assert third["number"] == "2.1"
    assert third["output"] == "red text\n\nYour code printed:\nprinted by the learner"
    extra = document["extra_data"]
    assert extra["submission"] == "alice"
    assert extra["seed"] == 3
    assert extra["hidden_included"] is True
    assert extra["forbidden"] == []
    assert extra["grader_errors"] == ["x::h: KeyError: 'k'"]
    assert sum(t["score"] for t in document["tests"]) == document["score"]


def test_a_named_mistake_in_any_failing_test_is_the_components_first_problem(config):
    named = (
        "Wrong shape. Known mistake in scale(x): [scale/added] You added the factor; multiply "
        "by it. Read: course notes, Scaling."
    )
    tests = [
        run("scale", status="failed", message="First failure. More.", name="a"),
        run("scale", status="failed", message=named, name="b"),
    ]
    (scale, _) = grade(config, tests).components
    assert scale.problem == "[scale/added] You added the factor; multiply by it."


def test_without_a_named_mistake_the_first_failures_first_sentence_is_the_problem(config):
    tests = [
        run("scale", status="failed", message="First failure [not an id] here. More.", name="a"),
        run("scale", status="failed", message="Second. More.", name="b"),
    ]
    (scale, _) = grade(config, tests).components
    assert scale.problem == "First failure [not an id] here."


def test_a_call_from_code_compiled_under_another_name_says_so(config):
    uses = forbidden_uses(config, [("a.b", "scale.py", 0)])
    assert [(u.component, u.line) for u in uses] == [("scale", 0)]
    assert uses[0].sentence.endswith(
        "code of toypkg/scale.py that was compiled under another file's name."
    )


def test_a_call_from_no_file_of_the_package_names_no_file():
    from autograder.runtime.worker.guard import UNKNOWN_FILE

    config = load_course(TOY / "course.toml")
    (use,) = forbidden_uses(config, [("a.b", UNKNOWN_FILE, 0, "scale")])
    assert use.component == "scale"
    assert use.sentence.endswith(
        " It was called by learner code compiled under another file's name."
    )


def test_every_failure_message_starts_with_a_capital_letter():
    assert capitalised("the gradient of W differs.") == "The gradient of W differs."
    assert capitalised("softmax(...) is not implemented yet.") == (
        "The call softmax(...) is not implemented yet."
    )
    assert capitalised("self_attention raised.") == "The call self_attention raised."
    assert capitalised("assignments/t101/add_norm.py has a syntax error at line 3: x.") == (
        "The file assignments/t101/add_norm.py has a syntax error at line 3: x."
    )
    assert (
        capitalised("softmax.py has a syntax error.") == "The file softmax.py has a syntax error."
    )
    assert capitalised("MultiHeadAttention(...) raised.") == "MultiHeadAttention(...) raised."
    assert capitalised("") == ""


def test_the_graded_commit_says_what_was_left_out_and_when_the_copy_is_stale():
    from autograder.results import LEFT_OUT_SHOWN, STALE_COPY, GradedCommit

    left = tuple((f"pkg/l{i}.py", "a symbolic link: commit the file itself") for i in range(7))
    said = GradedCommit("a" * 40, "2026-08-10T12:00:00+00:00", left_out=left, stale=True).sentence()
    assert said.startswith("Graded commit aaaaaaaaaaaa (committed 2026-08-10T12:00:00+00:00).")
    assert "Left out of your commit, so not graded: pkg/l0.py (a symbolic link: commit" in said
    assert f"pkg/l{LEFT_OUT_SHOWN - 1}.py" in said and f"pkg/l{LEFT_OUT_SHOWN}.py" not in said
    assert "; and 2 more." in said
    assert said.endswith(STALE_COPY)
    kept = GradedCommit("a" * 40, "2026-08-10T12:00:00+00:00", left_out=left[:5], left_out_more=9)
    assert kept.sentence().endswith(
        "pkg/l4.py (a symbolic link: commit the file itself); and 9 more."
    )
    plain = GradedCommit("a" * 40, "2026-08-10T12:00:00+00:00").sentence()
    assert plain == "Graded commit aaaaaaaaaaaa (committed 2026-08-10T12:00:00+00:00)."


def test_the_graded_commit_counts_the_later_commits_by_committer_time():
    """H47: 'your later commits were not graded' named neither them nor the time that counts,
    and a learner whose author date was before the deadline could not see why."""
    from autograder.results import GradedCommit

    base = ("a" * 40, "2026-08-10T12:00:00+00:00", "2026-08-15T23:59:00+05:30", True)
    two = GradedCommit(*base, later_count=2, last_time="2026-08-20T12:00:00+00:00").sentence()
    assert two.endswith(
        "the last one at or before the deadline 2026-08-15T23:59:00+05:30; your 2 later commits "
        "(by committer time, the last at 2026-08-20T12:00:00+00:00) were not graded."
    )
    one = GradedCommit(*base, later_count=1, last_time="2026-08-16T00:00:00+00:00").sentence()
    assert one.endswith(
        "your 1 later commit (by committer time, the last at 2026-08-16T00:00:00+00:00) was "
        "not graded."
    )
    older = GradedCommit(*base).sentence()  # a record of a version before the count
    assert older.endswith("; your later commits were not graded.")


def test_a_grade_cannot_be_changed_once_built(config):
    """Every report renders from one GradeResult: nothing may change it after build_grade."""
    result = grade(config, [run("scale", "failed", message="off"), run("normalize")])
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.score = 100.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.components[0].problem = ""  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.tests[0].status = "passed"  # type: ignore[misc]
    assert isinstance(result.tests, tuple) and isinstance(result.components, tuple)
    assert isinstance(result.forbidden, tuple) and isinstance(result.grader_errors, tuple)


def test_a_component_a_run_did_not_ask_for_says_so_not_that_no_test_ran(config):
    """`autograder grade . --component scale`: normalize scores zero as documented, but is
    told it was not graded, not "No test of this component ran" (as if something broke); the
    terminal names such components once, in one line."""
    from autograder.reports.terminal import SKIPPED, first_problems
    from autograder.results.points_rule import NOT_CHOSEN

    tests = [run("scale", status="failed", message="Scale is off.")]
    asked = build_grade(
        config, tests, submission="a", seed=0, hidden_included=False, chosen=("scale",)
    )
    assert [(c.name, c.problem, c.score) for c in asked.components] == [
        ("scale", "Scale is off.", 0.0),
        ("normalize", NOT_CHOSEN, 0.0),
    ]
    lines = [line.plain for line in first_problems(asked)]
    assert lines == ["Scaling: Scale is off.", SKIPPED.format(titles="Normalizing")]
    every = build_grade(config, tests, submission="a", seed=0, hidden_included=False)
    assert every.components[1].problem == NO_TESTS_RAN


def test_mistakes_a_failure_could_not_tell_apart_are_the_problem_together(config):
    both = (
        "Known mistakes in scale(x), which these inputs cannot tell apart (each gives this "
        "result): [scale/added] You added the factor; multiply. Read: course notes, Scaling. "
        "[scale/squared] You squared it. Read: course notes, Scaling."
    )
    (scale, _) = grade(config, [run("scale", status="failed", message=both, name="a")]).components
    assert scale.problem == (
        "One of two known mistakes that give this same result: [scale/added] You added the "
        "factor; multiply. [scale/squared] You squared it."
    )
