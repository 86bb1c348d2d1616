"""What the grader put back in a learner's notebook, said to the learner (trusted side).

nbgrader restores a test cell's source (OverwriteCells), our RestoreCellOrder puts back a cell
the learner deleted and moves a cell the learner moved back to its place (preprocessors.py).
Both are right, but silent: a learner who deleted a test cell saw it graded all the same, with
no word. Here the learner's submitted notebook is compared with the course's source notebook
(both read as data) and each such change becomes a sentence of the grade's notes.

Moved: the course's cells the learner kept are in another order than the source's; the cells
outside a longest run in the source's order are the ones that moved (the fewest that explain
the new order). Only code cells are named (a deleted heading changes nothing graded).
"""

from __future__ import annotations

import json
from bisect import bisect_left
from pathlib import Path

from autograder.notebook.cell_errors import grade_id_of
from autograder.notebook.course import NotebookAssignment

MISSING = (
    "Your notebook had no {cells}; the grader put back the course's version{each}, where it "
    "belongs, and ran it."
)
MOVED = (
    "In your notebook, the {cells} {were} not where the course put {them}; the grader ran "
    "{them} in {their} place, after the code {they} {need}."
)
MAX_BYTES = 20 * 1024 * 1024


def restored_notes(assignment: NotebookAssignment, submitted: Path) -> list[str]:
    """The sentences for the code cells of the course missing from, or moved in, the learner's
    notebook at `submitted`; [] when it cannot be read (the grade says why elsewhere)."""
    try:
        if Path(submitted).stat().st_size > MAX_BYTES:
            return []
        document = json.loads(Path(submitted).read_text(encoding="utf-8"))
        source = json.loads(assignment.source_notebook.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        return []
    order, kinds = _course_cells(source)
    kept: list[str] = []
    for cell in cells:
        grade_id = grade_id_of(cell) if isinstance(cell, dict) else None
        if grade_id in kinds and grade_id not in kept:  # a later copy is a plain cell
            kept.append(grade_id)
    missing = [g for g in order if g not in kept and kinds[g]]
    moved = [g for g in _out_of_order(kept, order) if kinds[g]]
    notes = []
    if missing:
        each = "" if len(missing) == 1 else " of each"
        notes.append(MISSING.format(cells=_named(missing, kinds), each=each))
    if moved:
        one = len(moved) == 1
        notes.append(
            MOVED.format(
                cells=_named(moved, kinds),
                were="was" if one else "were",
                them="it" if one else "them",
                their="its" if one else "their",
                they="it" if one else "they",
                need="needs" if one else "need",
            )
        )
    return notes


def _course_cells(source: dict) -> tuple[list[str], dict[str, str]]:
    """The source notebook's grade_ids in order, and for each what a learner calls it ("" for
    a Markdown cell, which is not named)."""
    order, kinds = [], {}
    for cell in source.get("cells", []):
        grade_id = grade_id_of(cell)
        if grade_id is None or grade_id in kinds:
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        order.append(grade_id)
        if cell.get("cell_type") != "code":
            kinds[grade_id] = ""
        elif meta.get("grade") and not meta.get("solution"):
            kinds[grade_id] = "test cell"
        elif meta.get("solution"):
            kinds[grade_id] = "answer cell"
        else:
            kinds[grade_id] = "read-only cell"
    return order, kinds


def _named(grade_ids: list[str], kinds: dict[str, str]) -> str:
    """'test cell test_lookup', or 'test cells test_lookup and test_bank, read-only cell x'."""
    groups: dict[str, list[str]] = {}
    for grade_id in grade_ids:
        groups.setdefault(kinds[grade_id], []).append(grade_id)
    parts = []
    for kind, ids in groups.items():
        listed = ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " and " + ids[-1]
        parts.append(f"{kind}{'' if len(ids) == 1 else 's'} {listed}")
    return ", ".join(parts)


def _out_of_order(kept: list[str], order: list[str]) -> list[str]:
    """The cells of `kept` outside one longest subsequence that follows `order`."""
    position = {g: i for i, g in enumerate(order)}
    ranks = [position[g] for g in kept]
    tails: list[int] = []  # tails[k]: index in ranks of the end of the best run of length k+1
    previous = [-1] * len(ranks)
    for i, rank in enumerate(ranks):
        k = bisect_left([ranks[t] for t in tails], rank)
        previous[i] = tails[k - 1] if k else -1
        tails[k : k + 1] = [i]
    in_order, i = set(), tails[-1] if tails else -1
    while i >= 0:
        in_order.add(i)
        i = previous[i]
    return [g for i, g in enumerate(kept) if i not in in_order]
