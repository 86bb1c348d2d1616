"""results.json in Gradescope's schema (see GradeResult.to_gradescope)."""

from __future__ import annotations

import json
from pathlib import Path

from autograder.reports.files import atomic_write_text
from autograder.results import GradeResult

FILE_NAME = "results.json"


def render_results_json(result: GradeResult) -> str:
    """The JSON text; refuses NaN or infinity (Gradescope cannot read them)."""
    return json.dumps(result.to_gradescope(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_results_json(result: GradeResult, path: Path) -> Path:
    """Write results.json atomically."""
    return atomic_write_text(path, render_results_json(result))
