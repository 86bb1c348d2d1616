"""The pytest plugin's collection: component markers and weights, seeds, the course order,
the course found or not, a missing submission. Each test writes the mini course anew."""

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from autograder import pytest_plugin as plugin
from autograder.config import SUBMISSION_MISSING
from tests.framework.mini_course import TOY, Collector, make_course, run


@pytest.fixture
def mini(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # course discovery must not find the repository's course.toml
    make_course(tmp_path)
    return tmp_path


def test_a_marker_selects_one_component(mini):
    _, collector, _ = run(mini, "graders", "-m", "beta")
    assert {r.component for r in collector.results} == {"beta"}


def test_seeds_change_with_the_seed_option(mini):
    path = "graders/visible/test_mini_visible.py::test_seeded[1]"
    assert plugin.seed_for(0, path) != plugin.seed_for(1, path)
    assert plugin.seed_for(0, path) != plugin.seed_for(0, path.replace("[1]", "[2]"))
    code, collector, _ = run(mini, path, "--seed=1")
    assert code == 0 and [r.status for r in collector.results] == ["passed"]


def test_a_grader_test_without_a_component_marker_stops_collection(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_course(
        tmp_path,
        {
            "graders/visible/test_unmarked.py": """
                import pytest

                def test_nothing():
                    pass

                @pytest.mark.alpha
                @pytest.mark.beta
                def test_both():
                    pass

                @pytest.mark.alpha
                @pytest.mark.weight(0)
                def test_weightless():
                    pass
            """
        },
    )
    code, collector, output = run(tmp_path, "graders")
    assert code == pytest.ExitCode.USAGE_ERROR
    base = "graders/visible/test_unmarked.py::"
    assert collector.errors == [
        plugin.NO_MARKER.format(
            nodeid=base + "test_nothing", markers="alpha, beta", example="alpha"
        ),
        plugin.MANY_MARKERS.format(nodeid=base + "test_both", count=2, found="alpha, beta"),
        plugin.BAD_WEIGHT.format(nodeid=base + "test_weightless", args="(0)"),
    ]
    assert collector.errors[0] in output


def test_the_learner_fixture_reports_a_missing_submission(mini):
    (mini / "graders" / "visible" / "test_uses_learner.py").write_text(
        "import pytest\n\n@pytest.mark.alpha\ndef test_it(learner):\n    pass\n"
    )
    missing = mini / "nobody"
    _, collector, _ = run(mini, "graders/visible/test_uses_learner.py", f"--submission={missing}")
    (result,) = collector.results
    assert result.status == "failed"
    assert result.message == SUBMISSION_MISSING.format(path=missing.resolve())


def test_the_plugin_is_inert_without_a_course(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "test_plain.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.weight(2)\ndef test_ok():\n    assert 1\n\n"
        "def test_course(course):\n    pass\n"
    )
    code, collector, output = run(tmp_path, "test_plain.py")
    assert code == pytest.ExitCode.TESTS_FAILED
    assert collector.results == []
    assert "autograder:" not in output
    assert plugin.NO_COURSE.format(fixture="course") in output
    assert "1 passed" in output


def test_grader_tests_run_in_the_course_order_of_their_components(monkeypatch):
    """The toy course lists scale before normalize; their files sort the other way round."""
    monkeypatch.chdir(TOY)
    code, _, output = run(
        TOY, "tests/graders/visible", "--course=course.toml", "--collect-only", "-q"
    )
    assert code == pytest.ExitCode.OK
    files = [line.split("::")[0] for line in output.splitlines() if "::" in line]
    assert sorted(set(files)) == [
        "tests/graders/visible/test_toy_normalize.py",
        "tests/graders/visible/test_toy_scale.py",
    ]
    first_normalize = files.index("tests/graders/visible/test_toy_normalize.py")
    assert set(files[:first_normalize]) == {"tests/graders/visible/test_toy_scale.py"}
    assert set(files[first_normalize:]) == {"tests/graders/visible/test_toy_normalize.py"}


def test_grader_items_know_their_location_once_collected(mini):
    """A batch forks its harness children from the process that collected: what collection
    computes, the children need not compute again."""
    seen = {}

    class Peek:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, items):
            for item in items:
                seen[item.name] = item.__dict__.get("location")

    collector = Collector()
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        pytest.main(
            ["graders", f"--rootdir={mini}", "-p", "no:cacheprovider", "--collect-only"],
            plugins=[collector, Peek()],
        )
    assert seen["test_passes"] == ("graders/visible/test_mini_visible.py", 9, "test_passes")
    assert all(location is not None for location in seen.values())
