"""`autograder check` on the toy course: the table's verdicts, the score lines, --keep and the
exit status. The toy course's own mutants cover caught-and-named (normalize/no-sqrt), caught but
named in other words (scale/adds-factor) and missed (scale/accepts-infinity); its variants one
that keeps full marks (scale/np-multiply) and one that calls a forbidden API
(normalize/linalg-norm). Failures that need no grading are judged from made-up outcomes."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace

import pytest
from rich.console import Console

from autograder.commands import check
from autograder.config import load_course
from autograder.mistakes import verdicts
from autograder.mistakes.cases import NO_MUTANT, Case, plan_cases
from autograder.mistakes.mutants import Edit
from autograder.mistakes.verdicts import Outcome, judge
from tests.framework.check_runs import TOY, copied_toy, run_main

ADDS_FACTOR = "[scale/adds-factor] Your scale adds the factor to every entry."


def table_rows(output: str) -> dict[str, list[str]]:
    """Table lines by case label (first cell), split on runs of two or more spaces."""
    rows = {}
    for line in output.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 3:
            rows[cells[0]] = cells[1:]
    return rows


@pytest.fixture(scope="module")
def toy_check(tmp_path_factory):
    keep = tmp_path_factory.mktemp("check") / "kept"
    code, output, errors = run_main(keep=keep)
    return code, output, errors, keep


@pytest.fixture(scope="module")
def toy():
    return load_course(TOY / "course.toml")


# The whole toy course, graded ---------------------------------------------------------------


def test_toy_check_table_has_one_verdict_per_case(toy_check):
    code, output, errors, _ = toy_check
    assert code == 1, output + errors
    rows = table_rows(output)
    assert rows["reference"] == ["full", "15/15", "ok"]
    assert rows["stubs"] == ["zero", "0/15", "ok"]
    # Expected, own component, course total, named, verdict (the references and the stubs
    # have no own component: that cell is empty).
    assert rows["adds-factor"] == ["< full", "5/10", "10/15", "no", "not named"]
    assert rows["accepts-infinity"] == ["< full", "10/10", "15/15", "-", "missed"]
    assert rows["no-sqrt"][0] == "< full"
    assert rows["no-sqrt"][-2:] == ["yes", "ok"]
    assert rows["np-multiply"] == ["full", "10/10", "15/15", "ok"]
    assert rows["linalg-norm"] == ["full", "0/5", "10/15", "loses points"]


def test_toy_check_scores_and_explains_each_failure(toy_check):
    _, output, _, _ = toy_check
    lines = output.splitlines()
    assert "Mutation score: 1/3 caught and named (33%)" in lines
    assert "Variants: 1/2 keep full marks" in lines
    text = " ".join(output.split())
    assert (
        "mutant scale/adds-factor: The graders catch this mistake but no failing test of scale "
        "names [scale/adds-factor]; pass mistake('scale/adds-factor') to the check that fails."
    ) in text
    assert (
        "mutant scale/accepts-infinity: The graders miss this mistake: scale keeps full marks "
        "with it planted; add a test that fails on it."
    ) in text
    assert (
        "variant normalize/linalg-norm: It should keep full marks but loses points in normalize "
        '(0.00 / 5.00). First failure: "Normalizing: normalize(v) has length 1 and points '
        'along v": Write the norm yourself; numpy.linalg.norm does it for you, so this '
        "component scores zero."
    ) in text
    assert "mutant normalize/no-sqrt:" not in text  # it passed: no paragraph


def test_toy_check_fits_80_columns(toy_check):
    _, output, _, _ = toy_check
    assert max(len(line) for line in output.splitlines()) <= 80


def test_keep_holds_each_case_repository_and_reports(toy_check, toy):
    _, output, _, keep = toy_check
    assert f"Each case's repository and reports are kept in {keep}." in " ".join(output.split())
    planted = (keep / "submissions/mutant.normalize.no-sqrt/toypkg/normalize.py").read_text()
    assert "length = float(np.sum(np.square(v)))" in planted
    stubs = keep / "submissions/stubs/toypkg/scale.py"
    assert stubs.read_bytes() == (TOY / "toypkg/scale.py").read_bytes()
    results = keep / "results/mutant.normalize.no-sqrt"
    assert (results / "summary.md").is_file()
    document = json.loads((results / "results.json").read_text())
    named = [t for t in document["tests"] if "[normalize/no-sqrt]" in t["output"]]
    assert named and all(t["status"] == "failed" for t in named)
    assert document["score"] < document["max_score"]


# A course that passes -----------------------------------------------------------------------


def test_a_course_whose_graders_catch_every_mutant_exits_0(tmp_path):
    course = copied_toy(tmp_path)
    (course / "solution/variants/normalize.toml").unlink()
    code, output, errors = run_main(
        course=course / "course.toml", components=["normalize"], quiet=False
    )
    assert code == 0, output + errors
    assert "checking: 3 of 3 cases done (errors 0)" in errors  # cases, not learners
    rows = table_rows(output)
    assert set(rows) >= {"reference", "stubs", "no-sqrt"}
    assert "adds-factor" not in rows  # --component normalize
    assert "Mutation score: 1/1 caught and named (100%)" in output.splitlines()
    assert "Variants: 0/0 keep full marks" in output.splitlines()
    assert re.search(r"^3 cases graded in \d+ s with 2 jobs\.$", output, re.MULTILINE)


# Failures found before grading --------------------------------------------------------------


def test_mutant_that_does_not_apply_and_mistake_without_mutant(toy, tmp_path):
    plan = plan_cases(toy)
    gone = Case(
        key="mutant.normalize.no-sqrt",
        kind="mutant",
        label="normalize/no-sqrt",
        component="normalize",
        mistakes=("normalize/no-sqrt",),
        source=toy.course.reference_dir,
        edits=(Edit(find="not in the reference", replace="x", file="normalize.py"),),
    )
    uncovered = Case(
        key="mistake.scale.accepts-infinity",
        kind="uncovered",
        label="scale/accepts-infinity",
        component="scale",
        mistakes=("scale/accepts-infinity",),
    )
    plan = replace(plan, cases=(gone, uncovered))
    rows = check.run_check(plan, tmp_path, jobs=1, test_timeout=None, err=Console(quiet=True))
    assert [(r.verdict, r.component, r.total) for r in rows] == [
        ("not applied", "-", "-"),
        ("no mutant", "-", "-"),
    ]
    assert rows[0].reasons == [
        "The mutant normalize/no-sqrt cannot be applied: its text to find occurs 0 times in "
        "normalize.py; expected exactly once. Update it after changing the reference."
    ]
    assert rows[1].reasons == [
        NO_MUTANT.format(id="scale/accepts-infinity", folder=toy.course.mutants)
    ]
    assert rows[1].reasons[0] == (
        "The catalogued mistake scale/accepts-infinity has no mutant, so nothing proves the "
        f"graders catch it; add one to {toy.course.mutants}."
    )
    assert check.summary_lines(rows) == [
        "Mutation score: 0/1 caught and named (0%)",
        "Variants: 0/0 keep full marks",
        "Catalogued mistakes without a mutant: 1",
    ]
    printed = io.StringIO()
    check.print_report(plan, rows, Console(file=printed, width=80, highlight=False))
    text = " ".join(printed.getvalue().split())
    assert "no-sqrt < full - - - not applied" in text
    assert "accepts-infinity a mutant - - no mutant" in text
    assert "mutant normalize/no-sqrt: The mutant normalize/no-sqrt cannot be applied:" in text
    assert "mistake scale/accepts-infinity: The catalogued mistake" in text
    wide = io.StringIO()
    check.print_report(plan, rows, Console(file=wide, width=120, highlight=False))
    header = " ".join(wide.getvalue().split())
    assert "Case Expected Own component Course total Named Verdict" in header


def test_a_catalogued_mistake_without_mutant_becomes_a_case(toy, tmp_path):
    course = copied_toy(tmp_path)
    (course / "solution/mutants/scale.toml").unlink()
    plan = plan_cases(load_course(course / "course.toml"))
    kinds = [(c.kind, c.label) for c in plan.cases]
    assert kinds == [
        ("reference", "reference"),
        ("stubs", "stubs"),
        ("uncovered", "scale/adds-factor"),
        ("uncovered", "scale/accepts-infinity"),
        ("mutant", "normalize/no-sqrt"),
        ("variant", "scale/np-multiply"),
        ("variant", "normalize/linalg-norm"),
    ]


# Judging made-up outcomes -------------------------------------------------------------------


def _mutant(plan, label: str) -> Case:
    return next(c for c in plan.cases if c.label == label)


def test_grading_error_and_grader_errors_fail_the_case(toy):
    plan = plan_cases(toy)
    reference = plan.cases[0]
    row = judge(plan, reference, Outcome(error="The graders could not run for reference."))
    assert (row.verdict, row.component, row.total) == ("error", "-", "-")
    assert row.reasons == ["It could not be graded: The graders could not run for reference."]
    full = Outcome(scores={"scale": 10.0, "normalize": 5.0}, grader_errors=["KeyError: 'x'. More"])
    row = judge(plan, reference, full)
    assert row.verdict == "error"
    assert row.reasons == ["The graders themselves failed while grading it: KeyError: 'x'."]


def test_stubs_that_score_name_the_passing_tests(toy):
    plan = plan_cases(toy)
    outcome = Outcome(
        scores={"scale": 0.0, "normalize": 2.5},
        passing={"normalize": ["Normalizing: normalize(zeros) raises ValueError"]},
    )
    row = judge(plan, plan.cases[1], outcome)
    assert (row.verdict, row.component, row.total) == ("not zero", "", "2.5/15")
    assert row.reasons == [
        "The stubs should score zero but score points in normalize (2.50 / 5.00): "
        "Normalizing: normalize(zeros) raises ValueError pass without any implementation."
    ]


def test_a_mutant_costing_points_in_another_component_leaks(toy):
    plan = plan_cases(toy)
    outcome = Outcome(
        scores={"scale": 5.0, "normalize": 4.0},
        failures={"scale": [("test", f"Known mistake in scale(x, 3.0): {ADDS_FACTOR}")]},
    )
    row = judge(plan, _mutant(plan, "scale/adds-factor"), outcome)
    assert (row.verdict, row.named, row.component, row.total) == ("leaks", True, "5/10", "9/15")
    assert not row.ok and row.caught_and_named
    assert row.reasons == [
        "It also costs points in normalize (4.00 / 5.00); only the mistake's own component "
        "should lose points, so that a learner does not pay twice for one mistake."
    ]
    # When the other component builds on the mistake's (depends_on), the sentence says how to
    # grade it on its own.
    built_on = replace(plan, dependents={"scale": frozenset({"normalize"})})
    row = judge(built_on, _mutant(plan, "scale/adds-factor"), outcome)
    assert row.reasons[0].endswith(
        " normalize builds on scale (depends_on): grade it with a known-good scale in place of "
        "the learner's."
    )


def test_a_mutant_named_as_another_mistake_says_which(toy):
    plan = plan_cases(toy)
    message = "Known mistake in scale(x, 3.0): [scale/accepts-infinity] An infinite factor ..."
    outcome = Outcome(
        scores={"scale": 5.0, "normalize": 5.0}, failures={"scale": [("test", message)]}
    )
    row = judge(plan, _mutant(plan, "scale/adds-factor"), outcome)
    assert (row.verdict, row.named) == ("not named", False)
    assert row.reasons == [
        verdicts.MUTANT_NOT_NAMED.format(
            component="scale",
            id="scale/adds-factor",
            instead=" (they name scale/accepts-infinity instead)",
        )
    ]


def test_a_mutant_named_by_only_some_failing_tests_is_partly_named(toy):
    plan = plan_cases(toy)
    named = ("scales by the factor", f"Known mistake in scale(x, 3.0): {ADDS_FACTOR}")
    silent = [
        ("keeps the dtype", "scale(x, 3.0) differs from the expected value: all entries differ."),
        ("zero factor", "scale(x, 0.0) should be all zeros; got 3.0 at [0]."),
    ]
    outcome = Outcome(scores={"scale": 4.0, "normalize": 5.0}, failures={"scale": [named, *silent]})
    row = judge(plan, _mutant(plan, "scale/adds-factor"), outcome)
    assert (row.verdict, row.named, row.named_in) == ("partly named", False, (1, 3))
    assert not row.ok and not row.caught_and_named
    assert row.reasons == [
        "The graders name [scale/adds-factor] in 1 of the 3 failing tests of scale, but not in "
        '"keeps the dtype" and "zero factor": a learner with this mistake reads those messages '
        "too; pass mistake('scale/adds-factor') to their failing checks (or as their hint)."
    ]
    table = Console(width=80, record=True, file=io.StringIO())
    table.print(check.check_table(plan, [row]))
    assert re.search(
        r"adds-factor\s+< full\s+4/10\s+9/15\s+1/3\s+partly named", table.export_text()
    )
    # Named by every failing test: yes, and caught and named.
    outcome.failures["scale"] = [named, named]
    row = judge(plan, _mutant(plan, "scale/adds-factor"), outcome)
    assert (row.verdict, row.named, row.named_in) == ("ok", True, (2, 2))
    assert row.caught_and_named


def test_dependents_follow_depends_on_transitively(tmp_path):
    text = (TOY / "course.toml").read_text()
    text = text.replace('title = "Normalizing"', 'title = "Normalizing"\ndepends_on = ["scale"]')
    course = copied_toy(tmp_path)
    (course / "course.toml").write_text(text)
    plan = plan_cases(load_course(course / "course.toml"))
    assert plan.dependents == {"scale": frozenset({"normalize"}), "normalize": frozenset()}
