"""results.json read back through one reader (reports/results_json.read_results_json), with a
sentence naming the file when it cannot be; the class report, `check` and the notebook's class
gradebook all read it there."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.gradebook import report_tests
from autograder.gradebook.store import LearnerRecord, commit_learner, staging_dir
from autograder.mistakes import verdicts
from autograder.reports import results_json
from autograder.reports.results_json import ResultsFileError, read_results_json
from autograder.results import TestResult, build_grade

TOY = Path(__file__).parent / "toy_course"


@pytest.fixture(scope="module")
def result():
    config = load_course(TOY / "course.toml")
    tests = [
        TestResult("values", "t::values", "scale", status="passed"),
        TestResult("unit", "t::unit", "normalize", message="Short."),
    ]
    return build_grade(config, tests, submission="amy", seed=0, hidden_included=True)


def test_a_written_results_json_reads_back_as_gradescopes_document(result, tmp_path) -> None:
    path = results_json.write_results_json(result, tmp_path / results_json.FILE_NAME)
    assert read_results_json(path) == result.to_gradescope()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "could not be read (No such file or directory)."),
        (b"\xff\xfe", "is not JSON ("),
        (b'{"tests": [', "is not JSON (Expecting value: line 1 column 12"),
        (b"[1, 2]", "holds a JSON list, not results.json's object with a list of tests"),
        (b'{"tests": {"a": 1}}', 'holds "tests" that are not a list of objects'),
        (b'{"tests": ["x"]}', 'holds "tests" that are not a list of objects'),
        (b'{"tests": [], "extra_data": 3}', 'holds an "extra_data" that is not an object'),
    ],
)
def test_an_unreadable_results_json_is_a_sentence_naming_the_file(tmp_path, content, said) -> None:
    path = tmp_path / results_json.FILE_NAME
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ResultsFileError) as raised:
        read_results_json(path)
    assert str(raised.value).startswith(f"The results file {path} ")
    assert said in str(raised.value)


def _graded(out: Path, learner: str, text: str) -> None:
    staged = staging_dir(out, learner)
    (staged / results_json.FILE_NAME).write_text(text, encoding="utf-8")
    commit_learner(out, staged, LearnerRecord(learner, components={"scale": 1.0}, total=1.0))


def test_check_says_which_results_file_is_broken(tmp_path) -> None:
    _graded(tmp_path, "mutant-a", "[]")
    outcome = verdicts.read_outcome(tmp_path, "mutant-a")
    path = tmp_path / "mutant-a" / results_json.FILE_NAME
    assert outcome.error == (
        f"The results file {path} holds a JSON list, not results.json's object with a list of "
        "tests; grade this submission again."
    )


def test_the_class_report_reads_a_broken_results_json_as_nothing(result, tmp_path) -> None:
    _graded(tmp_path, "amy", "{not json")
    assert report_tests.read_results(tmp_path, "amy") == {}
    _graded(tmp_path, "ben", results_json.render_results_json(result))
    assert report_tests.read_results(tmp_path, "ben")["score"] == result.score
