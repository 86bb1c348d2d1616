"""`autograder grade --component X` exits 0 when X's tests all pass: the components not chosen
score zero because they did not run, which is no failure (the issue: `--component notebook`
exited 1 with every notebook test passing)."""

from __future__ import annotations

from autograder.commands.grade import chosen_passed
from autograder.results import NO_TESTS_RAN, ComponentResult, GradeResult, TestResult


def grade(notebook_passes: bool, errors: tuple[str, ...] = ()) -> GradeResult:
    status = "passed" if notebook_passes else "failed"
    return GradeResult(
        submission="nadia",
        course="Transformers 101",
        tests=[TestResult("test_lookup", "nb::test_lookup", "notebook", 4.0, status=status)],
        components=[
            ComponentResult("softmax", "Softmax", 0.0, 10.0, 0, 0, problem=NO_TESTS_RAN),
            ComponentResult("notebook", "Notebook", 4.0 * notebook_passes, 4.0, notebook_passes, 1),
        ],
        score=4.0 * notebook_passes,
        max_score=14.0,
        hidden_included=True,
        seed=0,
        grader_errors=list(errors),
    )


def test_the_chosen_components_passing_is_a_pass():
    assert chosen_passed(grade(True), ["notebook"])
    assert not grade(True).all_passed  # softmax ran no test: without --component, a failure
    assert not chosen_passed(grade(True), [])


def test_a_failing_chosen_test_or_a_grader_error_is_no_pass():
    assert not chosen_passed(grade(False), ["notebook"])
    assert not chosen_passed(grade(True, ("nbgrader is not installed",)), ["notebook"])
    assert not chosen_passed(grade(True), ["notebook", "softmax"])  # softmax chosen: no test ran
