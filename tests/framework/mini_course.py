"""A small course written to a temporary folder, and pytest.main over it in this process: what
the plugin's tests run (test_plugin.py, test_plugin_collection.py, test_plugin_hooks.py)."""

import io
import textwrap
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from autograder import pytest_plugin as plugin

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
    with redirect_stdout(output), redirect_stderr(output), pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "400")  # so -rf summary lines are not cut to 80 columns
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


def by_name(collector):
    """The run's results by test name (the node id without its file)."""
    return {r.nodeid.split("::", 1)[1]: r for r in collector.results}
