"""The pytest plugin's hooks and fixtures as a learner's or an author's pytest run meets them:
the sentences of a plain run on a real worker, fixtures without `request`, teardown output, a
conftest of the hidden graders."""

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from autograder import pytest_plugin as plugin
from autograder.feedback import KNOWN_MISTAKE
from tests.framework.mini_course import TOY, Collector, make_course, run


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
