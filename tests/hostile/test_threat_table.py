"""SECURITY.md's threat table names a proof for each attack: every one it names exists.

A proof is a corpus case (`steal_references`, a name in tests/hostile/cases.py), a test file
(`tests/hostile/test_links.py`), or a test in one (`path::test`; `::test` is in the file named
before it in the same cell; a bare file name is under tests/). A renamed or removed test leaves
the table pointing at nothing, and fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.hostile.cases import CASES

ROOT = Path(__file__).resolve().parents[2]
TABLE_START, TABLE_END = "## Threats, defences, proofs", "### What a hidden test still tells"
PROOF_COLUMN = 2  # Attack | Defence | Proof | What remains possible


def proof_cells() -> list[tuple[str, str]]:
    """(attack, proof cell) of each row of the threat table."""
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    table = text[text.index(TABLE_START) : text.index(TABLE_END)]
    rows = [line for line in table.splitlines() if line.startswith("| **")]
    cells = [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]
    assert all(len(row) == 4 for row in cells), [row[0] for row in cells if len(row) != 4]
    return [(row[0], row[PROOF_COLUMN]) for row in cells]


def proof_file(name: str) -> Path | None:
    """The test file a proof names: a path from the repository root, or a name under tests/."""
    if (ROOT / name).is_file():
        return ROOT / name
    found = sorted((ROOT / "tests").rglob(Path(name).name))
    return found[0] if len(found) == 1 else None


def functions_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def missing_proofs(attack: str, cell: str) -> list[str]:
    missing, current = [], None
    for token in re.findall(r"`([^`]+)`", cell):
        file_part, _, test = token.partition("::")
        if file_part.endswith(".py"):
            current = proof_file(file_part)
            if current is None:
                missing.append(f"{attack}: no file {file_part}")
                continue
        elif not token.startswith("::"):
            if re.fullmatch(r"[a-z][a-z0-9_]*", token) and token not in CASES:
                missing.append(f"{attack}: no corpus case {token}")
            continue
        if test and (current is None or test not in functions_in(current)):
            missing.append(f"{attack}: no test {test} in {current}")
    return missing


def test_every_attack_has_a_proof_and_every_proof_exists():
    cells = proof_cells()
    assert len(cells) >= 20  # the table was read
    assert all(re.search(r"`[^`]+`", cell) for _, cell in cells), "an attack without a proof"
    missing = [gap for attack, cell in cells for gap in missing_proofs(attack, cell)]
    assert missing == []


def test_a_proof_that_is_not_there_is_found():
    assert missing_proofs("x", "`tests/hostile/test_links.py::test_no_such_thing`") == [
        f"x: no test test_no_such_thing in {ROOT / 'tests/hostile/test_links.py'}"
    ]
    assert missing_proofs("x", "`no_such_case`; `test_gone.py`") == [
        "x: no corpus case no_such_case",
        "x: no file test_gone.py",
    ]
