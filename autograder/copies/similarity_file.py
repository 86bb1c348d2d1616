"""What the class report says of the similarity check: read back from DIR/similarity.csv.

The class report (gradebook/report_build.py) links DIR/similarity.html and gives each learner
a cell: their most similar classmate on the whole package (`all`), the similarity, and
"flagged" when that pair stood out from the class. Nothing when `autograder similarity` has
not run on DIR; a sentence naming the learners graded after it when it is out of date.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from autograder.learner_text import spreadsheet_row

CSV_FILE = "similarity.csv"
HTML_FILE = "similarity.html"
STAMP_FILE = ".similarity.json"  # which records the check read: their learner and graded_at
CSV_COLUMNS = ("learner_a", "learner_b", "component", "similarity", "flagged")
WHOLE = "all"  # the component of the whole package's rows
FLAGGED = "yes"
REPORT_NOTE = (
    "Similarity check (`autograder similarity`): {flagged} of {pairs} pairs of learners stand "
    "out from the class on the whole package; {page} shows the flagged pairs side by side."
)
OUT_OF_DATE = (
    "Learners graded after the similarity check, so not in it or not as graded now: {who}; run "
    "`autograder similarity` again."
)
CELL = "{similarity:.2f} with {other}"
CELL_FLAGGED = CELL + " (flagged)"


@dataclass
class ClassSimilarity:
    """The report's similarity sentence, the page to link ("" without a check) and each
    learner's cell."""

    note: str = ""
    page: str = ""
    cells: dict[str, str] = field(default_factory=dict)


def class_similarity(out: Path) -> ClassSimilarity:
    """The similarity check's summary for the class report of out."""
    rows = read_rows(Path(out) / CSV_FILE)
    if rows is None:
        return ClassSimilarity()
    whole = [row for row in rows if row["component"] == WHOLE]
    flagged = sum(row["flagged"] == FLAGGED for row in whole)
    note = REPORT_NOTE.format(flagged=flagged, pairs=len(whole), page=HTML_FILE)
    stale = out_of_date(Path(out))
    if stale:
        note += " " + OUT_OF_DATE.format(who=", ".join(stale))
    return ClassSimilarity(note, HTML_FILE, _cells(whole))


def _cells(whole: list[dict[str, str]]) -> dict[str, str]:
    best: dict[str, tuple[float, str, bool]] = {}
    for row in whole:
        value, flagged = float(row["similarity"]), row["flagged"] == FLAGGED
        for me, other in (
            (row["learner_a"], row["learner_b"]),
            (row["learner_b"], row["learner_a"]),
        ):
            if me not in best or (flagged, value) > (best[me][2], best[me][0]):
                best[me] = (value, other, flagged)
    return {
        learner: (CELL_FLAGGED if flagged else CELL).format(similarity=value, other=other)
        for learner, (value, other, flagged) in best.items()
    }


def read_rows(path: Path) -> list[dict[str, str]] | None:
    """similarity.csv's rows; None when there is none or it is not ours (other columns)."""
    try:
        with path.open(newline="", encoding="utf-8") as stream:
            reader = csv.DictReader(stream)
            if tuple(reader.fieldnames or ()) != CSV_COLUMNS:
                return None
            rows = [spreadsheet_row(row) for row in reader]
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    try:
        for row in rows:
            float(row["similarity"])
    except (TypeError, ValueError):
        return None
    return rows


def out_of_date(out: Path) -> list[str]:
    """The learners whose record is newer than the one the check read (or whom it did not
    read), in learner order; [] when the stamp is missing."""
    from autograder.gradebook.store import read_records

    try:
        stamp = json.loads((out / STAMP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(stamp, dict):
        return []
    return [
        record.learner
        for record in read_records(out)
        if not record.failed and stamp.get(record.learner) != record.graded_at
    ]
