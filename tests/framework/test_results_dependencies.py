"""Dependency-aware feedback: a failing component whose `depends_on` parts also fail says which
part to fix first, in its first problem (summary.md, terminal) and its failing tests' messages
(results.json). On the toy course, given a third component that builds on the other two."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.reports.results_json import render_results_json
from autograder.reports.summary_md import render_summary
from autograder.reports.terminal import first_problems
from autograder.results import TestResult, build_grade, fix_first_sentence, note_for_test

TOY = Path(__file__).parent / "toy_course"
SCALE_FIRST = "Fix Scaling first: this part builds on it, and its own tests fail."
BOTH_FIRST = (
    "Fix Scaling and Normalizing first: this part builds on them, and their own tests fail."
)


@pytest.fixture(scope="module")
def config():
    """The toy course plus `pipeline` (builds on scale and normalize)."""
    base = load_course(TOY / "course.toml")
    normalize = base.components[1]
    pipeline = normalize.model_copy(
        update={
            "name": "pipeline",
            "module": "pipeline",
            "title": "Pipeline",
            "depends_on": ("scale", "normalize"),
        }
    )
    return base.model_copy(update={"components": [*base.components, pipeline]})


def run(component, status="passed", message="", name="t"):
    return TestResult(
        name=name, nodeid=f"x::{name}", component=component, status=status, message=message
    )


def grade(config, tests, **kwargs):
    return build_grade(config, tests, submission="alice", seed=3, hidden_included=True, **kwargs)


def test_the_sentence_names_one_or_several_parts():
    assert fix_first_sentence(["Scaling"]) == SCALE_FIRST
    assert fix_first_sentence(["Scaling", "Normalizing"]) == BOTH_FIRST
    assert fix_first_sentence(["A", "B", "C"]).startswith("Fix A, B and C first:")


def test_a_failing_component_names_the_failing_parts_it_builds_on(config):
    tests = [
        run("scale", "failed", "Scale is off.", "s"),
        run("normalize", name="n"),
        run("pipeline", "failed", "Pipeline is wrong.", "p1"),
        run("pipeline", name="p2"),
    ]
    result = grade(config, tests)
    scale, normalize, pipeline = result.components
    assert pipeline.fix_first == ("scale",)
    assert pipeline.problem == f"Pipeline is wrong. {SCALE_FIRST}"  # its own problem first
    assert (scale.problem, scale.fix_first) == ("Scale is off.", ())
    messages = {t.name: t.message for t in result.tests}
    assert messages == {
        "s": "Scale is off.",
        "n": "",
        "p1": f"Pipeline is wrong. {SCALE_FIRST}",
        "p2": "",
    }
    assert pipeline.score == 2.5  # the note changes no points


def test_the_note_reaches_results_json_and_summary_md(config):
    tests = [
        run("scale", "failed", "Scale is off.", "s"),
        run("normalize", "failed", "Norm is off.", "n"),
        run("pipeline", "failed", "Pipeline is wrong.", "p"),
    ]
    result = grade(config, tests)
    document = json.loads(render_results_json(result))
    (pipeline_test,) = [t for t in document["tests"] if t["tags"] == ["pipeline"]]
    assert pipeline_test["output"] == f"Pipeline is wrong. {BOTH_FIRST}"
    assert BOTH_FIRST in document["output"]  # the summary line of the component
    summary = render_summary(result)
    row = next(line for line in summary.splitlines() if line.startswith("| Pipeline |"))
    assert "Fix Scaling and Normalizing first" in row


@pytest.mark.parametrize(
    "scale_status, pipeline_status",
    [("passed", "failed"), ("failed", "passed")],
    ids=["parts pass", "component passes"],
)
def test_no_note_unless_both_fail(config, scale_status, pipeline_status):
    tests = [run("scale", scale_status, "x."), run("pipeline", pipeline_status, "y.")]
    result = grade(config, tests)
    assert all("first:" not in t.message for t in result.tests)
    assert all(not c.fix_first and "first:" not in c.problem for c in result.components)


def test_a_part_none_of_whose_tests_ran_is_not_said_to_fail(config):
    result = grade(config, [run("pipeline", "failed", "y.")])
    assert result.components[2].fix_first == ()


def test_a_component_zeroed_for_its_own_forbidden_call_gets_no_note(config):
    tests = [run("scale", "failed", "x."), run("pipeline", name="p")]
    result = grade(config, tests, forbidden=[("numpy.linalg.norm", "pipeline.py", 3)])
    pipeline = result.components[2]
    assert pipeline.forbidden and pipeline.fix_first == ()
    assert pipeline.problem.startswith(config.forbidden.sentence("numpy.linalg.norm"))
    assert "first:" not in pipeline.problem and "first:" not in result.tests[1].message


def stub(component, name, file):
    """A failing test whose NotImplementedError was raised in `file` of the toy package."""
    message = (
        f"{component}(...) is not implemented yet: it raised NotImplementedError at "
        f"assignments/toy/{file}:3 in {component}. Replace the `raise NotImplementedError`."
    )
    return replace(run(component, "failed", message, name), error_kind="not_implemented")


def test_a_component_whose_own_code_is_not_implemented_gets_no_note(config):
    tests = [run("scale", "failed", "Scale is off.", "s"), stub("pipeline", "p", "pipeline.py")]
    result = grade(config, tests)
    pipeline = result.components[2]
    assert (pipeline.fix_first, pipeline.note) == ((), "")
    assert pipeline.problem.startswith("The call pipeline(...) is not implemented yet")
    assert "first:" not in result.tests[1].message


def test_only_the_tests_that_may_involve_the_part_get_the_note(config):
    tests = [
        run("scale", "failed", "Scale is off.", "s"),
        stub("pipeline", "p1", "pipeline.py"),  # its own stub: no note
        stub("pipeline", "p2", "scale.py"),  # the part's stub, reached through the pipeline
        run("pipeline", "failed", "Pipeline is wrong.", "p3"),
    ]
    result = grade(config, tests)
    pipeline = result.components[2]
    assert pipeline.fix_first == ("scale",)
    assert pipeline.problem.startswith("The call pipeline(...) is not implemented yet")
    assert pipeline.problem.endswith(SCALE_FIRST)
    messages = {t.name: t.message for t in result.tests}
    assert "first:" not in messages["p1"]
    assert messages["p2"].endswith(SCALE_FIRST)
    assert messages["p3"] == f"Pipeline is wrong. {SCALE_FIRST}"


def test_a_test_that_names_the_components_own_known_mistake_gets_no_note(config):
    """The graders matched the result to the pipeline's own mistake (made on top of correct
    parts): fixing Scaling first would not change it. A mistake of the part itself, quoted in
    the pipeline's test, still gets the note."""
    own = "Known mistake in the output: [pipeline/no-clip] The values are not clipped. Read: x."
    parts = "Known mistake in the output: [scale/no-shift] The scale is not shifted. Read: x."
    tests = [
        run("scale", "failed", "Scale is off.", "s"),
        run("pipeline", "failed", own, "p1"),
        run("pipeline", "failed", parts, "p2"),
    ]
    messages = {t.name: t.message for t in grade(config, tests).tests}
    assert messages["p1"] == own
    assert messages["p2"] == f"{parts} {SCALE_FIRST}"
    only_own = grade(config, [run("scale", "failed", "Scale is off.", "s"), tests[1]])
    assert (only_own.components[2].fix_first, only_own.components[2].note) == ((), "")


def test_an_own_known_mistake_made_on_the_learners_own_failing_part_gets_the_note(config):
    """A new-user trial's release with a softmax over axis 0: a correct attention that called it
    was told [attention/softmax-over-queries] at its correct line, and nothing about the
    softmax. On a part of the learner's own that the test ran (uses: no stand-in replaced it)
    the part may explain the result as well: both are said."""
    own = "Known mistake in the output: [pipeline/no-clip] The values are not clipped. Read: x."
    ran_scale = replace(run("pipeline", "failed", own, "p1"), uses=("scale",))
    replaced = replace(run("pipeline", "failed", own, "p2"), uses=())
    tests = [run("scale", "failed", "Scale is off.", "s"), ran_scale, replaced]
    messages = {t.name: t.message for t in grade(config, tests).tests}
    assert messages["p1"] == f"{own} {SCALE_FIRST}"
    assert messages["p2"] == own
    assert note_for_test(config, ran_scale, {"scale"}) == SCALE_FIRST
    assert note_for_test(config, ran_scale, {"normalize"}) == ""  # a part the test did not run
    assert note_for_test(config, replaced, {"scale"}) == ""


def test_the_terminal_gives_the_own_problem_then_the_note(config):
    tests = [
        run("scale", "failed", "Scale is off.", "s"),
        run("pipeline", "failed", "Pipeline is wrong. Its rows differ.", "p"),
    ]
    lines = [line.plain for line in first_problems(grade(config, tests))]
    assert lines[-1] == f"Pipeline: Pipeline is wrong. {SCALE_FIRST}"
    summary = render_summary(grade(config, tests))
    row = next(line for line in summary.splitlines() if line.startswith("| Pipeline |"))
    assert row.index("Pipeline is wrong.") < row.index("Fix Scaling first")


def uses(test, *parts):
    """The test as a grader marked `@pytest.mark.uses(*parts)` reports it."""
    return replace(test, uses=parts)


def test_a_test_that_runs_no_part_gets_no_note(config):
    """Per test, not per component: a pipeline test whose tested call runs neither part (a
    `cosine_similarity` next to an attention built on softmax) gets no "Fix Scaling first";
    one that runs Scaling gets it, naming Scaling only (Normalizing fails too)."""
    tests = [
        run("scale", "failed", "Scale is off.", "s"),
        run("normalize", "failed", "Norm is off.", "n"),
        uses(run("pipeline", "failed", "Its shape is wrong.", "own")),
        uses(run("pipeline", "failed", "Pipeline is wrong.", "scaled"), "scale"),
        run("pipeline", "failed", "Pipeline says nothing.", "undeclared"),
    ]
    result = grade(config, tests)
    messages = {t.name: t.message for t in result.tests}
    assert messages["own"] == "Its shape is wrong."
    assert messages["scaled"] == f"Pipeline is wrong. {SCALE_FIRST}"  # not Normalizing
    assert messages["undeclared"] == f"Pipeline says nothing. {BOTH_FIRST}"
    assert result.components[2].fix_first == ("scale", "normalize")


def test_a_part_a_stand_in_replaced_is_not_in_uses(config):
    """A grader that set a stand-in for Scaling records it; its test then says it runs no
    learner part, and its failure is the pipeline's own."""
    tests = [
        run("scale", "failed", "Scale is off.", "s"),
        uses(run("pipeline", "failed", "Pipeline is wrong.", "p")),
    ]
    result = grade(config, tests)
    assert result.tests[1].message == "Pipeline is wrong."
    assert (result.components[2].fix_first, result.components[2].note) == ((), "")


@pytest.mark.parametrize(
    ("message", "noted"),
    [
        ("It raised ValueError at assignments/toy/scale.py:7 in __init__.", True),
        ("It raised ValueError at assignments/toy/scale.py. A hidden test", True),  # file alone
        ("It raised ValueError at assignments/toy/rescale.py.", False),
        ("It raised ValueError at assignments/toy/scale.pyc.", False),
    ],
    ids=["visible", "hidden", "another_file", "not_the_module"],
)
def test_a_failure_located_in_a_parts_file_gets_the_note_whatever_uses_says(config, message, noted):
    """The part's constructor raised inside a test that declared none (the stand-in could not
    be set before the learner's own part ran): the location names scale.py, with its line in a
    visible test and alone in a hidden one."""
    tests = [
        run("scale", "failed", "Scale is off.", "s"),
        uses(run("pipeline", "failed", message, "p")),
    ]
    expected = f"{message} {SCALE_FIRST}" if noted else message
    assert grade(config, tests).tests[1].message == expected


def test_the_components_note_names_the_parts_its_failing_tests_run(config):
    tests = [
        run("scale", "failed", "Scale is off.", "s"),
        run("normalize", "failed", "Norm is off.", "n"),
        uses(run("pipeline", "failed", "Pipeline is wrong.", "p"), "normalize"),
    ]
    pipeline = grade(config, tests).components[2]
    assert pipeline.fix_first == ("normalize",)
    assert pipeline.note == fix_first_sentence(["Normalizing"])


def test_a_stub_that_declares_its_parts_gets_no_note_for_them(config):
    """A test that runs Scaling (`uses`) on a pipeline that is still a stub: the stub raised
    before any part ran, so "Fix Scaling first" would send the learner to the wrong file (an
    attention stub told to fix Softmax first). A part's own stub reached through it still
    gets the note."""
    tests = [
        run("scale", "failed", "Scale is off.", "s"),
        uses(stub("pipeline", "own", "pipeline.py"), "scale"),
        uses(stub("pipeline", "part", "scale.py"), "scale"),
    ]
    result = grade(config, tests)
    messages = {t.name: t.message for t in result.tests}
    assert "first:" not in messages["own"]
    assert messages["part"].endswith(SCALE_FIRST)
    assert result.components[2].fix_first == ("scale",)
