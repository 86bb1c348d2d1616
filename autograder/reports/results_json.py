"""results.json in Gradescope's schema (see GradeResult.to_gradescope), written and read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from autograder.atomic_files import atomic_write_text
from autograder.results import GradeResult

FILE_NAME = "results.json"

NOT_READABLE = "The results file {path} could not be read ({error})."
NOT_JSON = "The results file {path} is not JSON ({error}); grade this submission again."
NOT_RESULTS = (
    "The results file {path} holds {what}, not results.json's object with a list of tests; "
    "grade this submission again."
)


class ResultsFileError(ValueError):
    """A results.json that cannot be read back; the message is one sentence naming it."""


def render_results_json(result: GradeResult) -> str:
    """The JSON text; refuses NaN or infinity (Gradescope cannot read them)."""
    return json.dumps(result.to_gradescope(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_results_json(result: GradeResult, path: Path) -> Path:
    """Write results.json atomically."""
    return atomic_write_text(path, render_results_json(result))


def read_results_json(path: Path) -> dict[str, Any]:
    """The results.json at path as a dict (its "tests" a list of dicts, its "extra_data" a
    dict, when there). ResultsFileError, a sentence naming the file, when it is missing or
    unreadable, not UTF-8 JSON, or not of that shape."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ResultsFileError(NOT_READABLE.format(path=path, error=error.strerror)) from None
    except ValueError as error:  # UnicodeDecodeError and json.JSONDecodeError
        raise ResultsFileError(NOT_JSON.format(path=path, error=error)) from None
    what = _not_results(document)
    if what:
        raise ResultsFileError(NOT_RESULTS.format(path=path, what=what))
    return document


def _not_results(document: object) -> str:
    """What the document holds instead of results.json's shape ("" when it has that shape)."""
    if not isinstance(document, dict):
        return f"a JSON {type(document).__name__}"
    tests = document.get("tests", [])
    if not isinstance(tests, list) or not all(isinstance(test, dict) for test in tests):
        return '"tests" that are not a list of objects'
    if not isinstance(document.get("extra_data", {}), dict):
        return 'an "extra_data" that is not an object'
    return ""
