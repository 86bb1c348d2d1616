"""The terminal's one-line problems: shortened between sentences, keeping where it happened."""

from pathlib import Path

from autograder.config import load_course
from autograder.learner_text import first_sentence_and_place, with_place
from autograder.reports.terminal import PROBLEM_LIMIT, first_problems, shortened
from autograder.results import TestResult, build_grade

TOY = Path(__file__).parent / "toy_course"
FIRST = (
    "The course asks you to build this yourself; torch.nn.MultiheadAttention is a library "
    "implementation of it, so this component scores zero."
)
MIDDLE = (
    "A sentence in the middle that says more about it, at some length, so that the whole "
    "message no longer fits on one line of the terminal."
)
PLACE = "It was called in assignments/t101/multi_head_attention.py at line 25."


def test_a_long_message_keeps_its_first_sentence_and_the_one_that_names_the_line():
    text = f"{FIRST} {MIDDLE} {PLACE}"
    assert len(text) > PROBLEM_LIMIT
    assert shortened(text) == f"{FIRST} … {PLACE}"


def test_a_message_that_fits_is_kept_whole_on_one_line():
    assert shortened(f"{FIRST}\n{PLACE}") == f"{FIRST} {PLACE}"


def test_the_sentences_that_fit_are_kept_in_order_and_the_cut_is_after_a_whole_one():
    tail = " ".join(f"Detail number {i} of the problem." for i in range(20))
    line = shortened(f"{FIRST} {PLACE} {tail}")
    kept = " ".join(f"Detail number {i} of the problem." for i in range(2))
    assert line == f"{FIRST} {PLACE} {kept} …"
    assert len(line) <= PROBLEM_LIMIT


def test_a_first_sentence_too_long_alone_is_cut_at_a_word_and_the_place_follows():
    words = " ".join(f"word{i:03d}" for i in range(60))  # 479 characters, one sentence
    line = shortened(f"{words}. {PLACE}")
    assert line.endswith(f"… (continued in summary.md) {PLACE}")
    assert len(line) <= PROBLEM_LIMIT
    kept = line.removesuffix(f"… (continued in summary.md) {PLACE}").split()
    assert kept == [f"word{i:03d}" for i in range(len(kept))] and len(kept) == 25


JUN = (
    "[encoder/shared-layer] Your Encoder puts one EncoderLayer object into self.layers "
    "num_layers times, so every layer shares one set of weights; create a new one for each "
    "position: nn.ModuleList([EncoderLayer(...) for _ in range(num_layers)]). Look at "
    "assignments/t101/encoder.py:27, the line that makes the layers."
)


def test_a_first_sentence_that_fits_alone_keeps_its_fix_and_its_place_follows():
    """jun's terminal line cut the fix, nn.ModuleList([...]), to make room for "Look at ...":
    a first sentence that fits the limit alone is kept whole, the place after it."""
    assert len(JUN) > PROBLEM_LIMIT
    assert shortened(JUN) == JUN


def test_a_fix_in_code_is_not_cut_in_half_and_the_line_says_where_it_continues():
    """jun's terminal line once read "nn.ModuleList([EncoderLayer(...) for _ in… Look at
    ...": a first sentence too long alone is cut outside its brackets."""
    first, place = JUN.split(" Look at ")
    assert shortened(f"{first} Look at {place}", 200) == (
        "[encoder/shared-layer] Your Encoder puts one EncoderLayer object into self.layers "
        "num_layers times… (continued in summary.md) Look at assignments/t101/encoder.py:27, "
        "the line that makes the layers."
    )
    code = "Write it as `" + " ".join(["x = layer(x, mask)"] * 20) + "`."  # 390 characters
    assert shortened(f"{code} {PLACE}") == f"Write it as… (continued in summary.md) {PLACE}"


def test_a_long_reason_for_not_grading_continues_in_the_line_grade_printed_first():
    """An ungraded submission has no summary.md: its overview row points to the full reason
    that `autograder grade` printed before the overview."""
    from rich.console import Console

    from autograder.reports.terminal import print_class
    from autograder.results import Ungraded

    reason = "Your package folder " + "very/" * 80 + "deep could not be read."
    console = Console(record=True, width=400, color_system=None)
    print_class([Ungraded("gone", reason)], console)
    text = console.export_text()
    assert "… (continued in the line above that says it was not graded)" in text
    assert "summary.md" not in text


def test_a_sentence_end_inside_brackets_does_not_end_the_sentence():
    """A fix with "e.g. x" in parentheses is one sentence: dropping what follows "e.g." would
    leave its parenthesis open."""
    fix = "Scale the scores (e.g. divide them by sqrt(d_k), the width of each key) first."
    assert shortened(f"{fix} {MIDDLE} {PLACE}", 200) == f"{fix} … {PLACE}"
    assert shortened(f"{fix} {PLACE}", 60) == "Scale the scores… (continued in summary.md)"


def test_the_terminal_line_of_a_forbidden_call_names_its_file_and_line():
    config = load_course(TOY / "course.toml")
    tests = [
        TestResult("s", "t::s", "scale", status="passed"),
        TestResult("t", "t::t", "normalize", status="failed", message="Off."),
    ]
    forbidden = [("numpy.linalg.norm", "normalize.py", 3)]
    graded = build_grade(
        config, tests, submission="s", seed=0, hidden_included=False, forbidden=forbidden
    )
    (line,) = [line.plain for line in first_problems(graded)]
    assert line.startswith("Normalizing: Write the norm yourself;")
    assert line.endswith("It was called in toypkg/normalize.py at line 3.")


def test_a_components_problem_keeps_the_sentence_that_says_where_it_was_stopped():
    """kofi's table row and terminal line said his forward did not finish, not where: the
    problem was the failure's first sentence only."""
    timeout = (
        "Scaler.forward(...) did not finish within 10 s of computing. Look for an infinite "
        "loop. When it was stopped, it was running toypkg/scale.py:17 in forward."
    )
    config = load_course(TOY / "course.toml")
    tests = [TestResult("a", "t::a", "scale", message=timeout)]
    result = build_grade(config, tests, submission="s", seed=0, hidden_included=False)
    assert result.components[0].problem == (
        "Scaler.forward(...) did not finish within 10 s of computing. When it was stopped, it "
        "was running toypkg/scale.py:17 in forward."
    )
    located = "f(...) raised ValueError at toypkg/scale.py:3 in f: bad. It was line 4 too."
    assert (
        first_sentence_and_place(located)
        == "f(...) raised ValueError at toypkg/scale.py:3 in f: bad."
    )


def test_a_known_mistakes_problem_keeps_its_look_at_line():
    """dara's table row and terminal line named her mistake but not the line of it, which the
    test's message gives after the mistake's sentence."""
    sentence = "[scale/no-shift] The scale is not shifted."
    message = (
        f"Known mistake in scale(x): {sentence} Look at toypkg/scale.py:7, the line that "
        "scales. Read: course notes, Class 06."
    )
    config = load_course(TOY / "course.toml")
    tests = [TestResult("a", "t::a", "scale", message=message)]
    result = build_grade(config, tests, submission="s", seed=0, hidden_included=False)
    assert result.components[0].problem == (
        f"{sentence} Look at toypkg/scale.py:7, the line that scales."
    )
    assert with_place(sentence, "no such sentence here") == sentence
