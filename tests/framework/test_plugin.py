"""The pytest plugin, run in-process on small courses written to a temporary folder.

Only the last test starts a learner worker (the toy course, as a learner runs it); the others
use graders that never call learner code, so they stay fast.
"""

import io
import textwrap
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from autograder import pytest_plugin as plugin
from autograder.config import SUBMISSION_MISSING, load_course
from autograder.feedback import KNOWN_MISTAKE
from autograder.results import build_grade

TOY = Path(__file__).parent / "toy_course"

COURSE = """\
[course]
name = "Mini"
package = "minipkg"
package_dir = "minipkg"
visible_tests = "graders/visible"
hidden_tests = "graders/hidden"

[[components]]
name = "alpha"
module = "alpha"
title = "Alpha"
points = 6

[[components]]
name = "beta"
module = "beta"
title = "Beta"
points = 4
"""

GRADERS = {
    "graders/visible/test_mini_visible.py": """
        import random

        import numpy as np
        import pytest

        from autograder.feedback import expect_close, is_hidden
        from autograder.pytest_plugin import seed_for

        @pytest.mark.alpha
        @pytest.mark.weight(2)
        def test_passes():
            '''Alpha passes'''
            assert not is_hidden()

        @pytest.mark.alpha
        def test_sentence():
            expect_close([1.0, 2.0], [1.0, 3.0], what="f(x)", atol=1e-6)

        @pytest.mark.beta
        def test_grader_bug():
            {}["missing key"]

        @pytest.mark.beta
        def test_plain_assert():
            assert 1 == 2, "The two must agree. Details follow"

        @pytest.mark.beta
        @pytest.mark.parametrize("n", [1, 2])
        def test_seeded(rng, n, request):
            key = f"graders/visible/test_mini_visible.py::test_seeded[{n}]"
            seed = seed_for(request.config.getoption("seed"), key)
            assert rng.integers(1 << 30) == np.random.default_rng(seed).integers(1 << 30)
            assert np.random.rand() == np.random.RandomState(seed).rand()
            assert random.random() == random.Random(seed).random()

        @pytest.mark.beta
        def test_skipped():
            pytest.skip("not today")
    """,
    "graders/hidden/test_mini_hidden.py": """
        import pytest

        from autograder.feedback import expect_close, is_hidden

        @pytest.mark.alpha
        def test_hidden_flag():
            assert is_hidden()

        @pytest.mark.alpha
        def test_hidden_values():
            expect_close([1.25, 2.5], [1.0, 3.0], what="f(hidden)", atol=1e-6)

        @pytest.mark.beta
        def test_hidden_assert():
            assert 3 == 4, "values 3 and 4 differ"

        @pytest.mark.beta
        def test_hidden_grader_bug():
            {}[0.123456]
    """,
}


def make_course(folder: Path, graders: dict[str, str] = GRADERS) -> Path:
    (folder / "course.toml").write_text(COURSE, encoding="utf-8")
    (folder / "minipkg").mkdir()
    (folder / "minipkg" / "__init__.py").write_text("", encoding="utf-8")
    for name, text in graders.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return folder / "course.toml"


class Collector:
    """pytest plugin: what a plain pytest run's grader tests found, kept as the run ends, and
    why the graders could not run (collection errors, the plugin's usage errors)."""

    def __init__(self) -> None:
        self.results: list = []
        self.grader_errors: list[str] = []
        self.forbidden: set[tuple] = set()
        self.errors: list[str] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.errors.append(str(report.longrepr))

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        state = plugin.run_state(config)
        if state is not None:
            self.results = list(state.results)
            self.grader_errors = list(state.grader_errors)
            self.forbidden = set(state.forbidden)
            self.errors.extend(state.usage_errors)


def run(folder: Path, *args: str) -> tuple[int, Collector, str]:
    """pytest.main in this process; its console output (as wide as needed) is returned."""
    collector = Collector()
    output = io.StringIO()
    with redirect_stdout(output), redirect_stderr(output):
        code = pytest.main(
            [
                *args,
                f"--rootdir={folder}",
                "--import-mode=importlib",
                "-p",
                "no:cacheprovider",
                "--strict-markers",
                "--color=no",
                "-rf",
            ],
            plugins=[collector],
        )
    return int(code), collector, output.getvalue()


@pytest.fixture(scope="module", autouse=True)
def wide_terminal():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "400")  # so -rf summary lines are not cut to 80 columns
        yield


@pytest.fixture
def mini(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # course discovery must not find the repository's course.toml
    make_course(tmp_path)
    return tmp_path


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


def by_name(collector):
    return {r.nodeid.split("::", 1)[1]: r for r in collector.results}


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


def test_a_learner_running_plain_pytest_sees_the_sentences(monkeypatch):
    """One real worker: the toy course's visible scale tests on the mistaken submission."""
    monkeypatch.chdir(TOY)
    code, collector, output = run(
        TOY,
        "tests/graders/visible/test_toy_scale.py",
        "--submission=submissions/mistake",
        "--course=course.toml",
    )
    assert code == pytest.ExitCode.TESTS_FAILED
    mistake = KNOWN_MISTAKE.format(
        what="scale(x, 3.0)", mistake="It adds the factor instead of multiplying by it."
    )
    assert f"test_scale_values - {mistake}" in output  # -rf short summary, first sentence
    assert plugin.LEARNER_OUTPUT in output and "debug | <b>scaling</b>" in output
    assert "\x1b[31m" not in output  # the learner's escape sequences were stripped
    assert "Scaling: 6.67 / 10.00 (1/2)" in output  # weights 1 and 2
    assert [r.status for r in collector.results] == ["failed", "passed"]


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


def test_every_visible_test_runs_before_every_hidden_one(mini_run):
    """A hidden input kept in memory by learner code must not reach a later visible test's
    message (the mini course's hidden file sorts before its visible one)."""
    _, collector, _ = mini_run
    order = [r.visibility for r in collector.results]
    assert "hidden" in order and "visible" in order
    assert order == sorted(order, key=lambda visibility: visibility == "hidden")


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


FIXTURE_GRADERS = {
    "graders/visible/test_fixtures.py": """
        import random

        import numpy as np
        import pytest

        from autograder.pytest_plugin import seed_for

        KEY = "graders/visible/test_fixtures.py::test_rng_course_and_seeding"

        @pytest.mark.alpha
        def test_rng_course_and_seeding(rng, course):
            seed = seed_for(3, KEY)
            assert rng.integers(1 << 30) == np.random.default_rng(seed).integers(1 << 30)
            assert np.random.random() == np.random.RandomState(seed).random()
            assert random.random() == random.Random(seed).random()
            assert course.course.name == "Mini"
    """,
}


def test_the_plugin_fixtures_find_their_test_without_request(tmp_path, monkeypatch, request):
    """pytest builds a definition of `request` each time a fixture that takes it is set up (some
    770 per learner with the course's graders); the plugin's fixtures find their test through
    pytest_runtest_protocol instead, and still seed it before it runs."""
    monkeypatch.chdir(tmp_path)
    make_course(tmp_path, FIXTURE_GRADERS)
    closures = {}

    class Peek:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, items):
            closures.update((item.name, list(item.fixturenames)) for item in items)

    collector = Collector()
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        code = pytest.main(
            ["graders", f"--rootdir={tmp_path}", "-p", "no:cacheprovider", "--seed=3"],
            plugins=[collector, Peek()],
        )
    assert code == 0 and [r.status for r in collector.results] == ["passed"]
    assert sorted(closures["test_rng_course_and_seeding"]) == ["_autograder_test", "course", "rng"]
    # the run inside this test is over: this test is the one being run again
    assert plugin.fixtures._RUNNING[-1] is request.node


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


TEARDOWN_GRADERS = {
    "graders/visible/test_teardown_output.py": """
        import pytest

        @pytest.fixture
        def noisy(request):
            yield
            print(f"teardown of {request.node.name}")

        @pytest.mark.alpha
        @pytest.mark.parametrize("n", [1, 2, 3])
        def test_fails(noisy, n):
            assert n == 2, f"n is {n}"
    """,
}


def test_the_failures_section_keeps_each_tests_teardown_output(tmp_path, monkeypatch):
    """Each failure in pytest's summary shows its own teardown output, and only its own (the
    sentence replaces the failure's traceback, not its captured output)."""
    monkeypatch.chdir(tmp_path)
    make_course(tmp_path, TEARDOWN_GRADERS)
    output = io.StringIO()
    with redirect_stdout(output), redirect_stderr(output):
        code = pytest.main(
            ["graders", f"--rootdir={tmp_path}", "-p", "no:cacheprovider", "--color=no"]
        )
    assert code == pytest.ExitCode.TESTS_FAILED
    failures = output.getvalue().split("= FAILURES =", 1)[1]
    first, third = failures.split(" test_fails[3] ")
    assert "teardown of test_fails[1]" in first and "teardown of test_fails[3]" in third
    assert "teardown of test_fails[3]" not in first and "teardown of test_fails[1]" not in third
    assert "teardown of test_fails[2]" not in failures  # it passed
    assert "Captured stdout teardown" in first


RELAY_GRADERS = {
    "graders/hidden/conftest.py": """
        def pytest_runtest_setup(item):
            item.user_properties.append(("hidden conftest", True))
    """,
    "graders/hidden/test_relay_hidden.py": """
        import pytest

        @pytest.mark.beta
        def test_hidden():
            pass
    """,
    "graders/visible/test_relay_visible.py": """
        import pytest

        @pytest.mark.alpha
        def test_visible():
            pass
    """,
}


def test_a_conftest_of_the_hidden_graders_runs_for_them_only(tmp_path, monkeypatch):
    """A conftest's hooks run only for the tests in its folder, also when the visible graders
    beside it run in the same session."""
    monkeypatch.chdir(tmp_path)
    make_course(tmp_path, RELAY_GRADERS)
    relays = {}

    class Peek:
        @pytest.hookimpl(trylast=True)
        def pytest_runtest_teardown(self, item):
            relays[item.name, "conftest"] = item.user_properties

    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        assert (
            pytest.main(
                ["graders", f"--rootdir={tmp_path}", "-p", "no:cacheprovider"], plugins=[Peek()]
            )
            == 0
        )
    assert relays["test_visible", "conftest"] == []
    assert relays["test_hidden", "conftest"] == [("hidden conftest", True)]
