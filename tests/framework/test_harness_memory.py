"""The harness frees large learner outputs between tests (pytest_plugin/fixtures.py)."""

import textwrap

import pytest

from autograder import pytest_plugin as plugin
from autograder.runtime import LearnerError, LearnerSession, Limits
from autograder.runtime.shared import messages
from tests.framework.mini_course import make_course, run

#: float64 entries of one output: just over the bytes after which the harness frees memory
ENTRIES = plugin.RELEASE_AFTER_BYTES // 8 + 1

GRADERS = {
    "graders/visible/test_big.py": """
        import weakref

        import pytest

        from autograder.feedback import expect_shape

        OUTPUTS = []

        @pytest.mark.alpha
        @pytest.mark.parametrize("n", range(2))
        def test_wrong_shape(learner, n):
            got = learner.module("alpha").big()
            OUTPUTS.append(weakref.ref(got))
            expect_shape(got, (2,), what="big()")

        @pytest.mark.alpha
        def test_outputs_are_freed():
            assert len(OUTPUTS) == 2
            assert [ref() is None for ref in OUTPUTS] == [True, True]
    """,
}


def test_failed_tests_do_not_keep_large_learner_outputs(tmp_path, monkeypatch):
    """A failed test's traceback holds its outputs: pytest keeps the last in sys.last_value and
    the others in reference cycles. A learner returning 240 MB arrays made the harness reach
    5 GB in one component's tests; now what a finished test received is freed."""
    monkeypatch.chdir(tmp_path)
    make_course(tmp_path, GRADERS)
    (tmp_path / "minipkg" / "alpha.py").write_text(
        textwrap.dedent(f"""
            import numpy as np

            def big():
                return np.zeros({ENTRIES})
        """),
        encoding="utf-8",
    )
    code, collector, output = run(tmp_path, "graders", f"--submission={tmp_path}")
    assert code == pytest.ExitCode.TESTS_FAILED
    statuses = {r.nodeid.split("::")[1]: r.status for r in collector.results}
    assert statuses == {
        "test_wrong_shape[0]": "failed",
        "test_wrong_shape[1]": "failed",
        "test_outputs_are_freed": "passed",
    }, output


def test_a_course_sets_the_largest_value_that_crosses(tmp_path, monkeypatch):
    """course.toml's [limits] value_mb: a learner output larger than it is refused in the
    worker, before it reaches the harness, with a sentence naming its shape."""
    monkeypatch.chdir(tmp_path)
    course = make_course(tmp_path, {"graders/visible/test_too_big.py": GRADERS_ONE_CALL})
    course.write_text(course.read_text() + "\n[limits]\nvalue_mb = 1\n", encoding="utf-8")
    (tmp_path / "minipkg" / "alpha.py").write_text(
        "import numpy as np\n\ndef big():\n    return np.zeros(2**18)\n", encoding="utf-8"
    )
    _, collector, _ = run(tmp_path, "graders", f"--submission={tmp_path}")
    (result,) = collector.results
    assert result.status == "failed"
    assert result.message == (
        "The call big(...) returned a value the grader cannot read: an array of shape (262144,) "
        "(2 MiB) "
        "is larger than the 1 MiB allowed for one value."
    )


GRADERS_ONE_CALL = """
import pytest

@pytest.mark.alpha
def test_big(learner):
    learner.module("alpha").big()
"""


def test_an_answer_longer_than_the_harness_reads_is_a_sentence_not_a_crash(tmp_path):
    """When the worker lets through a value whose frame is longer than the harness reads (three
    budgets), the learner was told their process was killed, after a 5 s wait for its exit
    (H41). The worker here was started with the default budget, then the harness's is cut."""
    package = tmp_path / "bigpkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "alpha.py").write_text(
        "import numpy as np\n\ndef big():\n    return np.zeros(2**19)\n", encoding="utf-8"
    )
    session = LearnerSession(package, package="bigpkg", limits=Limits())
    try:
        assert session.module("alpha").big().shape == (2**19,)  # 4 MiB: within the default
        session.limits = Limits(max_wire_bytes=2**18)  # the harness now reads 1.75 MiB at most
        with pytest.raises(LearnerError) as caught:
            session.module("alpha").big()
    finally:
        session.close()
    assert caught.value.kind == "bad_return"
    reason = messages.ANSWER_TOO_LONG.format(mb="0.25")
    assert caught.value.feedback == messages.BAD_RETURN.format(call="big(...)", reason=reason)
