"""Every report file of one submission, written from its GradeResult.

A report format is a module of this package with a FILE_NAME and a writer taking
(result, path); listing it in WRITERS below is all `grade`, `grade-class` and `check` need to
write it for every learner.
"""

from __future__ import annotations

from pathlib import Path

from autograder.reports import junit, results_json, summary_md
from autograder.results import GradeResult

#: (file name, writer) of each report, in the order they are written
WRITERS = (
    (results_json.FILE_NAME, results_json.write_results_json),
    (summary_md.FILE_NAME, summary_md.write_summary),
    (junit.FILE_NAME, junit.write_junit),
)
REPORT_FILES = tuple(name for name, _ in WRITERS)


def write_reports(result: GradeResult, out_dir: Path) -> None:
    """results.json, summary.md and junit.xml of ``result`` in out_dir, each atomically."""
    for name, write in WRITERS:
        write(result, out_dir / name)
