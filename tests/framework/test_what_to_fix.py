"""summary.md's "What to fix": one item per problem, whatever words its tests told it in."""

from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.reports import summary_md
from autograder.results import TestResult, build_grade
from autograder.results.same_problem import (
    ENDED,
    TIMED_OUT,
    alike_form,
    hidden_form,
    stopped_call,
)
from autograder.runtime.shared.messages import (
    CRASH_SIGNAL,
    NOT_IMPLEMENTED,
    NOT_RUN_AFTER_CRASHES,
    NOT_RUN_AFTER_HANGS,
    TIMEOUT,
)

TOY = Path(__file__).parent / "toy_course"
VISIBLE_STUB = NOT_IMPLEMENTED.format(
    call="The call scale(...)", where=" at assignments/toy/scale.py:38 in scale"
)
HIDDEN_STUB = NOT_IMPLEMENTED.format(
    call="The call scale(...)", where=" at assignments/toy/scale.py"
)
INIT_STUB = NOT_IMPLEMENTED.format(
    call="Scaler(...)", where=" at assignments/toy/scale.py:50 in __init__"
)


def what_to_fix(tests: list[TestResult]) -> list[str]:
    """The lines of summary.md's "What to fix" for these tests of the toy course."""
    config = load_course(TOY / "course.toml")
    result = build_grade(config, tests, submission="s", seed=0, hidden_included=True)
    text = summary_md.render_summary(result).split(summary_md.TO_FIX_NOTE, 1)[1]
    return text.strip().splitlines()


def failed(
    name: str, component: str, message: str, hidden: bool = False, kind: str = "failed"
) -> TestResult:
    """A failing test; ``kind``: its error kind ("timeout" and "crash" are the harness's)."""
    visibility = "hidden" if hidden else "visible"
    return TestResult(
        name, f"t::{name}", component, message=message, visibility=visibility, error_kind=kind
    )


def test_hidden_form_keeps_the_file_of_a_line_and_leaves_other_text():
    assert hidden_form(VISIBLE_STUB) == HIDDEN_STUB
    assert hidden_form(INIT_STUB) == NOT_IMPLEMENTED.format(
        call="Scaler(...)", where=" at assignments/toy/scale.py"
    )
    assert (
        hidden_form("It was called in a/b.py at line 25.") == "It was called in a/b.py at line 25."
    )


def test_stopped_call_finds_the_call_of_a_time_out_a_crash_and_their_calls_not_run_again():
    call = "Scaler.forward(...)"
    timeout = TIMEOUT.format(call=call, seconds=10)
    assert stopped_call(timeout, "timeout") == (TIMED_OUT, call, False)
    again = NOT_RUN_AFTER_HANGS.format(call=call, seconds=10, count=2)
    assert stopped_call(again, "timeout") == (TIMED_OUT, call, True)
    crash = CRASH_SIGNAL.format(call=call, signal="SIGKILL", why="")
    assert stopped_call(crash, "crash") == (ENDED, call, False)
    crashed_again = NOT_RUN_AFTER_CRASHES.format(call=call, count=2)
    assert stopped_call(crashed_again, "crash") == (ENDED, call, True)
    assert stopped_call(VISIBLE_STUB, "not_implemented") is None


@pytest.mark.parametrize("kind", ["exception", "failed", "not_implemented", ""])
def test_a_stop_told_in_a_failure_of_another_kind_is_the_learners_text(kind):
    """Learner code can raise (or have its worker answer) any of these sentences: only the
    harness's own kinds of failure stopped a call."""
    call = "Scaler.forward(...)"
    for sentence in (
        TIMEOUT.format(call=call, seconds=10),
        NOT_RUN_AFTER_HANGS.format(call=call, seconds=10, count=2),
        CRASH_SIGNAL.format(call=call, signal="SIGKILL", why=""),
        NOT_RUN_AFTER_CRASHES.format(call=call, count=2),
    ):
        assert stopped_call(sentence, kind) is None


def test_stopped_call_takes_the_call_from_the_start_of_its_line_in_a_longer_message():
    call = "The call scale(x)"
    told = f"Fix Scaler first.\n{TIMEOUT.format(call=call, seconds=10)}"
    assert stopped_call(told, "timeout") == (TIMED_OUT, call, False)
    assert stopped_call("scale(x) " * 400, "timeout") is None  # long, and nothing stopped


def test_a_problem_the_visible_and_hidden_tests_both_found_is_one_item_with_its_line():
    """ben's softmax stub was two items: the visible tests' (with its line) and the hidden
    tests' (without)."""
    tests = [
        failed("a", "scale", VISIBLE_STUB),
        failed("b", "scale", VISIBLE_STUB),
        failed("h1", "scale", HIDDEN_STUB, hidden=True),
        failed("h2", "scale", HIDDEN_STUB, hidden=True),
        failed("h3", "scale", HIDDEN_STUB, hidden=True),
    ]
    assert what_to_fix(tests) == [
        f"- **Scaling**: {VISIBLE_STUB} Found by 5 tests:",
        "  - a",
        "  - b",
        "  - 3 hidden tests",
    ]


def test_a_hidden_message_joins_only_the_visible_one_of_its_file_and_component():
    other_file = NOT_IMPLEMENTED.format(call="The call scale(...)", where=" at assignments/x.py")
    tests = [
        failed("a", "scale", VISIBLE_STUB),
        failed("h1", "scale", other_file, hidden=True),
        failed("h2", "normalize", HIDDEN_STUB, hidden=True),
    ]
    assert what_to_fix(tests) == [
        f"- **Scaling**: {VISIBLE_STUB} Found by 1 test:",
        "  - a",
        f"- **Scaling**: {other_file} Found by 1 test:",
        "  - 1 hidden test",
        f"- **Normalizing**: {HIDDEN_STUB} Found by 1 test:",
        "  - 1 hidden test",
    ]


ORDER = (
    "The weights of Scaler({d}, 4)(x ({b}, 5, {d})) returned shape ({h}, {b}, 5); expected "
    "({b}, {h}, 5). The sizes are right but in another order."
)
RAISED = (
    "Scaler.forward(...) raised RuntimeError at assignments/toy/scale.py:{line} in forward: {e}"
)


def test_alike_form_leaves_out_what_changes_with_the_inputs_and_keeps_a_learner_line():
    assert alike_form(ORDER.format(d=16, b=2, h=4)) == alike_form(ORDER.format(d=8, b=1, h=2))
    assert alike_form("200 of 200 entries differ (atol=1e-05).") == alike_form(
        "The output: 1 of 20 entries differs (atol=1e-10)."
    ).removeprefix("The output: ")
    assert alike_form("all of its entries differ") == alike_form("some of its entries differ")
    assert alike_form(RAISED.format(line=57, e="size 3")) == alike_form(
        RAISED.format(line=57, e="size 6")
    )
    assert alike_form(RAISED.format(line=57, e="x")) != alike_form(RAISED.format(line=47, e="x"))
    assert alike_form("in t101 and toy2") == "in t101 and toy2"


def test_one_check_failing_on_other_inputs_is_one_item_with_its_first_message():
    """einops_docs (a real-world multi-head attention) had ten items that each said its weights
    came as (h, B, L, S), on other sizes; and two for one line raising on other sizes."""
    first, second = ORDER.format(d=16, b=2, h=4), ORDER.format(d=8, b=3, h=2)
    raised = [RAISED.format(line=57, e=f"got size {n}.") for n in (3, 6)]
    other_line = RAISED.format(line=47, e="got size 3.")
    tests = [
        failed("a", "scale", first),
        failed("b", "scale", raised[0]),
        failed("c", "scale", second),
        failed("d", "scale", raised[1]),
        failed("e", "scale", other_line),
        failed("f", "normalize", second),
    ]
    assert what_to_fix(tests) == [
        f"- **Scaling**: {first} Found by 2 tests:",
        "  - a",
        "  - c",
        f"- **Scaling**: {raised[0]} Found by 2 tests:",
        "  - b",
        "  - d",
        f"- **Scaling**: {other_line} Found by 1 test:",
        "  - e",
        f"- **Normalizing**: {second} Found by 1 test:",
        "  - f",
    ]


def test_every_item_is_headed_by_its_component_alone_and_lists_its_tests():
    """Headings were three forms: the component, "component: a test's name", "component: a
    hidden test"."""
    tests = [
        failed("values", "scale", "Off by one."),
        failed("secret", "normalize", "Hid.", hidden=True),
    ]
    assert what_to_fix(tests) == [
        "- **Scaling**: Off by one. Found by 1 test:",
        "  - values",
        "- **Normalizing**: Hid. Found by 1 test:",
        "  - 1 hidden test",
    ]


def test_an_unended_exception_text_ends_its_sentence_before_the_tests():
    """einops_docs read "... at non-singleton dimension 2 Found by 1 test:"."""
    raised = RAISED.format(line=47, e="must match at non-singleton dimension 2")
    assert what_to_fix([failed("a", "scale", raised)])[0] == (
        f"- **Scaling**: {raised}. Found by 1 test:"
    )


def test_a_call_not_run_again_after_a_time_out_is_that_time_outs_item():
    """kofi's one infinite loop was two items, 'did not finish' and 'was not run again'; as
    one, it says how many of its tests only repeated it (not that 5 ran out of time)."""
    call = "Scaler.forward(...)"
    timeout = TIMEOUT.format(call=call, seconds=10)
    again = NOT_RUN_AFTER_HANGS.format(call=call, seconds=10, count=2)
    tests = [
        failed("a", "scale", timeout, kind="timeout"),
        failed("b", "scale", timeout, kind="timeout"),
        failed("c", "scale", again, kind="timeout"),
        failed("h1", "scale", again, hidden=True, kind="timeout"),
        failed("h2", "scale", again, hidden=True, kind="timeout"),
    ]
    assert what_to_fix(tests) == [
        f"- **Scaling**: {timeout} Found by 5 tests (3 of them not run again after it):",
        "  - a",
        "  - b",
        "  - c",
        "  - 2 hidden tests",
    ]


@pytest.mark.parametrize("other_call", [False, True], ids=["same_call", "other_call"])
def test_a_call_not_run_again_after_crashes_joins_the_crash_of_that_call_only(other_call):
    crash = CRASH_SIGNAL.format(call="Scaler.forward(...)", signal="SIGKILL", why="")
    again_call = "Scaler.other(...)" if other_call else "Scaler.forward(...)"
    again = NOT_RUN_AFTER_CRASHES.format(call=again_call, count=2)
    lines = what_to_fix(
        [failed("a", "scale", crash, kind="crash"), failed("b", "scale", again, kind="crash")]
    )
    if other_call:
        assert lines == [
            f"- **Scaling**: {crash} Found by 1 test:",
            "  - a",
            f"- **Scaling**: {again} Found by 1 test:",
            "  - b",
        ]
    else:
        seen = "Found by 2 tests (1 of them not run again after it):"
        assert lines == [f"- **Scaling**: {crash} {seen}", "  - a", "  - b"]


def test_learner_text_in_a_stops_words_joins_no_real_stop_of_its_call():
    """A ValueError telling "Scaler.forward(...) was not run again: ..." (or the crash's own
    sentence, word for word) is not counted among the tests not run again after a real crash."""
    crash = CRASH_SIGNAL.format(call="Scaler.forward(...)", signal="SIGKILL", why="")
    again = NOT_RUN_AFTER_CRASHES.format(call="Scaler.forward(...)", count=2)
    lines = what_to_fix(
        [
            failed("a", "scale", crash, kind="crash"),
            failed("b", "scale", again, kind="exception"),
            failed("c", "scale", crash, kind="exception"),
        ]
    )
    assert lines == [
        f"- **Scaling**: {crash} Found by 1 test:",
        "  - a",
        f"- **Scaling**: {again} Found by 1 test:",
        "  - b",
        f"- **Scaling**: {crash} Found by 1 test:",
        "  - c",
    ]


def test_a_forbidden_use_is_told_once_without_the_tests_it_zeroed():
    """lena's forbidden use was told in "What to fix" with all 26 test names (they checked
    other things and failed only for the use), then again under "Forbidden library calls"."""
    config = load_course(TOY / "course.toml")
    tests = [TestResult(name, f"t::{name}", "normalize") for name in ("n1", "n2", "n3")]
    records = [("numpy.linalg.norm", "toypkg/normalize.py", 3)]
    result = build_grade(
        config, tests, submission="s", seed=0, hidden_included=True, forbidden=records
    )
    sentence = result.forbidden[0].sentence
    text = summary_md.render_summary(result)
    assert text.split(summary_md.TO_FIX_NOTE, 1)[1].strip().splitlines() == [
        f"- **{config.components[1].title}**: {sentence} " + summary_md.ZEROED.format(count=3)
    ]
    assert summary_md.FORBIDDEN_HEADING not in text


def test_a_forbidden_use_no_test_told_keeps_its_section():
    config = load_course(TOY / "course.toml")
    tests = [TestResult("s1", "t::s1", "scale")]
    records = [("numpy.linalg.norm", "helpers.py", 2)]  # no component's file: zeroes nothing
    result = build_grade(
        config, tests, submission="s", seed=0, hidden_included=True, forbidden=records
    )
    text = summary_md.render_summary(result)
    assert text.split(f"{summary_md.FORBIDDEN_HEADING}\n\n", 1)[1].strip() == (
        f"- {result.forbidden[0].sentence}"
    )


def test_a_time_out_stopped_in_a_visible_and_a_hidden_test_is_one_item_with_its_line():
    """The sentence naming where a time-out was stopped has the line in a visible test and the
    file alone in a hidden one: the call's visible and hidden time-outs were two items."""
    timeout = TIMEOUT.format(call="The call scale(...)", seconds=1)
    visible = f"{timeout} When it was stopped, it was running assignments/toy/scale.py:17 in scale."
    no_name = f"{timeout} When it was stopped, it was running assignments/toy/scale.py:17."
    hidden = f"{timeout} When it was stopped, it was running assignments/toy/scale.py."
    assert hidden_form(visible) == hidden_form(no_name) == hidden
    tests = [
        failed("a", "scale", visible, kind="timeout"),
        failed("h1", "scale", hidden, hidden=True, kind="timeout"),
    ]
    assert what_to_fix(tests) == [
        f"- **Scaling**: {visible} Found by 2 tests:",
        "  - a",
        "  - 1 hidden test",
    ]


def test_one_loop_stopped_at_two_of_its_lines_is_one_item():
    """Where a time-out is stopped is a sample of its loop: `while True:` in one test, its body
    in the next, were two items."""
    timeout = TIMEOUT.format(call="The call scale(...)", seconds=1)
    stopped = [
        f"{timeout} When it was stopped, it was running assignments/toy/scale.py:{n} in scale."
        for n in (6, 7)
    ]
    tests = [
        failed("a", "scale", stopped[0], kind="timeout"),
        failed("b", "scale", stopped[1], kind="timeout"),
    ]
    assert what_to_fix(tests) == [
        f"- **Scaling**: {stopped[0]} Found by 2 tests:",
        "  - a",
        "  - b",
    ]


def test_mistakes_a_failure_could_not_tell_apart_are_one_item_told_together():
    added = "[scale/adds-factor] You added the factor. Read: course notes, Scaling."
    other = "[scale/accepts-infinity] You let infinity through. Read: course notes, Limits."
    both = (
        "Known mistakes in scale(x), which these inputs cannot tell apart (each gives this "
        f"result): {added} {other}"
    )
    lines = what_to_fix([failed("a", "scale", both), failed("b", "scale", both)])
    assert lines[0] == (
        "- **Scaling**: One of two known mistakes that give this same result: "
        f"{added} {other} Found by 2 tests:"
    )
